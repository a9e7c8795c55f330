import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { ApiRequest } from './api-request';

/** What answers a row: the request, once the table has set its path parameters. */
export type RowHandler = (req: ApiRequest) => Promise<void>;

/** A row as the table serves it: its method, its Express-style path (below the API root) and what answers it. */
export interface TableRow {
  method: string;
  path: string;
  handler: RowHandler;
}

/** What the table keeps with each path: the row's handler and path, and the name of its trailing wildcard, if any. */
interface Found {
  handler: RowHandler;
  path: string;
  wildcard: string | undefined;
}

/** Longer than any URL Node takes (its headers are at most 16 KB): a long parameter is refused by its row's validation. */
const MAX_PARAM_LENGTH = 64 * 1024;

/**
 * Every row's handler by method and path in one radix tree (find-my-way, the router of Fastify): a request finds its
 * row in one walk of its path. It matches as Express's routers did before it: paths in any case (parameters keep
 * theirs), a trailing slash ignored, a literal segment before a parameter (the rows declare their literals first),
 * a trailing wildcard (`*key`) answers its segments, as Express 5 does, and HEAD the GET row. `serve` answers whether
 * a row took the request; a path no row has that is not validly percent-encoded throws URIError (400).
 */
export function routeTable(rows: readonly TableRow[]): { serve(req: ApiRequest): Promise<void> | undefined } {
  const table = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH });
  for (const { method, path, handler } of rows) {
    const wildcard = /\/\*(\w+)$/.exec(path)?.[1];
    const pattern = wildcard === undefined ? path : path.slice(0, -wildcard.length);
    table.on(method.toUpperCase() as HTTPMethod, pattern, () => undefined, { handler, path, wildcard } satisfies Found);
  }
  return {
    serve(req) {
      // HEAD is answered by the GET row, as Express did (Node leaves the body out).
      const found = table.find(req.method as HTTPMethod, req.path) ?? (req.method === 'HEAD' ? table.find('GET', req.path) : null);
      if (!found) {
        decodeURIComponent(req.path);
        return undefined;
      }
      const { handler, path, wildcard } = found.store as Found;
      // The request's trace names its row (`http.route`): the HTTP instrumentation reads it from the request's RPC
      // metadata when the answer is sent.
      const traced = getRPCMetadata(context.active());
      if (traced?.type === RPCType.HTTP) traced.route = `${req.baseUrl}${path}`;
      const params: Record<string, string | string[]> = { ...(found.params as Record<string, string>) };
      if (wildcard !== undefined) {
        params[wildcard] = String(params['*']).split('/');
        delete params['*'];
      }
      req.params = params;
      return handler(req);
    },
  };
}
