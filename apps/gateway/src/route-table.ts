import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { RequestHandler } from 'express';

/** A row as the table serves it: its method, its Express-style path and what answers it. */
export interface TableRow {
  method: string;
  path: string;
  handler: RequestHandler;
}

/** What the table keeps with each path: the row's handler and path, and the name of its trailing wildcard, if any. */
interface Found {
  handler: RequestHandler;
  path: string;
  wildcard: string | undefined;
}

/** Longer than any URL Node takes (its headers are at most 16 KB): a long parameter is refused by its row's validation. */
const MAX_PARAM_LENGTH = 64 * 1024;

/**
 * Every row's handler by method and path in one radix tree (find-my-way, the router of Fastify): a request finds its
 * row in one walk of its path, where Express tried each row's pattern in turn (in a profile of the org GET under load,
 * a tenth of the gateway's time went to that walk). It matches as the Express routers did: paths in any case
 * (parameters keep theirs), a trailing slash ignored, a literal segment before a parameter (Express took the first row
 * declared, and the rows declare their literals first), and a trailing wildcard (`*key`) answers its segments, as
 * Express 5 does, and HEAD the GET row. A request no row matches goes on to `next`.
 */
export function routeTable(rows: readonly TableRow[]): RequestHandler {
  const table = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH });
  for (const { method, path, handler } of rows) {
    const wildcard = /\/\*(\w+)$/.exec(path)?.[1];
    const pattern = wildcard === undefined ? path : path.slice(0, -wildcard.length);
    table.on(method.toUpperCase() as HTTPMethod, pattern, () => undefined, { handler, path, wildcard } satisfies Found);
  }
  return (req, res, next) => {
    // HEAD is answered by the GET row, as Express does (Node leaves the body out).
    const found = table.find(req.method as HTTPMethod, req.path) ?? (req.method === 'HEAD' ? table.find('GET', req.path) : null);
    if (!found) {
      // A path that is not validly percent-encoded is the client's mistake (400), as Express's routers answered it.
      decodeURIComponent(req.path);
      return next();
    }
    const { handler, path, wildcard } = found.store as Found;
    // The request's trace names its row (`http.route`), as it did when Express's routers matched it: the HTTP
    // instrumentation reads the route from the request's RPC metadata when the answer is sent.
    const traced = getRPCMetadata(context.active());
    if (traced?.type === RPCType.HTTP) traced.route = `${req.baseUrl}${path}`;
    const params: Record<string, string | string[]> = { ...(found.params as Record<string, string>) };
    if (wildcard !== undefined) {
      params[wildcard] = String(params['*']).split('/');
      delete params['*'];
    }
    req.params = params as typeof req.params;
    return handler(req, res, next);
  };
}
