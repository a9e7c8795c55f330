import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually, testNatsUrl } from '@platform/testing';
import { interrupt, killLaunched, npmStart } from './launcher';
import { platformTemplate } from './platform-template';

// A process killed between the commit of a change and the write of its authorization tuples
// must leave nothing that nobody can manage. The launcher runs as `npm start` does, with a test-only fault
// that SIGKILLs the process right after an outbox commit; the next start's relay completes the change. On Postgres a
// new organization's tuples commit with its rows, so there the cut change is an organization's deletion.

const PASSWORD = 'crash-admin-password';

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
    env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: PASSWORD,
      // A long lease: the restart must take over what the killed process left at once, not wait it out.
      OUTBOX_LEASE_MS: '600000',
      // No bootstrap organization: the fault must hit the organization this test creates, not that one.
      PLATFORM_ADMIN_ORG: 'none',
    };
    if (real) {
      // A copy of the migrated template (platform-template.ts), as empty of data as a new database: the crash is under
      // test here, not the first migration.
      const db = await createTestDatabase({ template: await platformTemplate() });
      drop = db.drop;
      env.DATABASE_URL = db.url;
      env.NATS_URL = await testNatsUrl();
    }
  });
  afterAll(async () => {
    killLaunched();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await drop();
  });

  it('leaves an organization its owner can use once the platform is back', async () => {
    const doomed = await npmStart({ ...env, PLATFORM_TEST_FAULT: 'outbox-after-commit' });
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const token = (await call(doomed.url, basic, 'POST', '/users/root/tokens', { name: 'crash' })).body.sha1;
    const auth = `token ${token}`;
    if (real) {
      // On Postgres the org's tuples are written by the statement that writes its rows (decision D134): no commit comes
      // before them, so the fault has nothing to cut and the org is its owner's at once. A change that still asks authz
      // after its commit is cut instead: the org's deletion, whose tuples' removal the relay completes after the restart.
      expect((await call(doomed.url, auth, 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
      expect((await call(doomed.url, auth, 'GET', '/orgs/acme')).status).toBe(200);
      await expect(call(doomed.url, auth, 'DELETE', '/orgs/acme')).rejects.toThrow();
    } else {
      // The org's rows commit, then the process dies before its tuples are written: no answer comes back.
      await expect(call(doomed.url, auth, 'POST', '/orgs', { username: 'acme' })).rejects.toThrow();
    }
    await doomed.exited;

    const back = await npmStart({ ...env, OUTBOX_RELAY_INTERVAL_MS: '200' });
    try {
      if (real) {
        // The deletion stands; the relay removes its tuples, and the name is free for an org its creator can use.
        expect((await call(back.url, auth, 'GET', '/orgs/acme')).status).toBe(404);
        expect((await call(back.url, auth, 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
      }
      // The relay writes the tuples that were owed; until then the org would answer 403 to everyone.
      await eventually(async () => (await call(back.url, auth, 'GET', '/orgs/acme')).status === 200, 15_000);
      expect((await call(back.url, auth, 'PATCH', '/orgs/acme', { description: 'after the crash' })).status).toBe(200);
      const team = await call(back.url, auth, 'POST', '/orgs/acme/teams', { name: 'ops', type: 'general' });
      expect(team.status).toBe(201);
      expect((await call(back.url, auth, 'GET', `/teams/${team.body.id}`)).status).toBe(200);
      // The name is the org's, not a stray row's: creating it again is refused as taken (Gitea's 422), deleting it works.
      expect((await call(back.url, auth, 'POST', '/orgs', { username: 'acme' })).status).toBe(422);
      expect((await call(back.url, auth, 'DELETE', '/orgs/acme')).status).toBe(204);
      expect((await call(back.url, auth, 'GET', '/orgs/acme')).status).toBe(404);
    } finally {
      expect(await interrupt(back.child)).toBe(0);
    }
  }, 120_000);

  it('keeps every acknowledged write when the server process itself is killed with SIGKILL', async () => {
    // Under a stand-in for npm, as `npm start` runs it. Killing npm would make the server stop cleanly; only
    // killing the server's own process exercises a crash, so that is the process this test kills.
    const running = await npmStart(env, { parent: true });
    expect(running.pid).not.toBe(running.child.pid);
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const auth = `token ${(await call(running.url, basic, 'POST', '/users/root/tokens', { name: 'kill-9' })).body.sha1}`;
    const names = ['k1', 'k2', 'k3', 'k4', 'k5'].map((n) => `${n}-${real ? 'pg' : 'lite'}`);
    const teams: number[] = [];
    for (const name of names) {
      expect((await call(running.url, auth, 'POST', '/orgs', { username: name })).status).toBe(201);
      const team = await call(running.url, auth, 'POST', `/orgs/${name}/teams`, { name: 'ops', type: 'general' });
      expect(team.status).toBe(201);
      teams.push(team.body.id);
    }
    process.kill(running.pid, 'SIGKILL');
    await running.exited;
    // A crash, not a shutdown: nothing said it was stopping.
    expect(running.logs()).not.toMatch(/shutting down|is gone: stopping/);

    const back = await npmStart({ ...env, OUTBOX_RELAY_INTERVAL_MS: '200' });
    try {
      for (const [i, name] of names.entries()) {
        expect((await call(back.url, auth, 'GET', `/orgs/${name}`)).status).toBe(200);
        expect((await call(back.url, auth, 'GET', `/teams/${teams[i]}`)).status).toBe(200);
      }
    } finally {
      expect(await interrupt(back.child)).toBe(0);
    }
  }, 120_000);
});
