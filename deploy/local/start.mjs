// What `npm start` runs (after building the web console and the launcher's bundle when they are stale): the
// launcher, dist/deploy/local/main.js bundled from src/start.ts, in this very process, which would otherwise put a
// process of its own between npm and the server. npm's script execs node, so the process that started the server is
// npm itself, and main.ts stops the platform when it is gone (e.g. `kill -9` of npm). See docs/decisions.md, D16.
import { createRequire } from 'node:module';
import { LAUNCHER_BUNDLE } from '../launcher-ready.mjs';

// Stack traces name the TypeScript sources (the bundle carries their source map), as they did under tsx.
process.setSourceMapsEnabled(true);
// Required, not imported: the bundle is CommonJS, and importing it had Node's ESM loader parse its 11 MB twice more
// (to tell its format, and to find its exports): about 0.7 s of CPU at every start.
createRequire(import.meta.url)(LAUNCHER_BUNDLE);
