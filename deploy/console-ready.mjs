// What `npm start` runs before the launcher: makes sure the web console's build is there, whole, and newer than
// every input of `nx run console:build` (the console's own files and the packages), building only when it is not. Up to
// date, it prints nothing and takes a fraction of a second instead of Nx's start-up and its report of cache hits, so
// the platform's own lines (the URL, a generated admin password) are what a person sees. Build output goes to
// stderr, as the launcher's progress does.
//
// Starts of one checkout may run at once (two DATA_DIRs, tests in parallel), so:
// - builds take turns: each holds the checkout's build lock (build-lock.mjs), and one that waited looks again
//   before building, finding the build the other made;
// - a build is written to a folder beside its place and renamed into place once it is whole: a start never serves
//   a console half written or half removed;
// - a build counts as done only while every file its index.html names is there; one that is not (an interrupted
//   build of an older version of this script, files removed by hand) is built again.
//
// CONSOLE_DIR (the gateway's setting) moves the build: it is made there when that folder holds no whole build
// (never rebuilt for newer sources, since it may be a build from elsewhere). Unset, it is dist/apps/console, built
// again whenever an input is newer than its last build.
// First: a DATA_DIR in use stops the start here, before anything is built or loaded.
import './data-dir-check.mjs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { withBuildLock } from './build-lock.mjs';
import { newest, ROOT, runCommand } from './freshness.mjs';

const at = (p) => path.join(ROOT, p);
const DEFAULT_DIR = at('dist/apps/console');
const dir = process.env.CONSOLE_DIR ? path.resolve(process.env.CONSOLE_DIR) : DEFAULT_DIR;
// When the last successful build of dist/apps/console started; kept outside it, since Nx's console:build (npm test,
// npm run build) writes that folder too.
const stamp = at('node_modules/.cache/platform/console-built');
// The API types generated from the route rows (console:generate-api) serve the typecheck only, not the build: their
// times say nothing about staleness.
const generated = new Set([at('apps/console/src/api/gen')]);
const project = JSON.parse(fs.readFileSync(at('apps/console/project.json'), 'utf8'));

/** The inputs of console:build (apps/console/project.json, nx.json): the console's files, tsconfig and the packages. */
function inputsChangedAt() {
  return Math.max(...[at('apps/console'), at('tsconfig.base.json'), at('package-lock.json')].map((p) => newest(p, generated)));
}

/** The files `index.html` of a build names (its own, by absolute path) that are not in the build; index.html itself when absent. */
function missingFiles(build) {
  let html;
  try {
    html = fs.readFileSync(path.join(build, 'index.html'), 'utf8');
  } catch {
    return ['/index.html'];
  }
  const missing = [];
  for (const [, ref] of html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/g)) {
    if (!ref.startsWith('/') || ref.startsWith('//')) continue;
    const file = decodeURIComponent(ref.split(/[?#]/)[0]);
    if (file !== '/' && !fs.existsSync(path.join(build, file))) missing.push(file);
  }
  return missing;
}

function upToDate() {
  if (missingFiles(dir).length > 0) return false;
  if (dir !== DEFAULT_DIR) return true;
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  return built > 0 && inputsChangedAt() <= built;
}

/** Removes what builds killed midway left beside the build (only the lock's holder may). */
function removeLeftovers() {
  const prefix = `${path.basename(dir)}.`;
  if (!fs.existsSync(path.dirname(dir))) return;
  for (const name of fs.readdirSync(path.dirname(dir))) {
    if (name.startsWith(prefix) && /\.(building|replaced)-\d+$/.test(name))
      fs.rmSync(path.join(path.dirname(dir), name), { recursive: true, force: true });
  }
}

async function build() {
  const startedAt = new Date();
  removeLeftovers();
  const building = `${dir}.building-${process.pid}`;
  const replaced = `${dir}.replaced-${process.pid}`;
  const shown = path.relative(ROOT, dir).startsWith('..') ? dir : path.relative(ROOT, dir);
  process.stderr.write(`building the web console into ${shown} (a few seconds)\n`);
  // console:build's own command (Vite), its output moved to the folder beside the build.
  await runCommand(`${project.targets.build.options.command} --outDir '${building.replaceAll("'", "'\\''")}' --emptyOutDir`);
  const missing = missingFiles(building);
  if (missing.length > 0) {
    process.stderr.write(`the console's build is not whole: its index.html names ${missing.join(', ')}, which it lacks\n`);
    fs.rmSync(building, { recursive: true, force: true });
    process.exit(1);
  }
  if (fs.existsSync(dir)) fs.renameSync(dir, replaced);
  fs.renameSync(building, dir);
  fs.rmSync(replaced, { recursive: true, force: true });
  // Again: a build killed with -9 leaves Vite running a while, writing into its folder.
  removeLeftovers();
  if (dir === DEFAULT_DIR) {
    fs.mkdirSync(path.dirname(stamp), { recursive: true });
    fs.writeFileSync(stamp, '');
    // The build's start, not its end: an input saved while it ran is newer, so the next start builds again.
    fs.utimesSync(stamp, startedAt, startedAt);
  }
}

if (!upToDate()) {
  await withBuildLock('the web console', async () => {
    // Another start may have built it while this one waited.
    if (!upToDate()) await build();
  });
}
