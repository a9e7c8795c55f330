import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../../..');

/** What `npm start` execs once the web console is built (see package.json). */
export const LAUNCHER = ['--max-semi-space-size=32', 'deploy/local/start.mjs'];

/** package.json's `start` script itself: the console's build when it is missing or stale, then the launcher. */
export const START_SCRIPT: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;

/** A launcher started by a test. */
export interface StartedLauncher {
  /** Entry URL, e.g. http://localhost:8080/ */
  url: string;
  /** The spawned process: the server itself, or with `parent` the process standing in for npm. */
  child: ChildProcess;
  /** The server process (the one printing `ready ... (pid N)`). */
  pid: number;
  /** Everything it printed so far (stdout and stderr). */
  logs(): string;
  /** Resolves with the spawned process's exit code. */
  exited: Promise<number | null>;
}

export interface LaunchOptions {
  /**
   * Starts the server under a process standing in for npm: a shell, the leader of a new process group,
   * whose child is the server (as `npm start` is the parent of the node it execs).
   */
  parent?: boolean;
  /**
   * Runs package.json's `start` script as npm runs it (`sh -c`, the leader of a new process group), so the console
   * is built first when it is missing; the script's last step execs the launcher, so `child` ends up the server.
   */
  script?: boolean;
}

// Every process started here (negative: a process group), for killLaunched.
const spawned = new Set<number>();

function spawnLauncher(env: Record<string, string>, opts: LaunchOptions): ChildProcess {
  const childEnv = { PATH: process.env.PATH, HOME: process.env.HOME, HTTP_PORT: '0', ...env };
  const child = opts.script
    ? spawn('/bin/sh', ['-c', START_SCRIPT], { cwd: ROOT, env: childEnv, detached: true })
    : opts.parent
      ? // `; exit $?` keeps the shell from replacing itself with node: it stays the parent, as npm does.
        spawn('/bin/sh', ['-c', '"$0" "$@"; exit $?', process.execPath, ...LAUNCHER], { cwd: ROOT, env: childEnv, detached: true })
      : spawn(process.execPath, LAUNCHER, { cwd: ROOT, env: childEnv });
  const id = opts.parent || opts.script ? -child.pid! : child.pid!;
  spawned.add(id);
  // The server holds the output pipe as long as it runs: once it is closed, they are all gone.
  child.stdout!.once('close', () => spawned.delete(id));
  return child;
}

/** SIGKILLs every launcher (and process group) started here that may still run, e.g. after a failed test. */
export function killLaunched(): void {
  for (const pid of spawned) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  spawned.clear();
}

/** Runs the launcher exactly as `npm start` does and resolves once it is up; rejects if it exits first. */
export function npmStart(env: Record<string, string>, opts: LaunchOptions = {}): Promise<StartedLauncher> {
  const child = spawnLauncher(env, opts);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // Generous: from source through tsx, eight apps take 10-20 s on an idle machine and several times that beside
    // other test workers; a launcher that fails exits, which rejects at once.
    // With the `start` script, the console's build (a typecheck and Vite) comes first.
    const timer = setTimeout(() => reject(new Error(`platform did not start:\n${out}`)), opts.script ? 300_000 : 180_000);
    // The URL comes on stdout, the pid on stderr: wait for both.
    let up = false;
    const check = () => {
      const url = /Platform is up at (http:\/\/\S+)/.exec(out)?.[1];
      const pid = /ready in \S+ \(pid (\d+)\)/.exec(out)?.[1];
      if (up || !url || !pid) return;
      up = true;
      clearTimeout(timer);
      spawned.add(Number(pid));
      child.stdout!.once('close', () => spawned.delete(Number(pid)));
      resolve({ url, child, pid: Number(pid), logs: () => out, exited });
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`platform exited with ${code}:\n${out}`));
    });
  });
}

/** Ctrl-C, as a person would, and the exit code. */
export function interrupt(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

/** Whether a process still runs (a zombie waiting to be reaped has ended: it holds nothing). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
