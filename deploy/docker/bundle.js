#!/usr/bin/env node
// Bundles one app into dist/apps/<app>/main.js for the image: workspace code (@platform/* and relative
// imports) is inlined, npm packages stay external and come from node_modules at run time.
const path = require('node:path');
const esbuild = require('esbuild');

const app = process.argv[2];
if (!app) {
  console.error('usage: node deploy/docker/bundle.js <app>');
  process.exit(64);
}
const root = path.resolve(__dirname, '../..');

const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@platform/')) return undefined; // resolved through tsconfig paths
      return { path: args.path, external: true };
    });
  },
};

esbuild
  .build({
    entryPoints: [path.join(root, 'apps', app, 'src/main.ts')],
    outfile: path.join(root, 'dist/apps', app, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    tsconfig: path.join(root, 'tsconfig.base.json'),
    plugins: [externalPackages],
    logLevel: 'warning',
  })
  .then(() => console.log(`bundled ${app} -> dist/apps/${app}/main.js`))
  .catch(() => process.exit(1));
