import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The bundles of these apps (dist/apps/<app>/main.js), made fresh first by deploy/apps-ready.mjs: for a test that runs
 * an app as its own process, as its image runs it. Throws with the bundler's output when one cannot be made.
 */
export function appBundles<A extends string>(apps: readonly A[]): Record<A, string> {
  const ready = spawnSync(process.execPath, [path.join(ROOT, 'deploy/apps-ready.mjs'), ...apps], { cwd: ROOT, encoding: 'utf8' });
  if (ready.status !== 0) throw new Error(`the bundles of ${apps.join(', ')} could not be made:\n${ready.stderr}`);
  const paths = ready.stdout.trim().split('\n');
  return Object.fromEntries(apps.map((app, i) => [app, paths[i]])) as Record<A, string>;
}
