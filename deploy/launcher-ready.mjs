// What `npm start` runs before the launcher: makes sure the launcher's bundle (dist/deploy/local/main.js, every app,
// library and npm package inlined but the few deploy/docker/bundle.js keeps external) is there and newer than every
// file it was made from, bundling again only when it is not (about a second; freshness.mjs, bundleReady). The platform then runs plain
// JavaScript, as the images do, rather than TypeScript transformed at load by tsx: the transformed sources were 36 MB
// of the live heap, which every collection walked.
import * as path from 'node:path';
import { bundleReady, ROOT } from './freshness.mjs';
// The bundle is made from the generated proto code too: generated first when missing or older than the protos.
import './proto-ready.mjs';

export const LAUNCHER_BUNDLE = path.join(ROOT, 'dist/deploy/local/main.js');

await bundleReady('local', 'deploy/local/src/start.ts', LAUNCHER_BUNDLE);
