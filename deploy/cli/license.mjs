// What `npm run license -- <command>` runs: the offline license verifier, src/license-main.ts, from source, with
// tsx loaded as a module hook (as cli.mjs does).
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

process.env.TSX_TSCONFIG_PATH ??= path.resolve(import.meta.dirname, '../../tsconfig.base.json');
await import('tsx');
await import(pathToFileURL(path.join(import.meta.dirname, 'src/license-main.ts')).href);
