import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from './config';
import { DataDirInUseError, LOCK_DIR, lockDataDir, type LockHolder } from './data-dir-lock';

const ROOT = path.resolve(__dirname, '../../..');
const MODULE = path.join(__dirname, 'data-dir-lock.ts');

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
const records = (dir: string) =>
  Object.fromEntries(fs.readdirSync(path.join(dir, LOCK_DIR)).map((n) => [n, fs.readFileSync(path.join(dir, LOCK_DIR, n), 'utf8')]));

/** Writes a lock record as another process would have. */
function writeRecord(dir: string, n: number, holder: Partial<LockHolder>): void {
  fs.mkdirSync(path.join(dir, LOCK_DIR), { recursive: true });
  const record = { started: '2020-01-01T00:00:00.000Z', nonce: `n${n}`, ...holder };
  fs.writeFileSync(path.join(dir, LOCK_DIR, String(n)), `${JSON.stringify(record)}\n`);
}

/** A process that does nothing until killed. */
function idleProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  for (const until = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > until) throw new Error('timed out');
  }
}

const exited = (child: ChildProcess) =>
  new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));

describe('lockDataDir', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('is re-entrant within the process and released by the last user', () => {
    const d = dir();
    const first = lockDataDir(d);
    const second = lockDataDir(`${d}/./`); // the same directory, spelt differently
    expect(Object.keys(records(d))).toEqual(['0']);
    expect(JSON.parse(records(d)['0'])).toMatchObject({ pid: process.pid });

    first.release();
    first.release(); // twice is once
    expect(JSON.parse(records(d)['0']).released).toBeUndefined();
    second.release();
    expect(JSON.parse(records(d)['0']).released).toEqual(expect.any(String));

    // Released: the next taker gets the next number and tidies the old one away.
    const again = lockDataDir(d);
    expect(Object.keys(records(d))).toEqual(['1']);
    again.release();
  });

  it('refuses a DATA_DIR that a running process holds, naming it, as a configuration error', () => {
    const d = dir();
    const holder = idleProcess();
    children.push(holder);
    writeRecord(d, 4, { pid: holder.pid, started: '2024-05-06T07:08:09.000Z' });

    let error: unknown;
    try {
      lockDataDir(d);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `DATA_DIR ${d} is in use by process ${holder.pid} (started 2024-05-06T07:08:09.000Z); stop it first or choose another DATA_DIR`,
    );
    expect(Object.keys(records(d))).toEqual(['4']); // untouched
  });

  it('takes over the lock of a process that was killed (SIGKILL, reaped or not) or whose pid now belongs to another process', async () => {
    const d = dir();
    const killed = idleProcess();
    await new Promise((resolve) => killed.once('spawn', resolve));
    killed.kill('SIGKILL');
    await exited(killed);
    writeRecord(d, 7, { pid: killed.pid });
    const lock = lockDataDir(d);
    expect(Object.keys(records(d))).toEqual(['8']);
    lock.release();

    if (fs.existsSync('/proc/self/stat')) {
      // Same pid, another start time: the pid was reused by an unrelated process.
      const other = idleProcess();
      children.push(other);
      await new Promise((resolve) => other.once('spawn', resolve));
      writeRecord(d, 9, { pid: other.pid, ticks: '1' });
      lockDataDir(d).release();
      expect(Object.keys(records(d))).toEqual(['10']);
    }

    if (fs.existsSync('/proc/self/stat')) {
      // Ended, but its parent has not reaped it (a zombie): the shell becomes `sleep`, which never waits for
      // the child it inherits.
      const parent = spawn('/bin/sh', ['-c', 'sleep 0.5 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(parent);
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (b) => resolve(String(b).trim()))));
      await eventually(() => fs.readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '));
      writeRecord(d, 11, { pid: zombie });
      lockDataDir(d).release();
      expect(Object.keys(records(d))).toEqual(['12']);
      parent.kill('SIGKILL');
    }

    // Our own pid, but not a lock this process holds: an earlier process with our pid (a restarted container).
    writeRecord(d, 13, { pid: process.pid });
    lockDataDir(d).release();
    expect(Object.keys(records(d))).toEqual(['14']);

    // An unreadable record (cut short by a power loss) holds nothing.
    fs.writeFileSync(path.join(d, LOCK_DIR, '15'), '');
    lockDataDir(d).release();
    expect(Object.keys(records(d))).toEqual(['16']);
  });

  /**
   * A process that waits until `at` (ms since the epoch), tries to take the lock on `d` with a pause of
   * `pauseMs` between reading the newest record and taking the next number, reports `won <pid>` or
   * `lost <message>`, and keeps a won lock for `holdMs` (forever when absent) before exiting.
   */
  // Every racer must be loaded (node + tsx, slow on a busy 2-core machine) before the first scheduled step.
  const START_LEAD_MS = 8000;

  function racer(d: string, at: number, pauseMs: number, holdMs?: number): Promise<string> {
    const code = `
      const { lockDataDir, lockTesting } = require(${JSON.stringify(MODULE)});
      lockTesting.pauseBeforeTakingMs = ${pauseMs};
      // A timer, not a busy loop: six spinning processes would starve everything else on the machine.
      setTimeout(() => {
        try {
          lockDataDir(${JSON.stringify(d)});
          console.log('won ' + process.pid);
          ${holdMs === undefined ? 'setInterval(() => {}, 1000)' : `setTimeout(() => {}, ${holdMs})`};
        } catch (err) { console.log('lost ' + err.message); }
      }, Math.max(0, ${at} - Date.now()));`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    return new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (b) => {
        out += b;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.once('exit', () => resolve(out.trim()));
    });
  }

  it('lets exactly one of several processes that read the same stale lock take it over', async () => {
    const d = dir();
    writeRecord(d, 3, { pid: 999_999_999 });
    // All six read record 3 (stale), then all try to take number 4 at once.
    const at = Date.now() + START_LEAD_MS;
    const results = await Promise.all(Array.from({ length: 6 }, () => racer(d, at, 300)));
    const winners = results.filter((r) => r.startsWith('won '));
    expect(winners).toHaveLength(1);
    const winner = winners[0].slice(4);
    for (const r of results.filter((x) => !x.startsWith('won ')))
      expect(r).toMatch(new RegExp(`^lost DATA_DIR .* in use by process ${winner} `));
    expect(JSON.parse(records(d)['4'])).toMatchObject({ pid: Number(winner) });
  }, 30_000);

  it('makes a process that acted on an old state back off', async () => {
    const d = dir();
    const at = Date.now() + START_LEAD_MS;
    // late reads the empty directory, then sleeps 2 s before taking number 0. Meanwhile first takes 0 and
    // releases it, and holder takes 1 (deleting 0) and keeps it. late then gets 0 — and must see 1 and give up.
    const late = racer(d, at, 2000);
    const first = racer(d, at + 300, 0, 200);
    const holder = racer(d, at + 1000, 0);
    expect(await first).toMatch(/^won /);
    const holderPid = (await holder).slice(4);
    expect(await holder).toMatch(/^won /);
    expect(await late).toMatch(new RegExp(`^lost DATA_DIR .* in use by process ${holderPid} `));
    expect(Object.keys(records(d))).toEqual(['1']);
  }, 30_000);
});
