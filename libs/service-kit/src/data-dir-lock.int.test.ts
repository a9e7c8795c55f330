import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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
   * A process that takes part in a race on the lock of `d`, step by step, each step on the parent's command
   * (a line on its stdin) and each acknowledged by a line on its stdout, so that the order of the steps is the
   * order the test sends them in, however late a process starts or however long it is descheduled:
   *
   *   (loaded)   prints `ready`
   *   go         tries to take the lock; prints `won <pid>` or `lost <message>`. With `stopBeforeTaking`, it
   *              first reads the newest record, then prints `read` and waits for `take` before it takes the
   *              next number (the moment a slow process would be descheduled).
   *   release    gives a won lock back; prints `released`
   *
   * It keeps a won lock until its stdin closes (then it exits) or it is killed. The child runs synchronously
   * from start to end (lockDataDir is synchronous, and the wait for `take` falls inside it), so it reads its
   * commands with blocking reads of its stdin rather than with stream events.
   */
  interface Racer {
    readonly pid: number;
    /** Sends a command. */
    send(command: 'go' | 'take' | 'release'): void;
    /** The next line the process prints (a bounded wait: it fails when the process exits or stays silent). */
    next(): Promise<string>;
    /** Closes its stdin, which ends it, and waits for it to exit. */
    end(): Promise<unknown>;
  }

  // A bound on each step of a racer, not a wait: loading node + tsx on a busy two-core machine takes seconds.
  const STEP_BOUND_MS = 60_000;

  function racer(d: string, { stopBeforeTaking = false } = {}): Racer {
    const code = `
      const fs = require('node:fs');
      let input = '';
      /** The next command line from the parent (a blocking read); the parent closing stdin ends the process. */
      function command() {
        const buf = Buffer.alloc(64);
        while (!input.includes('\\n')) {
          const n = fs.readSync(0, buf, 0, buf.length, null);
          if (n === 0) process.exit(0);
          input += buf.toString('utf8', 0, n);
        }
        const line = input.slice(0, input.indexOf('\\n'));
        input = input.slice(line.length + 1);
        return line;
      }
      const say = (line) => fs.writeSync(1, line + '\\n');
      ${
        stopBeforeTaking
          ? `// The lock takes the next number with a hard link, right after it read the newest record (and after
      // a slow process's pause): the first link waits for the parent's \`take\`.
      const link = fs.linkSync;
      let stopped = false;
      fs.linkSync = (...args) => {
        if (!stopped) {
          stopped = true;
          say('read');
          const c = command();
          if (c !== 'take') throw new Error('expected take, got ' + c);
        }
        return link(...args);
      };`
          : ''
      }
      const { lockDataDir } = require(${JSON.stringify(MODULE)});
      say('ready');
      let lock;
      for (;;) {
        const c = command();
        if (c === 'go') {
          try {
            lock = lockDataDir(${JSON.stringify(d)});
            say('won ' + process.pid);
          } catch (err) { say('lost ' + err.message); }
        } else if (c === 'release') {
          lock.release();
          say('released');
        } else throw new Error('unknown command ' + c);
      }`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json') },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(child);
    const lines: string[] = [];
    let out = '';
    let wake = () => {};
    child.stdout!.on('data', (b) => {
      out += b;
      for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
        lines.push(out.slice(0, i));
        out = out.slice(i + 1);
      }
      wake();
    });
    let closed = false; // exited, and everything it printed has been read
    child.once('close', () => {
      closed = true;
      wake();
    });
    return {
      get pid() {
        return child.pid!;
      },
      send(command) {
        child.stdin!.write(`${command}\n`);
      },
      async next() {
        const until = Date.now() + STEP_BOUND_MS;
        while (!lines.length) {
          if (closed) throw new Error(`racer ${child.pid} exited (${child.exitCode ?? child.signalCode}) without a line`);
          if (Date.now() > until) throw new Error(`racer ${child.pid} printed nothing for ${STEP_BOUND_MS} ms`);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, until - Date.now());
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        return lines.shift()!;
      },
      end() {
        child.stdin!.end();
        return exited(child);
      },
    };
  }

  /** Waits until every one of `all` has loaded (they load at the same time). */
  async function loaded(all: Racer[]): Promise<void> {
    for (const line of await Promise.all(all.map((r) => r.next()))) expect(line).toBe('ready');
  }

  // Every step is bounded by STEP_BOUND_MS; a test runs a few of them one after another.
  const RACE_TEST_MS = 5 * STEP_BOUND_MS;

  it(
    'lets exactly one of several processes that read the same stale lock take it over',
    async () => {
      const d = dir();
      writeRecord(d, 3, { pid: 999_999_999 });
      const all = Array.from({ length: 6 }, () => racer(d, { stopBeforeTaking: true }));
      try {
        await loaded(all);
        // All six read record 3 (stale), then all try to take number 4 at once: released together, a real race.
        for (const r of all) r.send('go');
        for (const line of await Promise.all(all.map((r) => r.next()))) expect(line).toBe('read');
        for (const r of all) r.send('take');
        const results = await Promise.all(all.map((r) => r.next()));
        const winners = results.filter((r) => r.startsWith('won '));
        expect(winners).toHaveLength(1);
        const winner = winners[0].slice(4);
        for (const r of results.filter((x) => !x.startsWith('won ')))
          expect(r).toMatch(new RegExp(`^lost DATA_DIR .* in use by process ${winner} `));
        expect(JSON.parse(records(d)['4'])).toMatchObject({ pid: Number(winner) });
      } finally {
        await Promise.all(all.map((r) => r.end()));
      }
    },
    RACE_TEST_MS,
  );

  it(
    'makes a process that acted on an old state back off',
    async () => {
      const d = dir();
      const [late, first, holder] = [racer(d, { stopBeforeTaking: true }), racer(d), racer(d)];
      try {
        await loaded([late, first, holder]);
        // late reads the empty directory and stops before taking number 0. Meanwhile first takes 0 and releases
        // it, and holder takes 1 (deleting 0) and keeps it. late then gets 0 — and must see 1 and give up.
        late.send('go');
        expect(await late.next()).toBe('read');
        first.send('go');
        expect(await first.next()).toMatch(/^won /);
        first.send('release');
        expect(await first.next()).toBe('released');
        holder.send('go');
        const held = await holder.next();
        expect(held).toMatch(/^won /);
        const holderPid = held.slice(4);
        late.send('take');
        expect(await late.next()).toMatch(new RegExp(`^lost DATA_DIR .* in use by process ${holderPid} `));
        expect(Object.keys(records(d))).toEqual(['1']);
      } finally {
        await Promise.all([late, first, holder].map((r) => r.end()));
      }
    },
    RACE_TEST_MS,
  );
});

