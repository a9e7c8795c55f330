// What the start-up scripts share (proto-ready.mjs, console-ready.mjs): when a generated output is older than its
// inputs, and running an Nx target with its output on stderr, so a tool's own stdout (secrets) stays clean.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** The newest modification time of `p` and, for a directory, of the files under it (0 when absent or skipped). */
export function newest(p, skip = new Set()) {
  if (skip.has(p) || !fs.existsSync(p)) return 0;
  const stat = fs.statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let t = 0;
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) t = Math.max(t, newest(path.join(p, entry.name), skip));
  return t;
}

/** Runs `nx run <target>` (extra arguments after it), its output on stderr; exits with its code when it fails. */
export function runNx(target, ...args) {
  const res = spawnSync(path.join(ROOT, 'node_modules/.bin/nx'), ['run', target, ...args], {
    cwd: ROOT,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (res.status !== 0) process.exit(res.status ?? 1);
}
