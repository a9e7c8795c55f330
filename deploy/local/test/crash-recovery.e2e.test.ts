import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually, testNatsUrl } from '@platform/testing';

// Issue 7.2: a process killed between the commit of a change and the write of its authorization tuples
// must leave nothing that nobody can manage. The launcher runs as `npm start` does, with a test-only fault
// that SIGKILLs the process right after an outbox commit; the next start's relay completes the change.

const ROOT = path.resolve(__dirname, '../../..');
const PASSWORD = 'crash-admin-password';

/** Starts the launcher and resolves with its entry URL once it is up. */
function start(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; exited: Promise<unknown> }> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['--tsconfig', 'tsconfig.base.json', 'deploy/local/src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HTTP_PORT: '0', LOG_LEVEL: 'warn', ...env },
  });
  let out = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`platform did not start:\n${out}`)), 60_000);
    child.stdout!.on('data', () => {
      const m = /Platform is up at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, exited });
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`platform exited:\n${out}`));
    });
  });
}

async function call(url: string, auth: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}api/v1${p}`, {
    method,
    headers: { authorization: auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.each([
  ['the embedded database', false],
  ['Postgres and NATS', true],
])('a crash between a commit and its tuples, on %s', (_name, real) => {
  let dataDir: string;
  let env: Record<string, string>;
  let drop = async () => {};
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-crash-'));
    env = { DATA_DIR: dataDir, PLATFORM_ADMIN_USERNAME: 'root', PLATFORM_ADMIN_PASSWORD: PASSWORD, OUTBOX_LEASE_MS: '1000' };
    if (real) {
      const db = await createTestDatabase();
      drop = db.drop;
      env.DATABASE_URL = db.url;
      env.NATS_URL = await testNatsUrl();
    }
  });
  afterAll(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await drop();
  });

  it('leaves an organization its owner can use once the platform is back', async () => {
    const doomed = await start({ ...env, PLATFORM_TEST_FAULT: 'outbox-after-commit' });
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const token = (await call(doomed.url, basic, 'POST', '/users/root/tokens', { name: 'crash' })).body.sha1;
    const auth = `token ${token}`;
    // The org's rows commit, then the process dies before its tuples are written: no answer comes back.
    await expect(call(doomed.url, auth, 'POST', '/orgs', { username: 'acme' })).rejects.toThrow();
    await doomed.exited;

    const back = await start({ ...env, OUTBOX_RELAY_INTERVAL_MS: '200' });
    try {
      // The relay writes the tuples that were owed; until then the org would answer 403 to everyone.
      await eventually(async () => (await call(back.url, auth, 'GET', '/orgs/acme')).status === 200, 15_000);
      expect((await call(back.url, auth, 'PATCH', '/orgs/acme', { description: 'after the crash' })).status).toBe(200);
      const team = await call(back.url, auth, 'POST', '/orgs/acme/teams', { name: 'ops', type: 'general' });
      expect(team.status).toBe(201);
      expect((await call(back.url, auth, 'GET', `/teams/${team.body.id}`)).status).toBe(200);
      // The name is the org's, not a stray row's: creating it again is a conflict, deleting it works.
      expect((await call(back.url, auth, 'POST', '/orgs', { username: 'acme' })).status).toBe(409);
      expect((await call(back.url, auth, 'DELETE', '/orgs/acme')).status).toBe(204);
      expect((await call(back.url, auth, 'GET', '/orgs/acme')).status).toBe(404);
    } finally {
      back.child.kill('SIGINT');
      await back.exited;
    }
  }, 120_000);
});
