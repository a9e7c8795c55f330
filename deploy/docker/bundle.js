#!/usr/bin/env node
// Bundles one app into dist/<project root>/main.js for the image: workspace code (@platform/* and relative
// imports) and the npm packages it uses are inlined, but for the few in EXTERNAL below, which come from
// node_modules at run time (the image keeps only those and what they need: deploy/docker/runtime-modules.js).
//
//   node deploy/docker/bundle.js <app> [entry]
//
// <entry> defaults to apps/<app>/src/main.ts (so the bundle is dist/apps/<app>/main.js, where the image's
// entrypoint looks); another entry, e.g. deploy/cli/src/main.ts, is bundled to dist/deploy/cli/main.js. Each
// is the `build` target of its Nx project, whose output is dist/<project root>.
//
// Beside the bundle it writes main.js.meta.json, esbuild's metafile: the files the bundle was made from
// (the production-topology test rebuilds a bundle when one of them is newer) and the packages it requires.
// Every package the workspace code imports, and every package a bundle requires at run time, must be a production
// dependency of package.json: the image installs only those (`npm ci --omit=dev`), so a bundle that requires a
// devDependency fails here, not in a pod.
const fs = require('node:fs');
const path = require('node:path');
const { isBuiltin } = require('node:module');
const esbuild = require('esbuild');

const [app, entryArg] = process.argv.slice(2);
if (!app) {
  console.error('usage: node deploy/docker/bundle.js <app> [entry]');
  process.exit(64);
}
const root = path.resolve(__dirname, '../..');
const entry = path.resolve(root, entryArg ?? path.join('apps', app, 'src/main.ts'));
// <project root>/src/main.ts -> dist/<project root>/main.js
const projectRoot = path.relative(root, path.dirname(path.dirname(entry)));
const outfile = path.join(root, 'dist', projectRoot, 'main.js');

/** "@scope/name/sub/path" -> "@scope/name"; "name/sub" -> "name". */
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * The packages left out of the bundles, loaded from node_modules at run time:
 * - those OpenTelemetry instruments: its instrumentations patch a module as Node's require loads it, which a module
 *   inlined in the bundle never is (express, pg, knex, gRPC and its companions);
 * - those that read their own files at run time, found from their own folder (the PGlite engine's WASM and data,
 *   PDFKit's fonts, Swagger UI's pages), and knex-pglite, which loads PGlite;
 * - pg-protocol, which the embedded engine's worker thread loads by its path (libs/db/src/pglite-worker.ts).
 */
const EXTERNAL = new Set([
  'express',
  'pg',
  'knex',
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  '@grpc/reflection',
  'grpc-health-check',
  '@electric-sql/pglite',
  'knex-pglite',
  'pg-protocol',
  'pdfkit',
  'swagger-ui-dist',
]);

const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@platform/') || isBuiltin(args.path)) return undefined; // tsconfig paths; Node's own
      if (EXTERNAL.has(packageOf(args.path))) return { path: args.path, external: true };
      // An optional dependency of a package that is not installed (a driver knex or a logger could use): its
      // require fails at run time as it did before bundling, inside the try that expects it to.
      try {
        require.resolve(args.path, { paths: [args.resolveDir] });
      } catch {
        return { path: args.path, external: true };
      }
      return undefined;
    });
  },
};

/**
 * Packages the workspace code imports, or the bundle requires at run time, that `npm ci --omit=dev` would not
 * install. (Those the bundle requires only inside a try, as optional, are not installed in development either.)
 */
function missingFromProduction(metafile) {
  const { dependencies = {} } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const required = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const imp of output.imports) if (imp.external && EXTERNAL.has(packageOf(imp.path))) required.add(packageOf(imp.path));
  }
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (file.includes('node_modules/')) continue;
    for (const imp of input.imports) {
      const spec = imp.original ?? imp.path;
      if (/^[./]/.test(spec) || spec.startsWith('@platform/') || isBuiltin(spec)) continue;
      required.add(packageOf(spec));
    }
  }
  return [...required].filter((name) => !(name in dependencies)).sort();
}

esbuild
  .build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    // The image runs a current LTS; the code also runs on the Node 20 of the development machines.
    target: 'node20',
    // Source maps beside the bundles (the image keeps them only when asked: SOURCE_MAPS=true); whitespace and syntax
    // made smaller, names kept, so a stack trace without its map still names the functions.
    sourcemap: true,
    // Mappings only: a stack trace needs file, line and column, not the sources' text, which would be most of a map
    // (17 MB of the launcher's 26) and, under --enable-source-maps, held in memory by every process that loads it.
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    absWorkingDir: root,
    tsconfig: path.join(root, 'tsconfig.base.json'),
    plugins: [externalPackages],
    logLevel: 'warning',
    // Written below, each file whole or not at all: processes started meanwhile (parallel tests, a second
    // `npm start`) may bundle at the same moment and load the bundle while another writes it.
    write: false,
  })
  .then((result) => {
    const missing = missingFromProduction(result.metafile);
    if (missing.length > 0) {
      console.error(
        `${app}: the bundle requires ${missing.join(', ')}, which package.json lists only as a devDependency or not at all; ` +
          'the image installs production dependencies only (npm ci --omit=dev): move it to "dependencies"',
      );
      process.exit(1);
    }
    for (const file of result.outputFiles) writeWhole(file.path, file.contents);
    writeWhole(`${outfile}.meta.json`, JSON.stringify(result.metafile));
    const kib = Math.round(fs.statSync(outfile).size / 1024);
    console.log(`bundled ${app} -> ${path.relative(root, outfile)} (${kib} KiB)`);
  })
  .catch((err) => {
    if (!err.errors) console.error(err);
    process.exit(1);
  });

/** Writes a file under another name, then renames it into place: a reader sees the old file or the new one, whole. */
function writeWhole(file, contents) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}
