// One build at a time per checkout: the start-up scripts (console-ready.mjs, proto-ready.mjs) generate and build
// into shared places (libs/proto/src/gen, apps/console/src/api/gen, dist/apps/console), so two `npm start`s of one
// fresh checkout, or a start beside `npm run cli`, would otherwise build at the same moment and trip over each other.
//
// The lock is a file, node_modules/.cache/platform/build.lock, holding the builder's pid; it is made whole under
// another name and linked into place, so it never exists without its pid. Whoever finds it waits, saying once whose
// build it waits for. A lock whose process is gone (a builder killed with -9, a machine restarted) is taken over, and
// so is one its holder stopped touching (every 5 s while it builds) a minute ago: the pid was reused by another
// process. The holder removes it when done, and on Ctrl-C or a kill.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './freshness.mjs';

const HEARTBEAT_MS = 5_000;
const STALE_MS = 60_000;
const POLL_MS = 200;

/** Where the lock of this checkout is; BUILD_LOCK_FILE moves it (tests). */
export const lockFile = () => process.env.BUILD_LOCK_FILE ?? path.join(ROOT, 'node_modules/.cache/platform/build.lock');

/** The pid in a lock file and when it was last touched; undefined when there is none (any more). */
function holderOf(file) {
  try {
    const modifiedAt = fs.statSync(file).mtimeMs;
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
    return { pid: Number.isInteger(pid) && pid > 0 ? pid : undefined, modifiedAt };
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Whether a process with this pid runs (EPERM: it does, as another user's). A zombie does not: a builder killed with
 * -9 stays one until its parent reaps it, which a container's first process may never do.
 */
function running(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): the signal's answer stands
  }
}

/** Creates the lock holding our pid; false when another one is there. */
function tryCreate(file) {
  const mine = `${file}.${process.pid}.new`;
  fs.writeFileSync(mine, `${process.pid}\n`);
  try {
    fs.linkSync(mine, file);
    return true;
  } catch (err) {
    if (err.code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

/**
 * Removes a stale lock held by `pid`. It is first renamed to a name of our own, which only one taker can do; should
 * the file renamed be a newer lock (a live builder took it over meanwhile), it is put back.
 */
function takeOver(file, pid) {
  const aside = `${file}.${process.pid}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  try {
    if (holderOf(aside)?.pid !== pid) fs.linkSync(aside, file);
  } catch {
    // Yet another builder holds the place now: the one put aside has lost its lock and finds out when it ends.
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/** Runs `build` (async) holding the checkout's build lock, waiting for the current holder first. */
export async function withBuildLock(what, build) {
  const file = lockFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let told = false;
  while (!tryCreate(file)) {
    const holder = holderOf(file);
    if (!holder) continue;
    if (holder.pid === undefined || !running(holder.pid) || Date.now() - holder.modifiedAt > STALE_MS) {
      process.stderr.write(`taking over the build lock of pid ${holder.pid ?? '?'}, which is gone (${path.relative(ROOT, file)})\n`);
      takeOver(file, holder.pid);
      continue;
    }
    if (!told) process.stderr.write(`${what}: waiting for the build of pid ${holder.pid} (${path.relative(ROOT, file)})\n`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }

  const release = () => {
    if (holderOf(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
  const onSignal = (signal) => {
    release();
    process.kill(process.pid, signal);
  };
  const heartbeat = setInterval(() => {
    const now = new Date();
    if (holderOf(file)?.pid === process.pid) fs.utimesSync(file, now, now);
  }, HEARTBEAT_MS);
  process.on('exit', release);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, onSignal);
  try {
    return await build();
  } finally {
    clearInterval(heartbeat);
    release();
    process.off('exit', release);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(signal, onSignal);
  }
}
