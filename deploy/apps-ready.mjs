// Makes sure the bundles of the apps named on the command line (dist/apps/<app>/main.js, as `npm run build` makes
// them for the image) are there and newer than every file they were made from, bundling again only those that are
// not (about a second each; freshness.mjs, bundleReady), and prints each bundle's path on a line of its own, in the
// order asked (the bundler's own output goes to stderr). For what runs an app as its own process, as its image does:
// plain JavaScript that starts in a fraction of a second, where tsx would first compile the app's TypeScript.
import * as path from 'node:path';
import { bundleReady, ROOT } from './freshness.mjs';

for (const app of process.argv.slice(2)) {
  const bundle = path.join(ROOT, 'dist/apps', app, 'main.js');
  await bundleReady(app, `apps/${app}/src/main.ts`, bundle);
  process.stdout.write(`${bundle}\n`);
}
