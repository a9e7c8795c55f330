// What the start-up scripts share (proto-ready.mjs, console-ready.mjs): when a generated output is older than its
// inputs, and running an Nx target or a command with its output on stderr, so a tool's own stdout (secrets) stays
// clean.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
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

/** Whether the generated proto code (libs/proto/src/gen) is missing or older than a file under proto/. */
export function protoStale() {
  const generatedAt = newest(path.join(ROOT, 'libs/proto/src/gen'));
  return generatedAt === 0 || newest(path.join(ROOT, 'proto')) > generatedAt;
}

/**
 * Runs a program from the workspace root, its output on stderr, with node_modules/.bin on the PATH (as Nx's
 * run-commands does); resolves when it succeeded, and exits with its code when it failed.
 */
export function run(file, args) {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      stdio: ['ignore', process.stderr, process.stderr],
      env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    child.once('error', (err) => {
      process.stderr.write(`${file}: ${err.message}\n`);
      process.exit(1);
    });
    child.once('exit', (code, signal) => {
      if (code === 0) return resolve();
      process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
    });
  });
}

/** Runs `nx run <target>` (extra arguments after it), its output on stderr; exits with its code when it fails. */
export const runNx = (target, ...args) => run(path.join(ROOT, 'node_modules/.bin/nx'), ['run', target, ...args]);

/** Runs a shell command line (an Nx target's `command`, read from its project.json) as runNx does. */
export const runCommand = (command) => run('/bin/sh', ['-c', command]);

/**
 * Makes sure an entry's bundle (deploy/docker/bundle.js: workspace code and npm packages inlined but the few it
 * keeps external) is there and newer than every file it was made from, bundling again only when it is not (about a second).
 * Freshness is read from esbuild's metafile beside the bundle, which lists each input; the lockfile, the TypeScript
 * settings and the bundler count too. Bundling holds the checkout's build lock, so it never reads the generated
 * proto code while another start writes it; the bundler writes each file whole under another name and renames it
 * into place, so a process loading the bundle meanwhile finds the old one or the new one. Its output goes to stderr.
 */
export async function bundleReady(app, entry, bundle) {
  const meta = `${bundle}.meta.json`;
  const fresh = () => {
    if (!fs.existsSync(bundle) || !fs.existsSync(meta)) return false;
    const builtAt = fs.statSync(bundle).mtimeMs;
    const inputs = [
      ...Object.keys(JSON.parse(fs.readFileSync(meta, 'utf8')).inputs),
      'package-lock.json',
      'tsconfig.base.json',
      'deploy/docker/bundle.js',
    ];
    return inputs.every((input) => {
      const file = path.join(ROOT, input);
      return fs.existsSync(file) && fs.statSync(file).mtimeMs <= builtAt;
    });
  };
  if (fresh()) return;
  // Imported here: build-lock.mjs imports this module.
  const { withBuildLock } = await import('./build-lock.mjs');
  await withBuildLock(`the ${app} bundle`, async () => {
    if (!fresh()) await run(process.execPath, [path.join(ROOT, 'deploy/docker/bundle.js'), app, entry]);
  });
}
