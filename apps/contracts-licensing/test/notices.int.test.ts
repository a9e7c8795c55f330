import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { openDatabase, Outbox, type Database } from '@platform/db';
import { ValidationError } from '@platform/errors';
import type { contractsV1 } from '@platform/proto';
import { SecretBox } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import { ContractsStore } from '../src/contracts/contracts-store';
import type { Inventory } from '../src/contracts/inventory';
import type { UsageSource } from '../src/licenses/quota';
import { smtpMailer, type Mailer } from '../src/notices/mailer';
import { Notices } from '../src/notices/notices';
import { Webhooks } from '../src/notices/webhooks';

const ORG = 42;
const CLUSTER = '0b7d4c1e-0000-4000-8000-000000000001';
const DAY = 86_400;
const quiet = process.env.NOTICES_TEST_LOG
  ? (console as any)
  : ({ info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any);
const inventory: Inventory = {
  cluster: async () => undefined,
  clustersByUid: async () => new Map(),
  clustersOf: async () => [],
};

/** A self-signed certificate for localhost and 127.0.0.1: the SMTP server's and the webhook receiver's. */
function selfSigned(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
}

/** Retries an assertion until it holds (up to 10 s). */
async function eventually(assertion: () => unknown | Promise<unknown>): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

interface Received {
  to: string[];
  raw: string;
  secure: boolean;
}

interface Hook {
  event: string;
  body: any;
  verified: boolean;
}

describe('Notices', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let tls: { key: string; cert: string };
  let contracts: Contracts;
  let smtp: SMTPServer;
  let smtpPort: number;
  let receiver: Server;
  let receiverUrl: string;
  /** Secrets by path, as the receiver verifies with them; the status it answers by path. */
  const secrets = new Map<string, string>();
  const answer = new Map<string, number>();
  const mails: Received[] = [];
  const hooks: Hook[] = [];
  let used = 0;
  const opened: { mailer: Mailer; outbox: Outbox; webhooks: Webhooks }[] = [];
  const usage: UsageSource = { usage: async () => ({ cpuCoreHours: used, memoryGibHours: 0, storageGibHours: 0, objectHours: 0 }) };
  let mailer: Mailer;
  let webhooks: Webhooks;
  let notices: Notices;
  let outbox: Outbox;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notices-test-'));
    tls = selfSigned(dir);
    smtp = new SMTPServer({
      ...tls,
      // Credentials only over TLS: the mailer must upgrade with STARTTLS before it may sign in.
      allowInsecureAuth: false,
      onAuth: (auth, _session, cb) =>
        auth.username === 'mailer' && auth.password === 's3cret' ? cb(null, { user: 'mailer' }) : cb(new Error('bad credentials')),
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            secure: session.secure,
          });
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    receiver = createServer(tls, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const status = answer.get(req.url!) ?? 200;
        const sig = String(req.headers['x-platform-signature'] ?? '');
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig) ?? [];
        const want = createHmac('sha256', secrets.get(req.url!) ?? '')
          .update(`${t}.${body}`)
          .digest();
        const fresh = Math.abs(Date.now() / 1000 - Number(t)) < 300;
        const verified = !!v1 && fresh && timingSafeEqual(want, Buffer.from(v1, 'hex'));
        if (status === 200) hooks.push({ event: String(req.headers['x-platform-event']), body: JSON.parse(body), verified });
        res.writeHead(verified ? status : 400).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `https://localhost:${(receiver.address() as AddressInfo).port}`;

    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
    contracts = createContracts(db, { close() {} } as any, inventory, quiet);
  });

  afterAll(async () => {
    await notices?.stop();
    for (const o of opened) {
      await o.webhooks.stop();
      await o.outbox.stop();
      o.mailer.close();
    }
    await Promise.race([new Promise((r) => smtp.close(r as () => void)), new Promise((r) => setTimeout(r, 1_000))]);
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
    await db?.close();
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const store = () => ContractsStore.create(db);
  function wire(settings: { smtpUrl?: string; allowPrivate?: boolean; mailer?: Mailer; retryBaseMs?: number } = {}) {
    mailer =
      settings.mailer ??
      smtpMailer({
        SMTP_URL: settings.smtpUrl,
        SMTP_FROM: 'Platform <noreply@platform.test>',
        SMTP_REQUIRE_TLS: true,
        SMTP_TIMEOUT_MS: 10_000,
        NOTIFICATIONS_CA_CERT: tls.cert,
      });
    const box = new SecretBox(Buffer.alloc(32, 7));
    webhooks = new Webhooks(
      db,
      box,
      {
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: settings.allowPrivate ?? true,
        WEBHOOK_RETRY_BASE_MS: settings.retryBaseMs ?? 20,
        WEBHOOK_MAX_ATTEMPTS: 3,
        WEBHOOK_DISABLE_AFTER_FAILURES: 4,
        NOTIFICATIONS_CA_CERT: tls.cert,
      },
      {
        mail: (mail, ownerId, key) => notices.deliverMail(mail, ownerId, key),
        audit: (id, event, trx) => store().event(id, 'notifications', event, trx),
      },
      quiet,
    );
    notices = new Notices(db, store(), inventory, usage, mailer, webhooks, quiet);
    outbox = new Outbox(db, notices.effects(), { log: quiet, relayIntervalMs: 10 });
    opened.push({ mailer, outbox, webhooks });
    notices.useOutbox(outbox);
  }
  const smtpUrl = () => `smtp://mailer:s3cret@localhost:${smtpPort}`;

  const now = Math.floor(Date.now() / 1000);
  const contract = async (over: Partial<contractsV1.ContractFields>) =>
    (
      await contracts.lifecycle.create({
        ownerId: ORG,
        ownerLogin: 'acme',
        ownerType: 'organization',
        products: ['productdb'],
        fields: { features: ['postgres'], featuresGiven: true, ...over },
        actor: 'root',
      })
    )[0].contract;
  const endpoint = async (name: string, events: string[], ownerId = ORG) => {
    const created = await webhooks.create({
      ownerId,
      url: `${receiverUrl}/${name}`,
      events,
      createdBy: 'owner',
      notifyEmail: 'owner@acme.test',
    });
    secrets.set(`/${name}`, created.secret);
    return created;
  };
  const mailsTo = (addr: string) => mails.filter((m) => m.to.includes(addr));
  const subject = (m: Received) => /^Subject: (.*)$/m.exec(m.raw)?.[1] ?? '';

  it('a month of usage crossing 50, 80 and 100% mails each recipient exactly three times, over STARTTLS, and signs three webhook deliveries', async () => {
    wire({ smtpUrl: smtpUrl() });
    await endpoint('month', ['quota.threshold']);
    const c = await contract({
      startUnix: now - 30 * DAY,
      endUnix: now + 60 * DAY,
      emails: {
        contactPerson: [],
        signingAuthority: [],
        licenseUsers: [],
        financeTeam: [],
        usageAlertClient: ['client@acme.test'],
        usageAlertAdmin: ['Admin@platform.test'],
      },
      quota: { enabled: true, metric: 'cpu-core-hours', limit: 120, alertThresholds: [50, 80, 100], disableLicenseOnLimitReached: true },
    });
    await contracts.binding.bind(c.id, 0, [{ cluster: CLUSTER, displayName: '', tags: [] }], 'root');
    for (let day = 1; day <= 30; day++) {
      used = day * 4.5;
      await notices.sweep();
      // A redelivered report (the same usage seen again) decides nothing new.
      await notices.sweep();
    }
    // Each recipient's mail is a delivery of its own, attempted by the mail pass each send starts.
    await notices.mailsIdle();
    for (const who of ['client@acme.test', 'admin@platform.test']) {
      const got = mailsTo(who);
      expect(got.map(subject)).toEqual([
        `contract ${c.id} of acme has used 50% of its cpu-core-hours quota`,
        `contract ${c.id} of acme has used 80% of its cpu-core-hours quota`,
        `contract ${c.id} of acme has used 100% of its cpu-core-hours quota`,
      ]);
      expect(got.every((m) => m.secure)).toBe(true);
      expect(got[2].raw).toMatch(/Content-Type: text\/plain/);
      expect(got[2].raw).toMatch(/Content-Type: text\/html/);
      expect(got[2].raw).toContain('no new license is issued');
    }
    await eventually(() => expect(hooks.filter((h) => h.body.data.contractId === c.id)).toHaveLength(3));
    const mine = hooks.filter((h) => h.body.data.contractId === c.id);
    expect(mine.every((h) => h.verified && h.event === 'quota.threshold')).toBe(true);
    expect(mine.map((h) => h.body.data.threshold)).toEqual([50, 80, 100]);
    expect(mine[0].body.data).not.toHaveProperty('recipients');
    const log = await webhooks.deliveries(ORG, 10);
    expect(log.filter((d) => d.contractId === c.id).map((d) => [d.status, d.responseCode])).toEqual([
      ['delivered', 200],
      ['delivered', 200],
      ['delivered', 200],
    ]);
    expect(await webhooks.deliveries(7, 10)).toEqual([]);
    // The delivery log has a line per webhook delivery and per recipient's mail, newest first.
    const lines = (await notices.deliveries(ORG, 50)).filter((d) => d.contractId === c.id);
    expect(lines.filter((d) => d.channel === 'webhook')).toHaveLength(3);
    expect(
      lines
        .filter((d) => d.channel === 'mail')
        .map((d) => [d.recipient, d.status, d.attempts, d.lastError])
        .sort(),
    ).toEqual(['admin@platform.test', 'client@acme.test'].flatMap((who) => Array.from({ length: 3 }, () => [who, 'delivered', 1, ''])));
    expect(await notices.deliveries(7, 10)).toEqual([]);
    const audit = (await contracts.auditTrail.of(c.id, 0)).map((e) => e.event).filter((e) => e.startsWith('quota-notice'));
    expect(audit).toHaveLength(3);
  });

  /** A mailer on the test SMTP server that refuses to connect while `state.down`. */
  const flakyMailer = (state: { down: boolean }): Mailer => {
    const real = smtpMailer({
      SMTP_URL: smtpUrl(),
      SMTP_FROM: 'p@platform.test',
      SMTP_REQUIRE_TLS: true,
      SMTP_TIMEOUT_MS: 10_000,
      NOTIFICATIONS_CA_CERT: tls.cert,
    });
    return {
      send: async (m) => {
        if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:587');
        return real.send(m);
      },
      close: () => real.close(),
    };
  };
  const ending = (contact: string, finance: string, days: number) =>
    contract({
      startUnix: now - 10 * DAY,
      endUnix: now + days * DAY,
      emails: {
        contactPerson: [contact],
        signingAuthority: [],
        licenseUsers: [],
        financeTeam: [finance],
        usageAlertClient: [],
        usageAlertAdmin: [],
      },
    });

  it('SMTP down holds up no webhook: it is delivered at its first attempt, the mails are retried on their own, each a line of the delivery log', async () => {
    const smtpState = { down: true };
    // A first retry three seconds after a failure: the window the webhook must go within (wide enough that a busy
    // machine's slowness is not mistaken for the webhook waiting on the mails).
    wire({ mailer: flakyMailer(smtpState), retryBaseMs: 3_000 });
    await endpoint('smtp-down', ['contract.expiring']);
    const decidedAt = Date.now();
    const c = await ending('boss@acme.test', 'money@acme.test', 6);
    expect(await notices.sweep()).toBeGreaterThanOrEqual(1);
    // The webhook's first attempt, before any retry is due: nothing waited on the mail server.
    await webhooks.pass();
    await webhooks.idle();
    await notices.mailsIdle();
    expect(hooks.filter((h) => h.body.data.contractId === c.id).map((h) => h.body.data.days)).toEqual([6]);
    expect(mailsTo('boss@acme.test')).toHaveLength(0);
    const line = (d: { channel: string; recipient: string; url: string; status: string; attempts: number; responseCode: number }) => [
      d.channel,
      d.recipient || d.url,
      d.status,
      d.attempts,
      d.responseCode,
    ];
    const logOf = async () => (await notices.deliveries(ORG, 50)).filter((d) => d.contractId === c.id);
    let log = await logOf();
    expect(log.map(line).sort()).toEqual([
      ['mail', 'boss@acme.test', 'pending', 1, 0],
      ['mail', 'money@acme.test', 'pending', 1, 0],
      ['webhook', `${receiverUrl}/smtp-down`, 'delivered', 1, 200],
    ]);
    expect(log.filter((d) => d.channel === 'mail').every((d) => /ECONNREFUSED/.test(d.lastError) && d.event === 'contract.expiring')).toBe(
      true,
    );
    expect(Date.now() - decidedAt).toBeLessThan(3_000);
    // The mails come again after their backoff, by themselves (no outbox entry, no new send), once SMTP is back.
    smtpState.down = false;
    await eventually(async () => {
      await notices.mailPass();
      for (const who of ['boss@acme.test', 'money@acme.test'])
        expect(mailsTo(who).map(subject)).toEqual([`contract ${c.id} of acme ends in 6 days`]);
    });
    log = await logOf();
    expect(log.map(line).sort()).toEqual([
      ['mail', 'boss@acme.test', 'delivered', 2, 0],
      ['mail', 'money@acme.test', 'delivered', 2, 0],
      ['webhook', `${receiverUrl}/smtp-down`, 'delivered', 1, 200],
    ]);
    expect(log.every((d) => d.lastError === '')).toBe(true);
    // A redelivered send (the outbox applying its effect again) has the effect of one.
    const sent = await db.table('notices').where({ contract_id: c.id, sent: true });
    expect(sent).toHaveLength(1);
    await notices.send(Number(sent[0].id));
    await webhooks.pass();
    await notices.mailPass();
    await notices.mailsIdle();
    expect(mailsTo('boss@acme.test')).toHaveLength(1);
    expect(mailsTo('money@acme.test')).toHaveLength(1);
    expect(hooks.filter((h) => h.body.data.contractId === c.id)).toHaveLength(1);
    const rows = await db.table('notices').where({ contract_id: c.id }).orderBy('mark');
    expect(rows.map((r: { kind: string; mark: number; sent: boolean }) => [r.kind, r.mark, r.sent])).toEqual([
      ['contract.expiring', 7, true],
      ['contract.expiring', 30, false],
    ]);
    // The mails list shows the sent ones; a mail not sent yet is only in the delivery log.
    expect((await notices.mails(ORG, 200)).filter((m) => m.contractId === c.id).map((m) => m.status)).toEqual(['sent', 'sent']);
  });

  it('attempts the mails of several recipients at once, and the delivery log shows each failed attempt as soon as it failed', async () => {
    // A mail server holding every mail until the test answers it: which mails are being handed over, and how each ends.
    const inFlight = new Map<string, { ok: () => void; fail: (err: Error) => void }>();
    const held: Mailer = {
      send: (m) => new Promise((resolve, reject) => inFlight.set(m.to, { ok: () => resolve('sent'), fail: reject })),
      close() {},
    };
    wire({ mailer: held, retryBaseMs: 60_000 });
    const c = await contract({
      startUnix: now - 10 * DAY,
      endUnix: now + 4 * DAY,
      emails: {
        contactPerson: ['one@acme.test'],
        signingAuthority: [],
        licenseUsers: [],
        financeTeam: ['two@acme.test', 'three@acme.test'],
        usageAlertClient: [],
        usageAlertAdmin: [],
      },
    });
    const told: string[][] = [];
    const lines = async () =>
      (await notices.deliveries(ORG, 50))
        .filter((d) => d.contractId === c.id && d.channel === 'mail')
        .map((d) => [d.recipient, d.status, String(d.attempts), d.lastError])
        .sort();
    notices.start(3_600_000, async () => void told.push((await lines()).map((l) => l.join(' '))));
    try {
      // All three are being handed over together: none waits for another to end.
      await eventually(() => expect([...inFlight.keys()].sort()).toEqual(['one@acme.test', 'three@acme.test', 'two@acme.test']));
      inFlight.get('two@acme.test')!.fail(new Error('connect ETIMEDOUT 10.0.0.5:587'));
      // The failure is in the log, and the readers told of it, while the two others are still being handed over.
      const failedOnly = [
        'one@acme.test pending 0 ',
        'three@acme.test pending 0 ',
        'two@acme.test pending 1 connect ETIMEDOUT 10.0.0.5:587',
      ];
      await eventually(() => expect(told.at(-1)).toEqual(failedOnly));
      expect((await lines()).map((l) => l.join(' '))).toEqual(failedOnly);
      inFlight.get('one@acme.test')!.ok();
      inFlight.get('three@acme.test')!.ok();
      await eventually(() =>
        expect(told.at(-1)).toEqual([
          'one@acme.test delivered 1 ',
          'three@acme.test delivered 1 ',
          'two@acme.test pending 1 connect ETIMEDOUT 10.0.0.5:587',
        ]),
      );
    } finally {
      await notices.stop();
    }
  });

  it('gives a mail up after WEBHOOK_MAX_ATTEMPTS, its error in the delivery log, and tells the readers after each attempt', async () => {
    const smtpState = { down: true };
    wire({ mailer: flakyMailer(smtpState) });
    const c = await ending('gone@acme.test', 'gone-too@acme.test', 5);
    let announcedAt = 0;
    // Started as the app starts it: a sweep now, and the mails due attempted every WEBHOOK_RETRY_BASE_MS (20 ms here).
    notices.start(3_600_000, async () => {
      announcedAt = Date.now();
    });
    try {
      await eventually(async () => {
        const mine = (await notices.deliveries(ORG, 50)).filter((d) => d.contractId === c.id && d.channel === 'mail');
        expect(mine.map((d) => [d.recipient, d.status, d.attempts]).sort()).toEqual([
          ['gone-too@acme.test', 'failed', 3],
          ['gone@acme.test', 'failed', 3],
        ]);
        expect(mine.every((d) => /ECONNREFUSED/.test(d.lastError))).toBe(true);
      });
      // The readers were told after the last write.
      const last = await db
        .table('notice_mails')
        .whereIn('recipient', ['gone@acme.test', 'gone-too@acme.test'])
        .max({ at: 'updated_at' })
        .first();
      await eventually(() => expect(announcedAt).toBeGreaterThanOrEqual(new Date(last.at).getTime()));
      // Given up, it is attempted no more, even once the server is back.
      smtpState.down = false;
      await notices.mailPass();
      expect(mailsTo('gone@acme.test')).toHaveLength(0);
      expect((await notices.mails(ORG, 200)).filter((m) => m.contractId === c.id)).toEqual([]);
    } finally {
      await notices.stop();
    }
  });

  it('keeps mails when no SMTP server is set, for the console', async () => {
    wire({});
    const c = await contract({
      startUnix: now - DAY,
      endUnix: now + DAY / 2,
      emails: {
        contactPerson: ['kept@acme.test'],
        signingAuthority: [],
        licenseUsers: [],
        financeTeam: [],
        usageAlertClient: [],
        usageAlertAdmin: [],
      },
    });
    await notices.sweep();
    await notices.mailsIdle();
    const kept = (await notices.mails(ORG, 50)).filter((m) => m.contractId === c.id);
    expect(kept).toEqual([
      expect.objectContaining({ recipient: 'kept@acme.test', status: 'kept', subject: `contract ${c.id} of acme ends in 1 day` }),
    ]);
    expect(kept[0].html).toContain('<p>');
    expect(mailsTo('kept@acme.test')).toHaveLength(0);
  });

  it('refuses endpoints that are not https or that resolve to private addresses unless allowed', async () => {
    wire({ allowPrivate: false });
    const create = (url: string) => webhooks.create({ ownerId: ORG, url, events: ['quota.threshold'], createdBy: 'o', notifyEmail: '' });
    await expect(create('http://example.com/hook')).rejects.toThrow(/https/);
    await expect(create('https://127.0.0.1/hook')).rejects.toBeInstanceOf(ValidationError);
    await expect(create('https://localhost/hook')).rejects.toThrow(/loopback/);
    await expect(create('https://[::ffff:10.0.0.1]/hook')).rejects.toThrow(/private/);
    await expect(create('https://user:pw@example.com/hook')).rejects.toThrow(/credentials/);
    await expect(
      webhooks.create({ ownerId: ORG, url: `${receiverUrl}/x`, events: ['nope'], createdBy: 'o', notifyEmail: '' }),
    ).rejects.toThrow(/events/);
  });

  it('refuses a URL whose host is not a global unicast address in any spelling, and takes public ones', async () => {
    wire({ allowPrivate: false });
    const create = (url: string) => webhooks.create({ ownerId: ORG, url, events: ['quota.threshold'], createdBy: 'o', notifyEmail: '' });
    for (const url of [
      'https://[::127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[0:0:0:0:0:ffff:127.0.0.1]/hook',
      'https://[64:ff9b::7f00:1]/hook',
      'https://[64:ff9b:1::808:808]/hook',
      'https://[2002:7f00:1::1]/hook',
      'https://[2001::1]/hook',
      'https://198.18.0.1/hook',
      'https://192.0.0.8/hook',
      'https://192.0.2.1/hook',
      'https://[2001:db8::1]/hook',
      'https://240.0.0.1/hook',
      'https://255.255.255.255/hook',
      'https://224.0.0.1/hook',
      'https://2130706433/hook',
      'https://0x7f.1/hook',
      'https://127.1/hook',
    ]) {
      await expect(create(url)).rejects.toThrow(/webhooks reach only global unicast/);
    }
    // Each refusal says why, naming the field, as the API answers it (422).
    for (const [url, why] of [
      ['https://[::127.0.0.1]/hook', /IPv4-compatible/],
      ['https://[::ffff:7f00:1]/hook', /loopback/],
      ['https://[64:ff9b::127.0.0.1]/hook', /loopback/],
      ['https://[64:ff9b:1::808:808]/hook', /NAT64/],
      ['https://[2002:7f00:1::1]/hook', /6to4/],
      ['https://[2001::1]/hook', /Teredo/],
      ['https://198.18.0.1/hook', /reserved/],
      ['https://192.0.0.8/hook', /reserved/],
      ['https://2130706433/hook', /127\.0\.0\.1 is a loopback/],
      ['https://0x7f.1/hook', /127\.0\.0\.1 is a loopback/],
      ['https://localhost/hook', /localhost resolves to \S+, a loopback/],
    ] as const) {
      await expect(create(url)).rejects.toMatchObject({
        kind: 'validation',
        message: expect.stringMatching(why),
        fieldViolations: [{ field: 'url', description: expect.stringMatching(why) }],
      });
    }
    for (const url of ['https://8.8.8.8/hook', 'https://[2606:4700::1111]/hook', 'https://[64:ff9b::808:808]/hook']) {
      const made = await create(url);
      expect(made.endpoint!.url).toBe(url);
      await webhooks.delete(ORG, made.endpoint!.id);
    }
    expect((await webhooks.list(ORG)).map((e) => e.url)).not.toContain('https://8.8.8.8/hook');
  });

  it('judges the addresses again at each delivery: a host stored while allowed is not reached once it is not', async () => {
    // A receiver of its own, so no kept-alive connection of the earlier tests is reused (a pooled socket asks no lookup).
    const reached: string[] = [];
    const own = createServer(tls, (req, res) => {
      reached.push(req.url!);
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    const port = (own.address() as AddressInfo).port;
    try {
      wire({ allowPrivate: true });
      const register = (url: string) =>
        webhooks.create({ ownerId: 77, url, events: ['contract.expiring'], createdBy: 'owner', notifyEmail: '' });
      const byName = await register(`https://localhost:${port}/by-name`);
      const literal = await register(`https://127.0.0.1:${port}/literal`);
      // Only the instance that no longer allows them may send: the earlier ones' relays are stopped.
      for (const o of opened.splice(0)) {
        await o.webhooks.stop();
        await o.outbox.stop();
        o.mailer.close();
      }
      wire({ allowPrivate: false });
      const c = (
        await contracts.lifecycle.create({
          ownerId: 77,
          ownerLogin: 'other',
          ownerType: 'organization',
          products: ['productdb'],
          fields: { features: ['postgres'], featuresGiven: true, startUnix: now - DAY, endUnix: now + 20 * DAY },
          actor: 'root',
        })
      )[0].contract;
      await notices.sweep();
      await eventually(async () => {
        await webhooks.pass();
        const log = (await webhooks.deliveries(77, 50)).filter((d) => d.contractId === c.id);
        expect(Object.fromEntries(log.map((d) => [d.endpointId, [d.responseCode, d.lastError]]))).toEqual({
          [byName.endpoint!.id]: [0, expect.stringMatching(/^localhost resolves only to addresses that are not global unicast/)],
          [literal.endpoint!.id]: [0, expect.stringMatching(/^127\.0\.0\.1 is a loopback address/)],
        });
      });
      expect(reached).toEqual([]);
    } finally {
      own.closeAllConnections();
      own.close();
    }
  });

  it('retries a failing endpoint with backoff, logs each answer, and disables it with an audit event and a mail', async () => {
    wire({ smtpUrl: smtpUrl() });
    const { endpoint: e } = await endpoint('broken', ['contract.expiring']);
    answer.set('/broken', 500);
    const contractsMade = [];
    for (let i = 0; i < 2; i++)
      contractsMade.push(
        await contract({
          startUnix: now - DAY,
          endUnix: now + 20 * DAY,
          emails: { contactPerson: [], signingAuthority: [], licenseUsers: [], financeTeam: [], usageAlertClient: [], usageAlertAdmin: [] },
        }),
      );
    await notices.sweep();
    await eventually(async () => {
      await webhooks.pass();
      expect((await webhooks.list(ORG)).find((x) => x.id === e!.id)).toMatchObject({
        enabled: false,
        disabledReason: expect.stringContaining('answered 500'),
      });
    });
    const log = (await webhooks.deliveries(ORG, 50)).filter((d) => d.endpointId === e!.id);
    expect(log.length).toBe(2);
    expect(log.every((d) => d.responseCode === 500 && d.attempts >= 1)).toBe(true);
    // The mail goes once the endpoint's disabling has committed, so it may arrive a moment after the list shows it.
    await eventually(() => expect(mailsTo('owner@acme.test').map(subject)).toEqual([`Webhook endpoint disabled: ${receiverUrl}/broken`]));
    const audits = await Promise.all(contractsMade.map(async (c) => (await contracts.auditTrail.of(c.id, 0)).map((x) => x.event)));
    expect(audits.flat().filter((x) => x.startsWith('webhook-endpoint-disabled'))).toHaveLength(1);
    // Enabled again, it gets the deliveries still pending once it answers.
    answer.delete('/broken');
    await webhooks.setEnabled({ ownerId: ORG, id: e!.id, enabled: true });
    await expect(webhooks.setEnabled({ ownerId: 7, id: e!.id, enabled: true })).rejects.toThrow(/no webhook endpoint/);
  });
});
