// The first thing `npm start` does (console-ready.mjs imports it before anything else): when the embedded database's
// DATA_DIR is held by a running platform, say so and exit 78 at once, before the console is built, the launcher
// bundled or its 11 MB loaded (which took 5 to 14 s before the launcher's own lock said the same).
//
// This only looks: the lock itself is taken by the launcher (libs/service-kit/src/data-dir-lock.ts, which owns the
// lock's format and rules; data-dir-lock.int.test.ts checks that this look agrees with it). Two starts racing past
// this look both go on, and the launcher's lock stops the second, later, with the same line.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The running process holding `dataDir`'s lock, or undefined when it is free (no lock, released, or its process is
 * gone). Mirrors the rules of data-dir-lock.ts: the highest numbered record is the current one; a record is held
 * while not released and its pid runs with the start time it recorded (a zombie holds nothing).
 */
export function dataDirHolder(dataDir) {
  const lockDir = path.join(path.resolve(dataDir), 'lock');
  let names;
  try {
    names = fs.readdirSync(lockDir).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined; // no DATA_DIR or no lock yet
  }
  if (names.length === 0) return undefined;
  const top = Math.max(...names.map(Number));
  let holder;
  try {
    holder = JSON.parse(fs.readFileSync(path.join(lockDir, String(top)), 'utf8'));
  } catch {
    return undefined; // superseded while we looked, or unreadable: the launcher's lock decides
  }
  if (!Number.isInteger(holder?.pid) || holder.pid <= 0 || holder.released || holder.pid === process.pid) return undefined;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if (err.code === 'ESRCH') return undefined;
  }
  let stat;
  try {
    const text = fs.readFileSync(`/proc/${holder.pid}/stat`, 'utf8');
    stat = text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return holder; // not Linux: the pid exists, that is all we can tell
  }
  if (stat[0] === 'Z' || stat[0] === 'X') return undefined;
  return holder.ticks && stat[19] !== holder.ticks ? undefined : holder;
}

// Only the embedded database lives under DATA_DIR; on DATABASE_URL starts share nothing there that needs one owner.
if (!process.env.DATABASE_URL) {
  const dir = path.resolve(process.env.DATA_DIR ?? '.data');
  const holder = dataDirHolder(dir);
  if (holder) {
    // The launcher's DataDirInUseError says exactly this; a person sees one line either way.
    process.stderr.write(
      `platform: DATA_DIR ${dir} is in use by process ${holder.pid} (started ${holder.started}); stop it first or choose another DATA_DIR\n`,
    );
    process.exit(78);
  }
}
