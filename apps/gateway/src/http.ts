import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import bodyParser from 'body-parser';
import express from 'express';
import { DomainError, NotFoundError, toHttpError, truncate, UnavailableError, ValidationError, type HttpError } from '@platform/errors';
import { HttpMetrics, publicLink, publicUrlOf, type DependencyCheck, type Logger } from '@platform/service-kit';
import { apiReference } from './api-reference';
import { ApiRequest, clientAddress, compileTrust, type Incoming, type Outgoing, type Trust } from './api-request';
import { addressFailureLimits } from './authentication';
import type { Backends } from './backends';
import type { GatewayConfig } from './config';
import { compressAnswers } from './compress';
import { serveRoute } from './edge';
import { webFrontend } from './frontend';
import { gateOpen } from './gating';
import { API_DOCS_PATH, API_DOCUMENT_PATH, apiDocument } from './openapi';
import { addOperationalRoutes } from './operations';
import { securePages } from './page-headers';
import { sendBody } from './replies';
import type { Route } from './route';
import { routeTable } from './route-table';
import type { OpenFgaApi } from './sections/openfga/api';
import { LocalSignInFailures, type SignInFailures } from './sign-in-failures';

const LISTENER_ROOT = '/marketplace/api/v1';
const API_ROOT = '/api/v1';
/** The API root at the start of a request's URL, in any case, as Express's mount matched it; and the rest. */
const UNDER_API_ROOT = /^(\/api\/v1)(?=[/?]|$)([^?]*)\??(.*)$/is;
/** The API reference's pages, which Express serves (openapi.ts). */
const UNDER_API_DOCS = /^\/docs(?:\/|$)/i;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** 404 for a path under the API root that no row (nor the reference) answers. */
const noRoute = (method: string | undefined, path: string) => new NotFoundError(`no route for ${method} ${API_ROOT}${truncate(path, 128)}`);

/** Routes registered on this deployment: the gate is applied here and nowhere else. */
export function registeredRoutes(routes: Route[], config: GatewayConfig): Route[] {
  return routes.filter((r) => gateOpen(r.gate, config));
}

/**
 * The entry URL: /api/v1, OpenFGA's API under /openfga, the webhook listener on marketplace deployments, and the web
 * frontend.
 *
 * Every request gets its request id, its access line and, when it accepts an encoding, compression. The API's rows
 * (and its document) are then answered on node's own request and response: their row found in the route table, the
 * JSON body read, the edge run (edge.ts). Express, whose request and response objects cost more than a row's own work
 * (docs/benchmarks.md), serves only the rest: the operational paths, the API reference, the listener's proxy and the
 * web console.
 */