// `npm start` looks at the lock before it builds or loads anything (deploy/data-dir-check.mjs, plain JavaScript since
// nothing is built yet), and must reach the verdict this module reaches.
describe("npm start's first look at the lock", () => {
  const CHECK = path.join(ROOT, 'deploy/data-dir-check.mjs');
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  const look = (d: string, env: Record<string, string> = {}) => {
    const run = spawnSync(process.execPath, [CHECK], { env: { PATH: process.env.PATH, DATA_DIR: d, ...env }, encoding: 'utf8' });
    return { status: run.status, stderr: run.stderr };
  };
  /** What lockDataDir says of `d`: the refusal's message, or undefined when it could take the lock (then given back). */
  const lockSays = (d: string) => {
    try {
      lockDataDir(d).release();
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("stops with 78 and the launcher's own line while a running process holds the DATA_DIR, and only then", async () => {
    const held = dir();
    const holder = idleProcess();
    children.push(holder);
    await new Promise((resolve) => holder.once('spawn', resolve));
    writeRecord(held, 2, { pid: holder.pid, started: '2024-05-06T07:08:09.000Z' });
    expect(look(held)).toEqual({ status: 78, stderr: `platform: ${lockSays(held)}\n` });
    // On DATABASE_URL nothing of the database is under DATA_DIR: the launcher takes no lock, and the look stops nothing.
    expect(look(held, { DATABASE_URL: 'postgres://127.0.0.1/x' })).toEqual({ status: 0, stderr: '' });

    const free: string[] = [];
    free.push(dir()); // never used
    const released = dir();
    lockDataDir(released).release();
    free.push(released);
    const killed = idleProcess();
    await new Promise((resolve) => killed.once('spawn', resolve));
    killed.kill('SIGKILL');
    await exited(killed);
    const dead = dir();
    writeRecord(dead, 5, { pid: killed.pid });
    free.push(dead);
    if (fs.existsSync('/proc/self/stat')) {
      const reused = dir();
      writeRecord(reused, 1, { pid: holder.pid, ticks: '1' }); // the pid runs, but started at another time
      free.push(reused);
    }
    for (const d of free) {
      expect(look(d)).toEqual({ status: 0, stderr: '' });
      expect(lockSays(d)).toBeUndefined();
    }
  });
});
