import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';

// What the benchmarks share: ports, the processes they start, and the Postgres databases they measure on.

export const ROOT = path.resolve(__dirname, '..');

/** The Postgres server the benchmarks use (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local one). */
export const PG_SERVER = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A loopback port free at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until `url` answers 2xx; throws when the process exits first or the time runs out. */
export async function waitFor(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    const up = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    if (Date.now() > until) throw new Error(`${url} did not come up within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Runs a TypeScript entry point in its own process, tsx loaded as a module hook (as `npm start` does). Its
 * stderr goes to ours; `onStderr`, when given, also sees each line (to notice what the process reports) and
 * keeps it out of ours by answering true (debug output the bench reads itself).
 */
export function runTs(entry: string, env: Record<string, string>, onStderr?: (line: string) => boolean | void): ChildProcess {
  return runNode(['--import', 'tsx', entry], { TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json'), ...env }, onStderr);
}

/**
 * The flags node runs the platform with: `npm start`'s (package.json) and the images' NODE_OPTIONS
 * (deploy/docker/Dockerfile). BENCH_NODE_FLAGS (space-separated) replaces them, to measure what one flag is worth.
 */
export const PLATFORM_NODE_FLAGS = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [
  '--enable-source-maps',
  '--max-semi-space-size=32',
];

/** The apps whose bundles this run has made. */
const bundled = new Set<string>();

/**
 * The platform as it runs for its users: `npm start`'s launcher (`deploy/local/start.mjs`, which runs the launcher's
 * bundle) or an app's bundle as the image runs it (`dist/apps/<app>/main.js`, made here at its first start in a run),
 * with their node flags.
 */
export function runPlatform(
  entry: string,
  env: Record<string, string>,
  onStderr?: (line: string) => boolean | void,
  cgroupProcs?: string,
): ChildProcess {
  const app = /^dist\/apps\/([^/]+)\/main\.js$/.exec(entry)?.[1];
  // Once a run: a second start of the same app (a restart the bench times) runs the bundle it already made.
  if (app && !bundled.has(app)) {
    bundled.add(app);
    const res = spawnSync(process.execPath, [path.join(ROOT, 'deploy/docker/bundle.js'), app], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (res.status !== 0) throw new Error(`bundling ${app} failed`);
  }
  // The image deletes the bundles' source maps (unless built with SOURCE_MAPS=true), so its --enable-source-maps
  // loads none; here they lie beside the bundles, and loading them would cost each app's process memory (the map's
  // mappings and every source's text) that a pod does not spend.
  const flags = app ? PLATFORM_NODE_FLAGS.filter((f) => f !== '--enable-source-maps') : PLATFORM_NODE_FLAGS;
  return runNode([...flags, entry], env, onStderr, cgroupProcs);
}

/** The platform's launcher from its TypeScript through tsx, with the platform's node flags (BENCH_FROM_SOURCE). */
export function runPlatformSource(entry: string, env: Record<string, string>, onStderr?: (line: string) => boolean | void): ChildProcess {
  return runNode(
    [...PLATFORM_NODE_FLAGS, '--import', 'tsx', entry],
    { TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json'), ...env },
    onStderr,
  );
}

/** Runs node with `args`; with `cgroupProcs`, it joins that cgroup before node starts (so V8 sizes its heap by its limit). */
function runNode(
  args: string[],
  env: Record<string, string>,
  onStderr?: (line: string) => boolean | void,
  cgroupProcs?: string,
): ChildProcess {
  // BENCH_CPU_PROFILE=<dir>: every process started here writes a V8 CPU profile there when it exits (open it in
  // Chrome's DevTools), to see where a route's time goes inside the platform.
  const profile = process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROFILE)}`] : [];
  const command = [process.execPath, ...profile, ...args];
  const [file, ...argv] = cgroupProcs ? ['/bin/sh', '-c', 'echo $$ > "$1" && shift && exec "$@"', 'sh', cgroupProcs, ...command] : command;
  const child = spawn(file, argv, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'ignore', onStderr ? 'pipe' : 'inherit'],
  });
  if (onStderr) {
    let rest = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (onStderr(line) !== true) process.stderr.write(`${line}\n`);
    });
  }
  return child;
}

