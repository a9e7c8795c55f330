import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually } from '@platform/testing';
import { basic, formOf } from './harness';
import { interrupt, killLaunched, npmStart, ROOT, type StartedLauncher } from './launcher';
import { platformTemplate } from './platform-template';

/**
 * The backup drill, as an operator on the chart's topology (Postgres) would run it: `npm start` with demo data,
 * licenses issued and one contract revoked, `cli backup` taken while writes go on, the database and DATA_DIR wiped,
 * `cli restore` into a fresh database, and the platform started again on it. Then every write acknowledged before
 * the backup began is there, a write in flight is wholly in or out, the tokens work, the licenses issued before
 * verify against the same CA, the CRL still lists the revoked ones, and a new license chains to the same CA.
 * (The embedded DATA_DIR's stop-backup-restore is deploy/cli/test/backup.e2e.test.ts.)
 */
const ADMIN_PASSWORD = 'drill-admin-password';
const PASSPHRASE = 'the passphrase of the backup drill';
const NOW = Math.floor(Date.now() / 1000);
const YEAR = 365 * 86400;

interface Reply {
  status: number;
  body: any;
}

async function call(base: string, method: string, route: string, auth: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: auth };
  let payload: FormData | string | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${base}api/v1${route}`, { method, headers, body: payload });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** The admin CLI as an operator runs it (`npm run cli`), a process of its own. */
function cliRun(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['deploy/cli/cli.mjs', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

/** `license.mjs verify` (the offline verifier a cluster runs): exit code and output. */
function verify(dir: string, license: string, cluster: string, crl?: string): Promise<{ code: number | null; out: string }> {
  const file = path.join(dir, `${randomUUID()}.b64`);
  fs.writeFileSync(file, license);
  return new Promise((resolve, reject) => {
    const args = [
      'deploy/cli/license.mjs',
      'verify',
      file,
      '--cluster',
      cluster,
      '--ca',
      path.join(dir, 'ca.pem'),
      ...(crl ? ['--crl', crl] : []),
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

async function waitForFile(file: string, launcher: StartedLauncher, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no demo manifest within ${timeoutMs / 1000} s:\n${launcher.logs()}`);
    if (/demo seed failed/.test(launcher.logs())) throw new Error(`the demo seed failed:\n${launcher.logs()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

describe('the backup drill: back up a running platform with demo data, wipe, restore, and find everything', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backup-drill-'));
  const archive = path.join(dir, 'platform.age');
  const passFile = path.join(dir, 'passphrase');
  // The chart keeps the seal key in a Secret: it survives the wipe, as the release's Secret would.
  const SECRETS_ENCRYPTION_KEY = randomBytes(32).toString('base64');
  let before: { url: string; drop(): Promise<void> } | undefined;
  let after: { url: string; drop(): Promise<void> } | undefined;
  let platform: StartedLauncher | undefined;
  const env = (db: string, data: string, extra: Record<string, string> = {}) => ({
    DATABASE_URL: db,
    DATA_DIR: path.join(dir, data),
    SECRETS_ENCRYPTION_KEY,
    PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOG_LEVEL: 'warn',
    ...extra,
  });

  beforeAll(() => fs.writeFileSync(passFile, `${PASSPHRASE}\n`, { mode: 0o600 }));
  afterAll(async () => {
    killLaunched();
    await before?.drop();
    await after?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write, the tokens, the CA, the licenses and the revocations', async () => {
    // The platform backed up starts on a copy of the migrated template (platform-template.ts), as empty of data as a new
    // database: the drill is about the backup, not the first migration. The restore's target stays an empty database.
    before = await createTestDatabase({ template: await platformTemplate() });
    const manifestPath = path.join(dir, 'demo.json');
    platform = await npmStart(env(before.url, 'data-a', { DEMO_SEED_MANIFEST: manifestPath }));
    const demo = await waitForFile(manifestPath, platform, 150_000);
    let base = platform.url;
    const admin = basic('admin', ADMIN_PASSWORD);
    const minted = await call(base, 'POST', '/users/admin/tokens', admin, { name: 'drill' });
    expect(minted.status).toBe(201);
    const adminToken = `token ${minted.body.sha1}`;
    const owner = basic(demo.owner.username, demo.owner.password);
    const ownerMinted = await call(base, 'POST', `/users/${demo.owner.username}/tokens`, owner, { name: 'drill' });
    expect(ownerMinted.status).toBe(201);
    const ownerToken = `token ${ownerMinted.body.sha1}`;

    // Two contracts of the demo organization, each with a cluster bound and a license issued; the second revoked.
    const licenses: { contract: number; cluster: string; license: string; revoked: boolean }[] = [];
    for (const revoked of [false, true]) {
      const created = await call(
        base,
        'POST',
        `/contracts?org=${demo.owner.org}`,
        adminToken,
        formOf({ products: 'productdb', end: String(NOW + YEAR) }),
      );
      expect(created.status).toBe(201);
      const id = created.body[0].id;
      // Clusters of the demo's inventory (a cluster it does not know would need an offline license).
      const cluster: string = demo.spokes[revoked ? 1 : 0].uid;
      const bound = await call(base, 'POST', `/contracts/${id}/clusters?org=${demo.owner.org}`, adminToken, [{ cluster }]);
      expect(bound.status).toBeLessThan(300);
      const cc = (await call(base, 'GET', `/contracts/${id}/clusters`, adminToken)).body.find((c: any) => c.cluster === cluster).id;
      const issued = await call(base, 'POST', `/contracts/${id}/clusters/${cc}/issue-license`, adminToken);
      if (issued.status !== 200) throw new Error(`issue-license: ${issued.status} ${JSON.stringify(issued.body)}`);
      licenses.push({ contract: id, cluster, license: issued.body.license, revoked });
      if (revoked) expect((await call(base, 'POST', `/contracts/${id}/revoke`, adminToken)).status).toBe(200);
    }
    const caPem = (await call(base, 'GET', '/licenses/ca', adminToken)).body as string;
    expect(caPem).toContain('BEGIN CERTIFICATE');
    fs.writeFileSync(path.join(dir, 'ca.pem'), caPem);
    const ownerOrgs = (await call(base, 'GET', '/user/orgs', ownerToken)).body.map((o: any) => o.username);
    expect(ownerOrgs).toContain(demo.owner.org);

    // Writes acknowledged before the backup began, then writes that go on while it runs.
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const name = `drill-before-${i}`;
      expect((await call(base, 'POST', '/orgs', adminToken, { username: name })).status).toBe(201);
      acknowledged.push(name);
    }
    let writing = true;
    const during: string[] = [];
    const writer = (async () => {
      for (let i = 0; writing && i < 500; i++) {
        const name = `drill-during-${i}`;
        const res = await call(base, 'POST', '/orgs', adminToken, { username: name });
        expect(res.status).toBe(201);
        during.push(name);
      }
    })();
    // The backup starts once writes are going on (or the writer failed, which fails the test at once).
    await Promise.race([writer, eventually(async () => during.length > 0, 60_000)]);
    const backedUp = await cliRun(['backup', archive, '--passphrase-file', passFile], env(before.url, 'data-a'));
    writing = false;
    await writer;
    expect(backedUp).toMatchObject({ code: 0, out: `${archive}\n` });
    expect(during.length).toBeGreaterThan(0);

    // Wipe: the platform stops, its database and DATA_DIR are gone; a fresh database and an empty DATA_DIR.
    expect(await interrupt(platform.child)).toBe(0);
    platform = undefined;
    await before.drop();
    before = undefined;
    fs.rmSync(path.join(dir, 'data-a'), { recursive: true, force: true });
    after = await createTestDatabase();
    const restored = await cliRun(['restore', archive, '--passphrase-file', passFile], env(after.url, 'data-b'));
    expect(restored.code).toBe(0);
    expect(restored.err).toContain('restored');

    platform = await npmStart(env(after.url, 'data-b'));
    base = platform.url;
    // The tokens work, as the same users.
    expect((await call(base, 'GET', '/user', adminToken)).body.login).toBe('admin');
    expect((await call(base, 'GET', '/user', ownerToken)).body.login).toBe(demo.owner.username);
    expect((await call(base, 'GET', '/user/orgs', ownerToken)).body.map((o: any) => o.username)).toEqual(ownerOrgs);
    // Every write acknowledged before the backup is there; each in flight is there or not, never half.
    for (const name of acknowledged) expect((await call(base, 'GET', `/orgs/${name}`, adminToken)).status).toBe(200);
    const present = [];
    for (const name of during) {
      const res = await call(base, 'GET', `/orgs/${name}`, adminToken);
      expect([200, 404]).toContain(res.status);
      if (res.status === 200) present.push(name);
    }
    // The snapshot is a prefix of the writes: the ones it holds are the earliest.
    expect(present).toEqual(during.slice(0, present.length));

    // The same CA; the licenses issued before verify against it; the CRL still lists the revoked one.
    expect((await call(base, 'GET', '/licenses/ca', adminToken)).body).toBe(caPem);
    const crl = await fetch(`${base}api/v1/licenses/crl`);
    expect(crl.status).toBe(200);
    const crlFile = path.join(dir, 'crl.der');
    fs.writeFileSync(crlFile, Buffer.from(await crl.arrayBuffer()));
    // Each verification is a process of its own: they run side by side, and are checked in order.
    const verified = await Promise.all(
      licenses.map(async (l) => {
        const [plain, checked] = await Promise.all([verify(dir, l.license, l.cluster), verify(dir, l.license, l.cluster, crlFile)]);
        return { plain, checked };
      }),
    );
    for (const [i, l] of licenses.entries()) {
      expect(verified[i].plain).toMatchObject({ code: 0 });
      const checked = verified[i].checked;
      if (l.revoked) expect(checked.out).toMatch(/revoked/);
      expect(checked.code === 0).toBe(!l.revoked);
    }
    // A new license chains to the same CA.
    const contract = { id: licenses.find((l) => !l.revoked)!.contract };
    const fresh: string = demo.spokes[2].uid;
    await call(base, 'POST', `/contracts/${contract.id}/clusters?org=${demo.owner.org}`, adminToken, [{ cluster: fresh }]);
    const cc = (await call(base, 'GET', `/contracts/${contract.id}/clusters`, adminToken)).body.find((c: any) => c.cluster === fresh).id;
    const issued = await call(base, 'POST', `/contracts/${contract.id}/clusters/${cc}/issue-license`, adminToken);
    expect(issued.status).toBe(200);
    expect(await verify(dir, issued.body.license, fresh, crlFile)).toMatchObject({ code: 0 });

    expect(await interrupt(platform.child)).toBe(0);
    platform = undefined;
  }, 240_000);
});
