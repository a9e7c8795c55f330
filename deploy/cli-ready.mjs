// What `npm run cli` runs before the admin CLI: makes sure its bundle (dist/deploy/cli/main.js, the one `npm run build`
// makes for the image) is there and newer than every file it was made from, bundling again only when it is not
// (about a second; freshness.mjs, bundleReady). The CLI then starts in well under a second instead of having tsx
// compile its TypeScript, every app's included, on each call.
import * as path from 'node:path';
import { bundleReady, ROOT } from './freshness.mjs';

export const CLI_BUNDLE = path.join(ROOT, 'dist/deploy/cli/main.js');

await bundleReady('cli', 'deploy/cli/src/main.ts', CLI_BUNDLE);
