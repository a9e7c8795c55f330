import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { eventually } from '@platform/testing';
import type { DemoManifest } from '../src/demo-seed';
import { interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';

/**
 * Quota and expiry notices on the whole platform (docs/notifications.md), as `npm start` runs it with the demo
 * data: a real SMTP server (STARTTLS, sign-in required) receives the mails and an HTTPS receiver verifies every
 * webhook's signature. The demo's quota contract mails its recipient its 100% notice once; a contract
 * over the demo hub's reported usage crosses 50, 80 and 100% one after the other (its limit lowered) and each
 * recipient gets exactly three mails; a contract ending in 7 days tells its contact and finance team; and a
 * process SIGKILLed between deciding a notice and sending it sends it exactly once after the restart.
 */

const PASSWORD = 'notices-admin-password';
const DAY = 86_400;

interface Mail {
  to: string[];
  raw: string;
}
interface Hook {
  event: string;
  body: { id: string; type: string; data: Record<string, any> };
}

function selfSigned(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost'].concat([
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
}

describe('quota and expiry notifications on the whole platform', () => {
  let dir: string;
  let env: Record<string, string>;
  let platform: StartedLauncher;
  let smtp: SMTPServer;
  let receiver: Server;
  let receiverUrl: string;
  let auth: string;
  let manifest: DemoManifest;
  let secret = '';
  /** What the demo hub reported in object-hours, as the demo quota's notice says. */
  let used = 0;
  const mails: Mail[] = [];
  const hooks: Hook[] = [];
  /** Deliveries whose signature did not verify (must stay empty). */
  const forged: string[] = [];

  const call = async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const form = body instanceof FormData;
    const res = await fetch(`${platform.url}api/v1${p}`, {
      method,
      headers: { authorization: auth, ...(body !== undefined && !form && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const formOf = (fields: Record<string, unknown>) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    return form;
  };
  const mailsTo = (address: string) => mails.filter((m) => m.to.includes(address));
  /** The Subject header, unfolded (a long one comes over several lines). */
  const subjectOf = (m: Mail) => (/^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(m.raw)?.[1] ?? '').replace(/\r?\n(?=[ \t])/g, '');
  const hooksOf = (contractId: number) => hooks.filter((h) => h.body.data.contractId === contractId);
  /** Waits a few sweeps (300 ms each) so that anything sent twice would have arrived. */
  const settle = () => new Promise((r) => setTimeout(r, 3_000));

  async function createContract(fields: Record<string, unknown>): Promise<number> {
    const form = formOf({ products: ['productdb'], ...fields });
    form.append('document', new Blob(['the signed contract']), 'contract.txt');
    const made = await call('POST', `/contracts?org=${manifest.owner.org ?? 'demo'}`, form);
    expect(made.status).toBe(201);
    return made.body[0].id;
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notices-e2e-'));
    const tls = selfSigned(dir);
    smtp = new SMTPServer({
      ...tls,
      allowInsecureAuth: false,
      onAuth: (a, _s, cb) => (a.username === 'mailer' && a.password === 's3cret' ? cb(null, { user: 'mailer' }) : cb(new Error('bad credentials'))),
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    receiver = createServer(tls, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-platform-signature'] ?? '')) ?? [];
        const want = createHmac('sha256', secret).update(`${t}.${body}`).digest();
        const ok = !!v1 && Math.abs(Date.now() / 1000 - Number(t)) < 300 && timingSafeEqual(want, Buffer.from(v1, 'hex'));
        if (ok) hooks.push({ event: String(req.headers['x-platform-event']), body: JSON.parse(body) });
        else forged.push(body);
        res.writeHead(ok ? 200 : 400).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `https://localhost:${(receiver.address() as AddressInfo).port}/platform`;

    env = {
      DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'warn',
      BILLING_ENABLED: 'true',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: PASSWORD,
      DEMO_SEED_MANIFEST: path.join(dir, 'demo.json'),
      SMTP_URL: `smtp://mailer:s3cret@127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      SMTP_FROM: 'Platform <noreply@platform.test>',
      NOTIFICATIONS_CA_CERT: tls.cert,
      // The receiver is on loopback, which webhooks may not reach otherwise.
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
      NOTICE_SWEEP_INTERVAL_MS: '300',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      // The restart must take over what the killed process left at once, not wait out its lease.
      OUTBOX_LEASE_MS: '600000',
    };
    platform = await npmStart(env);
    await eventually(async () => fs.existsSync(env.DEMO_SEED_MANIFEST), 240_000);
    manifest = JSON.parse(fs.readFileSync(env.DEMO_SEED_MANIFEST, 'utf8'));
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    auth = basic;
    auth = `token ${(await call('POST', '/users/root/tokens', { name: 'notices' })).body.sha1}`;
    const hook = await call('POST', '/admin/notifications/webhooks', { url: receiverUrl, events: ['quota.threshold', 'contract.expiring'] });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
    expect(secret).toMatch(/^whsec_/);
  }, 300_000);

  afterAll(async () => {
    if (platform) await interrupt(platform.child);
    killLaunched();
    await Promise.race([new Promise((r) => smtp?.close(r as () => void)), new Promise((r) => setTimeout(r, 1_000))]);
    receiver?.closeAllConnections();
    receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });


  it("mails the demo's used-up quota contract's recipient its 100% notice once", async () => {
    const id = manifest.quotaExceeded!.contractID;
    const owner = `${manifest.owner.username}@example.com`;
    await eventually(async () => mailsTo(owner).length > 0, 20_000);
    await settle();
    // 50 and 80% were passed at the same time (the demo's reports used it up at once): only 100% is sent.
    const quotaMails = mailsTo(owner).filter((m) => /has used \d+% of its/.test(subjectOf(m)));
    expect(quotaMails.map(subjectOf)).toEqual([`contract ${id} (Demo quota (used up)) of demo has used 100% of its object-hours quota`]);
    // With disableLicenseOnLimitReached the mail says no new license is issued until the quota is raised.
    expect(quotaMails[0].raw).toMatch(/no new license/i);
    const audit = (await call('GET', `/contracts/${id}/audit?org=demo`)).body as { event: string }[];
    const notices = audit.filter((e) => e.event.startsWith('quota-notice:'));
    expect(notices).toHaveLength(1);
    used = Number(/\(used ([\d.]+)\)/.exec(notices[0].event)?.[1]);
    expect(used).toBeGreaterThan(1);
  }, 60_000);

  it("mails each threshold once, 50, 80 and 100%, as a contract's use of the demo hub's reports crosses them", async () => {
    const demo = (await call('GET', `/contracts/${manifest.quotaExceeded!.contractID}?org=demo`)).body;
    /** The limit under which the demo hub's usage is this share of it. */
    const share = (s: number) => Math.round((used / s) * 100) / 100;
    const quota = (limit: number) => ({ enabled: true, metric: 'object-hours', limit, alertThresholds: [50, 80, 100], disableLicenseOnLimitReached: false });
    const id = await createContract({
      name: 'thresholds',
      start: String(demo.start),
      end: String(Math.floor(Date.now() / 1000) + 365 * DAY),
      quota: quota(share(0.6)),
      emails: { usageAlertClient: ['ops@thresholds.test'], usageAlertAdmin: ['billing@thresholds.test'] },
    });
    expect((await call('POST', `/contracts/${id}/clusters?org=demo`, [{ cluster: manifest.quotaExceeded!.cluster }])).status).toBe(201);
    const reached = async (n: number) => eventually(async () => mailsTo('ops@thresholds.test').length === n && mailsTo('billing@thresholds.test').length === n, 20_000);
    await reached(1);
    expect((await call('PUT', `/contracts/${id}?org=demo`, formOf({ quota: quota(share(0.85)) }))).status).toBe(200);
    await reached(2);
    expect((await call('PUT', `/contracts/${id}?org=demo`, formOf({ quota: quota(share(1.05)) }))).status).toBe(200);
    await reached(3);
    await settle();
    for (const to of ['ops@thresholds.test', 'billing@thresholds.test'])
      expect(mailsTo(to).map((m) => /has used (\d+)%/.exec(subjectOf(m))?.[1])).toEqual(['50', '80', '100']);
    // Without disableLicenseOnLimitReached, the 100% mail says licenses are still issued.
    expect(mailsTo('ops@thresholds.test')[2].raw).toMatch(/still/i);
    expect(hooksOf(id).map((h) => h.body.data.threshold)).toEqual([50, 80, 100]);
    type Line = { channel: string; contractId: number; status: string; responseCode: number; recipient: string; url: string };
    const deliveries = (await call('GET', '/admin/notifications/deliveries')).body as Line[];
    expect(deliveries.filter((d) => d.contractId === id && d.channel === 'webhook').map((d) => [d.status, d.responseCode])).toEqual([
      ['delivered', 200],
      ['delivered', 200],
      ['delivered', 200],
    ]);
    // Each recipient's mail is a line of its own, in the site's log and in the organization's (whose contract it is).
    const mailLines = async (path: string) =>
      ((await call('GET', path)).body as Line[])
        .filter((d) => d.contractId === id && d.channel === 'mail')
        .map((d) => [d.recipient, d.status, d.url])
        .sort();
    const expected = ['billing@thresholds.test', 'ops@thresholds.test'].flatMap((to) => Array.from({ length: 3 }, () => [to, 'delivered', '']));
    await eventually(async () => JSON.stringify(await mailLines('/admin/notifications/deliveries')) === JSON.stringify(expected), 10_000);
    expect(await mailLines('/orgs/demo/notifications/deliveries')).toEqual(expected);
  }, 90_000);

  it('tells the contact person and the finance team of a contract ending in 7 days, once', async () => {
    const now = Math.floor(Date.now() / 1000);
    const id = await createContract({
      name: 'ending',
      start: String(now - 300 * DAY),
      end: String(now + 7 * DAY - 3600),
      emails: { contactPerson: ['contact@ending.test'], financeTeam: ['finance@ending.test'], usageAlertClient: ['quiet@ending.test'] },
    });
    await eventually(async () => mailsTo('contact@ending.test').length === 1 && mailsTo('finance@ending.test').length === 1, 20_000);
    await settle();
    expect(mailsTo('contact@ending.test').map(subjectOf)).toEqual([`contract ${id} (ending) of demo ends in 7 days`]);
    expect(mailsTo('finance@ending.test')).toHaveLength(1);
    expect(mailsTo('quiet@ending.test')).toEqual([]);
    expect(hooksOf(id).map((h) => [h.event, h.body.data.days])).toEqual([['contract.expiring', 7]]);
  }, 60_000);

  it('sends a notice decided just before a kill -9 exactly once after the restart', async () => {
    const now = Math.floor(Date.now() / 1000);
    // It starts in a few seconds: the running platform's sweeps skip it, the next start's first sweep decides it.
    const id = await createContract({
      name: 'crash',
      start: String(now + 5),
      end: String(now + 3 * DAY),
      emails: { contactPerson: ['contact@crash.test'], financeTeam: ['finance@crash.test'] },
    });
    expect(await interrupt(platform.child)).toBe(0);
    await new Promise((r) => setTimeout(r, 6_000));
    // The fault SIGKILLs the process right after the first outbox commit: the decision with its send.
    const doomed = await npmStart({ ...env, PLATFORM_TEST_FAULT: 'outbox-after-commit' }).then(
      (p) => p.exited,
      () => 'killed before it was up',
    );
    expect(doomed).not.toBe(0);
    expect(mailsTo('contact@crash.test')).toEqual([]);

    platform = await npmStart(env);
    auth = `token ${await (async () => {
      const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
      const res = await fetch(`${platform.url}api/v1/users/root/tokens`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'after-crash' }),
      });
      return ((await res.json()) as { sha1: string }).sha1;
    })()}`;
    await eventually(async () => mailsTo('contact@crash.test').length === 1 && mailsTo('finance@crash.test').length === 1 && hooksOf(id).length === 1, 30_000);
    await settle();
    expect(mailsTo('contact@crash.test').map(subjectOf)).toEqual([`contract ${id} (crash) of demo ends in 3 days`]);
    expect(mailsTo('finance@crash.test')).toHaveLength(1);
    expect(hooksOf(id)).toHaveLength(1);
    const audit = (await call('GET', `/contracts/${id}/audit?org=demo`)).body as { event: string }[];
    expect(audit.filter((e) => e.event.startsWith('expiry-notice:'))).toHaveLength(1);
    expect(forged).toEqual([]);
  }, 180_000);
});