export function createGatewayHttp(opts: {
  routes: Route[];
  backends: Backends;
  config: GatewayConfig;
  log: Logger;
  /** What /readyz asks (operations.ts backendChecks); none: ready whenever it runs. */
  checks?: DependencyCheck[];
  /** Forgets kept tokens of accounts at once (orgs-teams' read model); none: nothing is kept. */
  forgetTokens?: (accountIds?: number[]) => void;
  /** Where failed Basic-auth attempts per address are counted; none: in this process's memory. */
  addressFailures?: SignInFailures;
  /** OpenFGA's API for service accounts under /openfga (sections/openfga); none: not served. */
  openfga?: OpenFgaApi;
}): RequestListener {
  const { backends, config, log } = opts;
  const routes = registeredRoutes(opts.routes, config);
  const addressFailures = opts.addressFailures ?? new LocalSignInFailures(addressFailureLimits(config));
  const deps = { backends, config, log, addressFailures, forgetTokens: opts.forgetTokens };
  // X-Forwarded-For names the client only when TRUST_PROXY says which peers to believe; otherwise the client is the peer.
  const trust = compileTrust(config.TRUST_PROXY);
  // The absolute address of the API document, named in every error body: on the public URL, not the request's Host.
  const documentAddress = publicLink(publicUrlOf(config), API_DOCUMENT_PATH);
  const documentUrl = () => documentAddress;
  const fail = failure(log, documentUrl);

  // Every row in one radix tree, the API document among them: a request finds its row in one walk of its path. The
  // document is made on its first reader (every row's schema turned into JSON Schema is a good part of a start).
  let made: object | undefined;
  const document = () => (made ??= apiDocument(routes));
  const table = routeTable([
    {
      method: 'get',
      path: API_DOCUMENT_PATH.slice(API_ROOT.length),
      handler: async (req) => {
        req.res.locals.route = API_DOCUMENT_PATH;
        sendBody(req.res, document());
      },
    },
    ...routes.map((route) => ({ method: route.method, path: route.path, handler: serveRoute(route, deps) })),
  ]);
  const readJson = bodyParser.json({ limit: '1mb' });
  const serveApi = async (req: Incoming, res: Outgoing, baseUrl: string, path: string, search: string) => {
    const api = new ApiRequest(req, res, baseUrl, path || '/', search, trust);
    await new Promise<void>((resolve, reject) => readJson(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    const served = table.serve(api);
    if (!served) throw noRoute(req.method, api.path);
    await served;
  };

  const others = otherPaths(opts, documentUrl, fail, document);
  const compress = compressAnswers();
  // The access line's fields are fixed and hold no secret (the row's path, never the URL): written without the
  // redaction every other line goes through, which walked each field against every redacted path (a tenth of a
  // request's CPU on the org GET).
  const access = log.child({}, { redact: [] });
  return (request, response) => {
    const req = request as Incoming;
    const res = response as Outgoing;
    const incoming = req.headers['x-request-id'];
    req.requestId = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', req.requestId);
    securePages(res);
    res.locals = Object.create(null) as Record<string, unknown>;
    accessLog(access, req, res, trust);
    const route = () => {
      const api = UNDER_API_ROOT.exec(req.url ?? '');
      if (!api || UNDER_API_DOCS.test(api[2])) return void (opts.openfga?.serve(req, res, trust) || others(req, res));
      serveApi(req, res, api[1], api[2], api[3]).catch((err: unknown) => fail(err, req, res));
    };
    // A client that accepts no encoding gets every answer as it is: the middleware, which wraps the response's writes
    // whatever the client accepts, is not put in its way. The answer still says it would differ for another client.
    if (req.headers['accept-encoding']) return void compress(req, res, route);
    res.setHeader('Vary', 'Accept-Encoding');
    route();
  };
}

/** What Express serves: the operational paths, the API reference, the listener's proxy, the web console. */
function otherPaths(
  opts: Parameters<typeof createGatewayHttp>[0],
  documentUrl: () => string,
  fail: (err: unknown, req: Incoming, res: Outgoing) => void,
  document: () => object,
): (req: Incoming, res: Outgoing) => void {
  const { backends, config } = opts;
  const app = express();
  app.disable('x-powered-by');
  // No generated ETags: Express would hash every answer for conditional GETs no client makes of these paths.
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', config.TRUST_PROXY ?? false);
  addOperationalRoutes(app, { checks: opts.checks ?? [], metricsOnHttp: config.METRICS_ON_HTTP_PORT, documentUrl });
  app.use(API_DOCS_PATH, apiReference(document));
  // Under the API root nothing else is Express's: what the reference does not answer is no route.
  app.use(API_ROOT, (req) => {
    throw noRoute(req.method, req.path);
  });

  if (gateOpen('marketplace', config)) {
    // Loaded only where the marketplace listener is reachable (a marketplace deployment).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createProxyMiddleware } = require('http-proxy-middleware') as typeof import('http-proxy-middleware');
    app.use(
      createProxyMiddleware({
        target: config.MARKETPLACE_LISTENER_HTTP_URL,
        pathFilter: LISTENER_ROOT,
        xfwd: true,
        proxyTimeout: config.BACKEND_DEADLINE_MS,
        on: {
          // The listener believes X-Forwarded-For from us only (MARKETPLACE_TRUSTED_PROXIES): it gets the client
          // as TRUST_PROXY lets us see it, never a header the client made up.
          proxyReq: (proxyReq, req) => {
            const ip = (req as express.Request).ip;
            if (ip) proxyReq.setHeader('x-forwarded-for', ip);
          },
          error: (_err, req, res) => fail(new UnavailableError('marketplace-listener is unavailable'), req as Incoming, res as Outgoing),
        },
      }),
    );
  }

  app.use(...webFrontend(backends, config));
  app.use(((err, req, res, _next) => fail(err, req as unknown as Incoming, res as unknown as Outgoing)) as express.ErrorRequestHandler);
  return (req, res) => app(req, res);
}

/**
 * How a request that failed is answered: the spec's status and a JSON body naming the API document (the spec gives
 * it for authorization errors; it helps on all). Only faults are errors in the log; a refused or malformed request is
 * the client's, and the access line has it. A backend being unavailable is logged once per outage by its client
 * (backend-state.ts), not once per request. A failure after the answer began (a stream cut off) ends the connection.
 */
function failure(log: Logger, documentUrl: () => string) {
  return (err: unknown, req: Incoming, res: Outgoing): void => {
    const mapped = outcomeUnknown(toHttpError(asDomainError(err)), req.method);
    if (mapped.log && !isUnavailable(err)) log.error({ err, requestId: req.requestId }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.statusCode = mapped.status;
    for (const [name, value] of Object.entries(mapped.headers ?? {})) res.setHeader(name, value);
    sendBody(res, { ...mapped.body, url: documentUrl() });
  };
}

/**
 * A request that may change something and whose backend did not answer in time (504) may have been carried out: its
 * answer says that the outcome is unknown and how to find out, never that it failed. A backend that made a change
 * answers it before the deadline (announcingWrites), so this is left for a backend that was itself held up.
 */
function outcomeUnknown(mapped: HttpError, method = 'GET'): HttpError {
  if (mapped.status !== 504 || ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase())) return mapped;
  const message = `${mapped.body.message}: whether the change was made is unknown; read it back before repeating the request`;
  return { ...mapped, body: { ...mapped.body, message } };
}

const httpMetrics = new HttpMetrics('gateway');

/**
 * One line per request when it is answered: request id, method, the row's path (never the raw URL, which
 * may carry `?token=`), status, duration, the client's address and the user (or, for Basic credentials, the login
 * tried, so a refused sign-in says who was tried from where). 5xx are warnings; the fault itself is logged once as
 * an error; a refused sign-in (401 for Basic credentials) is a warning too; probes and scrapes of the operational paths are debug. The same
 * route, method and status are counted in http_server_requests_total and http_server_request_duration_seconds.
 */
function accessLog(log: Logger, req: Incoming, res: Outgoing, trust: Trust): void {
  const started = process.hrtime.bigint();
  const { requestId, method = 'GET' } = req;
  res.once('finish', () => {
    const status = res.statusCode;
    const line = {
      requestId,
      method,
      route: (res.locals.route as string | undefined) ?? 'unmatched',
      status,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      client: clientAddress(req, trust),
      user: res.locals.user as string | undefined,
      login: res.locals.user ? undefined : (res.locals.login as string | undefined),
    };
    httpMetrics.record(line.route, method, status, line.durationMs / 1000);
    if (status >= 500) log.warn(line, 'request');
    else if (status === 401 && line.login)
      log.warn(line, 'request'); // a refused sign-in
    else if (res.locals.operational) log.debug(line, 'request');
    else log.info(line, 'request');
  });
}

/** A backend that did not answer: its outage is logged by its client, once. */
const isUnavailable = (err: unknown) => err instanceof DomainError && err.kind === 'unavailable';

/**
 * What Express and body-parser throw for a malformed request, as the spec's statuses: an undecodable path
 * is 400, malformed JSON 422, a body that cannot be decoded 400 (415 for an encoding we do not know), one
 * over the limit 413 — never 500.
 */
function asDomainError(err: unknown): unknown {
  if (err instanceof URIError) return new DomainError('input', 'the path is not validly percent-encoded');
  const { type, status } = err as { type?: string; status?: number };
  switch (type) {
    case 'entity.parse.failed':
      return new ValidationError('malformed JSON body');
    case 'entity.too.large':
      return new DomainError('validation', 'request body too large', { httpStatus: 413 });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new DomainError('validation', 'unsupported body encoding', { httpStatus: 415 });
    case 'request.aborted':
      return new DomainError('input', 'the request was aborted');
  }
  // Other body-parser and stream failures (a gzip body that does not inflate, a length that does not match).
  if (typeof status === 'number' && status >= 400 && status < 500 && !(err instanceof DomainError)) {
    return new DomainError('input', 'the request body could not be read', { httpStatus: status });
  }
  return err;
}
