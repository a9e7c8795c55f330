// What `npm run simulate -- <flags>` runs (after generating the proto code): the member-cluster simulator,
// src/main.ts, from source, with tsx loaded as a module hook (as deploy/cli/cli.mjs and deploy/local/start.mjs do).
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

process.env.TSX_TSCONFIG_PATH ??= path.resolve(import.meta.dirname, '../../tsconfig.base.json');
await import('tsx');
await import(pathToFileURL(path.join(import.meta.dirname, 'src/main.ts')).href);
