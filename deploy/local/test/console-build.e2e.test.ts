import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';

/** The files a console page names under the site's root (its scripts, style sheets, preloads). */
const namedFiles = (html: string) => [...html.matchAll(/\b(?:src|href)="(\/[^"/][^"]*)"/g)].map((m) => m[1]);

/** A pid no process has: one of a process that has just ended. */
function deadPid(): number {
  const res = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(res.stdout);
}

describe('two first starts of one checkout at once (npm start, the console not built yet)', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'console-build-e2e-'));
  // The build goes where CONSOLE_DIR says, and is served from there: here a folder that does not exist yet. The lock
  // is this test's own, so that it can leave one behind as a builder killed with -9 would.
  const consoleDir = path.join(scratch, 'console');
  const lock = path.join(scratch, 'build.lock');
  const started: StartedLauncher[] = [];

  afterAll(async () => {
    for (const s of started) await interrupt(s.child);
    killLaunched();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('builds once, behind a lock a dead builder left, and both serve a whole console; a missing asset is 404', async () => {
    fs.writeFileSync(lock, `${deadPid()}\n`);
    const start = (name: string) =>
      npmStart({ DATA_DIR: path.join(scratch, name), CONSOLE_DIR: consoleDir, BUILD_LOCK_FILE: lock, LOG_LEVEL: 'warn' }, { script: true });
    const results = await Promise.allSettled([start('a'), start('b')]);
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;

    // One start built the console; the other waited for it and found it built.
    const logs = started.map((s) => s.logs());
    expect(logs.filter((l) => l.includes(`building the web console into ${consoleDir}`))).toHaveLength(1);
    expect(logs.join('\n')).toMatch(/taking over the build lock of pid \d+, which is gone/);
    expect(fs.existsSync(lock)).toBe(false);
    expect(fs.readdirSync(scratch).filter((name) => /\.(building|replaced)-/.test(name))).toEqual([]);

    const page = fs.readFileSync(path.join(consoleDir, 'index.html'), 'utf8');
    const files = namedFiles(page);
    expect(files).toEqual(expect.arrayContaining([expect.stringMatching(/^\/assets\/index-.+\.js$/)]));
    for (const s of started) {
      const index = await fetch(s.url);
      expect(index.status).toBe(200);
      expect(await index.text()).toBe(page);
      for (const file of files) expect([file, (await fetch(new URL(file, s.url))).status]).toEqual([file, 200]);
      const missing = await fetch(new URL('/assets/index-NotThere1.js', s.url));
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^text\/plain/);
    }
  }, 400_000);
});
