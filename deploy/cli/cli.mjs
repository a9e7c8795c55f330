// What `npm run cli -- <command>` runs (after generating the proto code): the admin CLI, src/main.ts, from
// source, with tsx loaded as a module hook (as deploy/local/start.mjs does). The image runs the bundle instead.
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

process.env.TSX_TSCONFIG_PATH ??= path.resolve(import.meta.dirname, '../../tsconfig.base.json');
await import('tsx');
await import(pathToFileURL(path.join(import.meta.dirname, 'src/main.ts')).href);