async function onServer(server: string, sql: string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    for (const q of sql) await admin.query(q);
  } finally {
    await admin.end();
  }
}

/** A new, empty database `name` on the server (dropped first if it exists); answers its URL. */
export async function freshDatabase(name: string, server = PG_SERVER): Promise<string> {
  await onServer(server, [`drop database if exists ${name} with (force)`, `create database ${name}`]);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(name: string, server = PG_SERVER): Promise<void> {
  await onServer(server, [`drop database if exists ${name} with (force)`]);
}

/** A bare handler in a process of its own, what a row is compared with. */
export interface Bare {
  base: string;
  /** The processes whose CPU an answer costs: its own and, for a bare INSERT, its Postgres backends. */
  pids(): number[] | Promise<number[]>;
  stop(): void;
}

/** A bare server from its code (PORT in it replaced by a free port), in a process of its own. */
export async function startBareCode(code: string, env: Record<string, string> = {}): Promise<Bare & { pid: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', code.replace('PORT', String(port))], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/version`, child);
  return { base, pid: child.pid!, pids: () => [child.pid!], stop: () => child.kill('SIGKILL') };
}

/** Clock ticks a second of /proc's CPU times (CLK_TCK; 100 on Linux as built for every common architecture). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user and system, every thread) each process has used so far, read from /proc; a process that has
 * gone has no entry. Differences of two readings (cpuBetween) give what a measurement cost, to the tick (10 ms).
 */
export function cpuSeconds(pids: readonly number[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After the command's closing parenthesis (a command may hold spaces): state, ppid, ... utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    used.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
  }
  return used;
}

/** CPU seconds used between two readings, by the processes in both (one gone meanwhile, a Postgres backend that closed, would count its whole life against it). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, then] of before) {
    const now = after.get(pid);
    if (now !== undefined) seconds += now - then;
  }
  return seconds;
}

/** What each process is, for a breakdown: the app a bundle runs, or the command's name (postgres, nats-server, node). */
function processName(pid: number): string {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const app = argv.map((a) => /dist\/apps\/([^/]+)\/main\.js$/.exec(a)?.[1]).find(Boolean);
    // A Postgres backend's title is "postgres: 15/main: user db host ...": named for the server, not its cluster.
    if (argv[0]?.startsWith('postgres:')) return 'postgres';
    return app ?? path.basename(argv[0] ?? String(pid)).split(':')[0];
  } catch {
    return String(pid);
  }
}

/**
 * CPU µs per answer between two readings, summed by process name (every Postgres backend as one), largest first:
 * where a row's CPU column goes (BENCH_CPU_BY_PROCESS=1 prints it beside each row).
 */
export function cpuByProcess(before: Map<number, number>, after: Map<number, number>, answered: number): string {
  const by = new Map<string, number>();
  for (const [pid, then] of before) {
    const now = after.get(pid);
    if (now === undefined) continue;
    const name = processName(pid);
    by.set(name, (by.get(name) ?? 0) + now - then);
  }
  return [...by]
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, s]) => `${name} ${Math.round((s * 1e6) / Math.max(answered, 1))}`)
    .join(', ');
}

/** The Postgres backends serving database `name` on the server now (the connections of whoever uses it). */
export async function backendPids(name: string, server = PG_SERVER): Promise<number[]> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
      name,
    ]);
    return rows.map((r) => r.pid);
  } finally {
    await admin.end();
  }
}

/**
 * A NATS server with JetStream of the bench's own (nats-server from PATH, on a free port, its store in a fresh
 * directory): its CPU is the platform's alone, whatever else uses the machine's shared server.
 */
export async function startNats(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-nats-'));
  const child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: 'ignore' });
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.end(() => resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > until) throw new Error('nats-server did not listen within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      fs.rmSync(store, { recursive: true, force: true });
    },
  };
}
