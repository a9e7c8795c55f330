import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { basic } from './harness';
import { alive, interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';

// Two platforms ran on one DATA_DIR (and lost each other's writes), and a `kill -9` of
// `npm start` left the server running. Now a second start on a DATA_DIR in use stops with exit code 78 naming
// the first, and the server stops when the process that started it is killed.

const PASSWORD = 'data-dir-admin-password';

/** Resolves once nothing answers at `url` any more, with the time that took; rejects after `ms`. */
async function stopsAnswering(url: string, ms: number): Promise<number> {
  const from = Date.now();
  for (;;) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(500) });
    } catch {
      return Date.now() - from;
    }
    if (Date.now() - from > ms) throw new Error(`${url} still answers after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('one platform per DATA_DIR, and the server goes with its launcher', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-data-dir-'));
  const env = { DATA_DIR: dataDir, PLATFORM_ADMIN_USERNAME: 'admin', PLATFORM_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' };
  let first: StartedLauncher;
  let token = '';

  const api = (launcher: StartedLauncher, method: string, p: string, body?: unknown) =>
    fetch(`${launcher.url}api/v1${p}`, {
      method,
      headers: { authorization: `token ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  afterAll(() => {
    killLaunched(); // whatever a failed test left running
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a second start on the same DATA_DIR with exit code 78 and one line naming the first, which keeps serving', async () => {
    first = await npmStart(env, { parent: true });
    const created = await fetch(`${first.url}api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic('admin', PASSWORD), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli' }),
    });
    expect(created.status).toBe(201);
    token = ((await created.json()) as { sha1: string }).sha1;
    expect((await api(first, 'POST', '/orgs', { username: 'acme' })).status).toBe(201);

    // package.json's own start script, with the console to be built in a folder of its own: the second start stops
    // before it builds or loads anything, so that folder stays empty.
    const consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-console-'));
    const second = await npmStart({ ...env, CONSOLE_DIR: consoleDir }, { script: true }).then(
      () => {
        throw new Error('the second start did not stop');
      },
      (err: Error) => err.message,
    );
    const [status, ...output] = second.split('\n');
    expect(status).toBe('platform exited with 78:');
    expect(output.join('\n').trim()).toMatch(
      new RegExp(
        `^platform: DATA_DIR ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${first.pid} \\(started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); stop it first or choose another DATA_DIR$`,
      ),
    );

    expect(fs.readdirSync(consoleDir)).toEqual([]);
    fs.rmSync(consoleDir, { recursive: true, force: true });

    expect((await api(first, 'GET', '/orgs/acme')).status).toBe(200);
  }, 60_000);

  it('ends the server within 1 s when its launcher is killed with SIGKILL under load, so a start right after gets DATA_DIR and the data', async () => {
    // Clients keep it busy on kept-alive connections, which a clean drain would go on serving for seconds.
    let loading = true;
    let lastAnswer = 0;
    const load = Array.from({ length: 8 }, async () => {
      while (loading) {
        const ok = await api(first, 'GET', '/orgs/acme').then(
          async (r) => (await r.arrayBuffer(), r.ok),
          () => false,
        );
        if (ok) lastAnswer = Date.now();
        else await new Promise((r) => setTimeout(r, 20));
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(lastAnswer).toBeGreaterThan(0);
    // The stand-in for npm, and only it (the leader of its process group, not the group).
    const killedAt = Date.now();
    process.kill(first.child.pid!, 'SIGKILL');
    let endedAfter = Infinity;
    try {
      expect(await stopsAnswering(`${first.url}api/v1/version`, 1000)).toBeLessThan(1000);
      // The server process itself is gone (it held DATA_DIR's lock), not only its port.
      while (Date.now() - killedAt < 5_000 && alive(first.pid)) await new Promise((r) => setTimeout(r, 10));
      endedAfter = Date.now() - killedAt;
    } finally {
      loading = false;
      await Promise.all(load);
    }
    expect(endedAfter).toBeLessThan(1000);
    // Not even the clients already connected got an answer after that.
    expect(lastAnswer - killedAt).toBeLessThan(1000);
    await expect(first.exited).resolves.toBeNull();
    // It said why: stopping cleanly, or, when that took longer than half a second, ended by its watchdog.
    expect(first.logs()).toMatch(
      new RegExp(`the process that started it \\(pid ${first.child.pid}\\) is gone: stopping|not stopped within 500 ms: ending the process`),
    );

    // Started at once: the lock of the server just ended is free.
    const again = await npmStart(env, { parent: true });
    expect((await api(again, 'GET', '/orgs/acme')).status).toBe(200);
    expect((await api(again, 'POST', '/orgs', { username: 'globex' })).status).toBe(201);

    // Now the whole group at once, so the server itself is killed and leaves its lock behind.
    process.kill(-again.child.pid!, 'SIGKILL');
    expect(await stopsAnswering(`${again.url}api/v1/version`, 2000)).toBeLessThan(2000);

    const last = await npmStart(env);
    expect((await api(last, 'GET', '/orgs/acme')).status).toBe(200);
    expect((await api(last, 'GET', '/orgs/globex')).status).toBe(200);
    expect(await interrupt(last.child)).toBe(0);
  }, 90_000);
});
