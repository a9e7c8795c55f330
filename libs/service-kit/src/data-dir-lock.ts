import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { withRetriesSync, type RetryPolicy } from '@platform/errors';
import { ConfigError } from './config';

/**
 * One process at a time on a DATA_DIR (the embedded PGlite database lives there, and two processes writing
 * it lose each other's writes).
 *
 * The lock is a directory `DATA_DIR/lock` of numbered files, each the record of one process that took the
 * lock; the highest number is the current one. To take the lock a process reads the highest file: when its
 * process still runs, the DATA_DIR is in use; when it is released or its process is gone (killed with
 * SIGKILL, crashed), the process creates the next number with a hard link of its finished record (`link`
 * never replaces an existing file, so of several processes racing for the same number exactly one gets it),
 * then checks that no higher number appeared meanwhile (a process that read an old state late backs off).
 * Numbers only grow: a release marks the file released instead of deleting it, and the winner deletes only
 * lower numbers. So no lock is ever deleted or overwritten by anyone but its owner, and there is no moment
 * at which two processes both hold it.
 *
 * Within one process the lock is re-entrant (every app of the one-process launcher takes it; a restart of
 * one app takes it again): it is counted per directory and released when the last user releases it, or
 * when the process exits.
 */

/** What a lock file records about the process that took the lock. */
export interface LockHolder {
  pid: number;
  /** When that process started (ISO 8601). */
  started: string;
  /** Linux: its start time in clock ticks since boot, which tells a reused pid from the holder. */
  ticks?: string;
  /** Random, so this record differs from every other. */
  nonce: string;
  /** Set when the holder let go (ISO 8601). */
  released?: string;
}

/** A second process on a DATA_DIR: stops the start like a bad setting (exit code 78), naming the holder. */
export class DataDirInUseError extends ConfigError {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    const message = `DATA_DIR ${dir} is in use by process ${holder.pid} (started ${holder.started}); stop it first or choose another DATA_DIR`;
    super([message]);
    this.name = 'DataDirInUseError';
    this.message = message;
  }
}

/** One use of a held lock. */
export interface DataDirLock {
  /** The directory, absolute. */
  readonly dir: string;
  /** Gives this use back; the last one releases the lock. Safe to call twice. */
  release(): void;
}

/** The subdirectory of DATA_DIR that holds the lock files. */
export const LOCK_DIR = 'lock';

interface Held {
  file: string;
  text: string;
  users: number;
}

// Locks this process holds, by real path of the DATA_DIR.
const held = new Map<string, Held>();
// Processes starting side by side settle who holds the lock within a few tries; each waits up to 25 ms at random.
const LOCK_RETRY: RetryPolicy = { attempts: 100, baseDelayMs: 25, factor: 1, jitter: 'full' };
let exitHookInstalled = false;

/**
 * Takes the lock on `dataDir` (created if missing) for this process, or throws `DataDirInUseError` when a
 * running process holds it. Synchronous, so nothing else runs between the check and the taking.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const key = fs.realpathSync(dir);
  let entry = held.get(key);
  if (!entry) {
    entry = acquire(path.join(key, LOCK_DIR), dir);
    held.set(key, entry);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const h of held.values()) letGo(h);
        held.clear();
      });
    }
  }
  const mine = entry;
  mine.users += 1;
  let released = false;
  return {
    dir,
    release() {
      if (released) return;
      released = true;
      mine.users -= 1;
      if (mine.users > 0 || held.get(key) !== mine) return;
      held.delete(key);
      letGo(mine);
    },
  };
}

function acquire(lockDir: string, shownDir: string): Held {
  fs.mkdirSync(lockDir, { recursive: true });
  const record: LockHolder = {
    pid: process.pid,
    started: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    ticks: startTicks(process.pid),
    nonce: randomBytes(8).toString('hex'),
  };
  const text = `${JSON.stringify(record)}\n`;
  const tmp = path.join(lockDir, `.${record.nonce}.tmp`);
  fs.writeFileSync(tmp, text, { flag: 'wx' });
  // A race lost to another process starting on the same directory (a record replaced while read, a number taken
  // first, a later number written meanwhile) is looked at again from the start, after a short random wait.
  const raced = new Error(`could not take the lock in ${lockDir}: it keeps changing`);
  try {
    return withRetriesSync(
      LOCK_RETRY,
      (err) => err === raced,
      () => {
        const top = newest(lockDir);
        if (top >= 0) {
          const current = readText(path.join(lockDir, String(top)));
          if (current === undefined) throw raced; // superseded while we looked
          const holder = parseRecord(current);
          if (holder && isRunning(holder)) throw new DataDirInUseError(shownDir, holder);
        }
        const file = path.join(lockDir, String(top + 1));
        try {
          fs.linkSync(tmp, file);
        } catch (err) {
          if (errno(err) === 'EEXIST') throw raced; // another process took this number first
          throw err;
        }
        if (newest(lockDir) !== top + 1) {
          fs.rmSync(file, { force: true }); // we acted on an old state: a later number exists
          throw raced;
        }
        tidy(lockDir, top + 1);
        return { file, text, users: 0 };
      },
    );
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Marks our record released (an atomic rename), unless someone else's record has replaced it. */
function letGo(h: Held): void {
  try {
    if (readText(h.file) !== h.text) return;
    const record = { ...(JSON.parse(h.text) as LockHolder), released: new Date().toISOString() };
    const tmp = `${path.join(path.dirname(h.file), `.${record.nonce}`)}.released.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(record)}\n`);
    fs.renameSync(tmp, h.file);
  } catch {
    // Best effort: a lock left behind by a process that is gone does not block the next one.
  }
}

/** Whether the recorded holder is a process that runs now (and not this process's earlier life). */
function isRunning(holder: LockHolder): boolean {
  if (holder.released) return false;
  // Not among our own locks, so it is a former process that had our pid (e.g. the previous container).
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if (errno(err) === 'ESRCH') return false;
    // EPERM: it exists and belongs to another user.
  }
  const stat = procStat(holder.pid);
  if (!stat) return true; // not Linux: the pid exists, that is all we can tell
  // Killed but not yet reaped by its new parent (a zombie holds no files), or a pid that was reused by an
  // unrelated process, which has another start time.
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  return !(holder.ticks && stat[19] !== holder.ticks);
}

/** Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot; undefined off Linux. */
function startTicks(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** The fields of /proc/<pid>/stat from the third (state) on; undefined off Linux or when there is no such process. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses (field 2) may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function parseRecord(text: string): LockHolder | undefined {
  try {
    const r = JSON.parse(text) as LockHolder;
    return Number.isInteger(r.pid) && r.pid > 0 ? r : undefined;
  } catch {
    return undefined; // unreadable (e.g. cut short by a power loss): nobody can hold it
  }
}

/** Deletes the records below ours, and temporary files that a process killed at the wrong moment left. */
function tidy(lockDir: string, ours: number): void {
  for (const name of fs.readdirSync(lockDir)) {
    const file = path.join(lockDir, name);
    if (/^\d+$/.test(name) ? Number(name) < ours : name.endsWith('.tmp') && olderThan(file, 60_000)) fs.rmSync(file, { force: true });
  }
}

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

function numbers(lockDir: string): number[] {
  return fs
    .readdirSync(lockDir)
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

function newest(lockDir: string): number {
  return Math.max(-1, ...numbers(lockDir));
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}
