#!/usr/bin/env node
// Trims a production install (`npm ci --omit=dev`) to what the bundles load at run time, for the image:
//
//   node deploy/docker/runtime-modules.js <node_modules> <bundle metafile>...
//
// The bundles inline every npm package but the few deploy/docker/bundle.js keeps external; their metafiles
// (main.js.meta.json) name the packages each requires. Kept: those packages and, from their package.json, every
// dependency they may load (optional ones included), found as Node finds them (a package's own node_modules first,
// then each folder above). Removed: every other package, and in those kept, the files nothing loads at run time
// (source maps, type declarations, Markdown).
const fs = require('node:fs');
const path = require('node:path');
const { isBuiltin } = require('node:module');

const [modulesArg, ...metafiles] = process.argv.slice(2);
if (!modulesArg || metafiles.length === 0) {
  console.error('usage: node deploy/docker/runtime-modules.js <node_modules> <bundle metafile>...');
  process.exit(64);
}
const modules = path.resolve(modulesArg);

/** "@scope/name/sub/path" -> "@scope/name"; "name/sub" -> "name". */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The folder Node loads `name` from when `from` (a package folder, or node_modules' parent) requires it. */
function resolvePackage(name, from) {
  for (let dir = from; dir.startsWith(path.dirname(modules)); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === path.dirname(dir)) break;
  }
  return undefined;
}

const required = new Set();
for (const file of metafiles) {
  const { outputs } = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const output of Object.values(outputs))
    for (const imp of output.imports) if (imp.external && !isBuiltin(imp.path)) required.add(packageOf(imp.path));
}

// Every package folder the required ones reach.
const kept = new Set();
const queue = [...required].map((name) => [name, path.dirname(modules)]);
while (queue.length > 0) {
  const [name, from] = queue.pop();
  const dir = resolvePackage(name, from);
  if (!dir || kept.has(dir)) continue; // an optional dependency not installed; or seen
  kept.add(dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) queue.push([dep, dir]);
}

/** The package folders under a node_modules folder (scoped ones one level down). */
function packagesIn(nodeModules) {
  if (!fs.existsSync(nodeModules)) return [];
  return fs.readdirSync(nodeModules).flatMap((entry) => {
    if (entry.startsWith('.')) return [];
    const dir = path.join(nodeModules, entry);
    return entry.startsWith('@') ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : [dir];
  });
}

let removedPackages = 0;
let removedBytes = 0;
const sizeOf = (p) => {
  const st = fs.lstatSync(p);
  return st.isDirectory() ? fs.readdirSync(p).reduce((sum, e) => sum + sizeOf(path.join(p, e)), 0) : st.size;
};
/** Removes the packages under `nodeModules` that are not kept, and walks into those that are. */
function prune(nodeModules) {
  for (const dir of packagesIn(nodeModules)) {
    if (!kept.has(dir)) {
      removedBytes += sizeOf(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      removedPackages++;
      continue;
    }
    prune(path.join(dir, 'node_modules'));
    stripFiles(dir);
  }
  for (const entry of fs.existsSync(nodeModules) ? fs.readdirSync(nodeModules) : []) {
    const dir = path.join(nodeModules, entry);
    if (entry.startsWith('@') && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
  }
  // npm's own bookkeeping of the install, and the links to packages' commands: nothing in the image reads them.
  for (const entry of ['.bin', '.package-lock.json']) fs.rmSync(path.join(nodeModules, entry), { recursive: true, force: true });
}

const UNUSED_FILE = /\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i;
/** Removes the files a kept package never loads at run time (its nested node_modules are pruned on their own). */
function stripFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') stripFiles(p);
    } else if (UNUSED_FILE.test(entry.name)) {
      removedBytes += fs.lstatSync(p).size;
      fs.rmSync(p);
    }
  }
}

prune(modules);
const keptBytes = sizeOf(modules);
console.log(
  `runtime modules: ${required.size} packages required by the bundles, ${kept.size} kept with what they load ` +
    `(${Math.round(keptBytes / 1e6)} MB); ${removedPackages} packages and ${Math.round(removedBytes / 1e6)} MB removed`,
);
