// What `npm start` runs (after generating the proto code): the launcher, src/main.ts, in this very process,
// with tsx loaded as a module hook instead of the `tsx` command, which would put a process of its own between
// npm and the server. npm's script execs node, so the process that started the server is npm itself, and
// main.ts stops the platform when it is gone (e.g. `kill -9` of npm). See docs/decisions.md, D16.
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

process.env.TSX_TSCONFIG_PATH ??= path.resolve(import.meta.dirname, '../../tsconfig.base.json');
await import('tsx');
// Tracing first (when OTEL_EXPORTER_OTLP_ENDPOINT is set): one SDK for every app of the process, started before
// http, grpc, pg and knex load so its instrumentations can patch them (libs/telemetry/src/register.ts).
await import(pathToFileURL(path.join(import.meta.dirname, '../../libs/telemetry/src/register.ts')).href);
await import(pathToFileURL(path.join(import.meta.dirname, 'src/main.ts')).href);
