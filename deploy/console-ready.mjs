// What `npm start` runs before the launcher: makes sure the web console's build (and the generated proto code it
// depends on) is there and newer than every input of `nx run console:build`, running that only when it is not.
// Up to date, it prints nothing and takes a fraction of a second instead of Nx's start-up and its report of cache
// hits, so the platform's own lines (the URL, a generated admin password) are what a person sees. Nx's output
// goes to stderr, as the launcher's progress does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newest, ROOT, runNx } from './freshness.mjs';

const at = (p) => path.join(ROOT, p);
// When the last successful build started; kept outside dist/apps/console, which is Nx's output there.
const stamp = at('node_modules/.cache/platform/console-built');
// Produced by the build's own dependencies from the inputs below: their times say nothing about staleness.
const generated = new Set([at('libs/proto/src/gen'), at('apps/console/src/api/gen')]);

/** The inputs of console:build, its generate-api step and proto:generate (apps/console/project.json, nx.json). */
function inputsChangedAt() {
  const libs = fs.readdirSync(at('libs')).map((lib) => at(`libs/${lib}/src`));
  return Math.max(
    ...[at('apps/console'), at('apps/gateway/src'), ...libs, at('proto'), at('tsconfig.base.json'), at('package-lock.json')].map((p) =>
      newest(p, generated),
    ),
  );
}

const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
const outputsThere = ['dist/apps/console/index.html', 'apps/console/src/api/gen/schema.d.ts', 'libs/proto/src/gen'].every((p) =>
  fs.existsSync(at(p)),
);
if (built === 0 || !outputsThere || inputsChangedAt() > built) {
  const startedAt = new Date();
  runNx('console:build', '--output-style=stream-without-prefixes');
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, '');
  // The build's start, not its end: an input saved while it ran is newer, so the next start builds again.
  fs.utimesSync(stamp, startedAt, startedAt);
}
