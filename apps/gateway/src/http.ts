import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { DomainError, NotFoundError, toHttpError, truncate, ValidationError } from '@platform/errors';
import { HttpMetrics, publicLink, publicUrlOf, type DependencyCheck, type Logger } from '@platform/service-kit';
import { addressFailureLimits } from './authentication';
import type { Backends } from './backends';
import type { GatewayConfig } from './config';
import { compressAnswers } from './compress';
import { serveRoute } from './edge';
import { webFrontend } from './frontend';
import { gateOpen } from './gating';
import { API_DOCS_PATH, API_DOCUMENT_PATH, apiDocument, apiReference } from './openapi';
import { addOperationalRoutes } from './operations';
import type { Route } from './route';
import { routeTable } from './route-table';
import { LocalSignInFailures, type SignInFailures } from './sign-in-failures';
import type { TokenCache } from './token-cache';

const LISTENER_ROOT = '/marketplace/api/v1';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** Routes registered on this deployment: the gate is applied here and nowhere else. */
export function registeredRoutes(routes: Route[], config: GatewayConfig): Route[] {
  return routes.filter((r) => gateOpen(r.gate, config));
}

/** The entry URL: /api/v1, the webhook listener on marketplace deployments, and the web frontend. */
export function createGatewayHttp(opts: {
  routes: Route[];
  backends: Backends;
  config: GatewayConfig;
  log: Logger;
  /** What /readyz asks (operations.ts backendChecks); none: ready whenever it runs. */
  checks?: DependencyCheck[];
  /** Who recent tokens belong to; none: every request asks orgs-teams. */
  tokens?: TokenCache;
  /** Where failed Basic-auth attempts per address are counted; none: in this process's memory. */
  addressFailures?: SignInFailures;
}) {
  const { backends, config, log } = opts;
  const routes = registeredRoutes(opts.routes, config);
  const addressFailures = opts.addressFailures ?? new LocalSignInFailures(addressFailureLimits(config));
  const deps = { backends, config, log, addressFailures, tokens: opts.tokens };
  const app = express();
  app.disable('x-powered-by');
  // No generated ETags: Express would hash every answer (a month's usage document is ~200 KB of sha1 per request)
  // for conditional GETs no API client makes; the one row with revalidation (branding) sets its own ETag.
  app.set('etag', false);
  app.set('query parser', 'extended');
  // X-Forwarded-For names the client only when TRUST_PROXY says which peers to believe; otherwise req.ip is the peer.
  app.set('trust proxy', config.TRUST_PROXY ?? false);

  // The access line's fields are fixed and hold no secret (the row's path, never the URL): written without the
  // redaction every other line goes through, which walked each field against every redacted path (a tenth of a
  // request's CPU on the org GET).
  const access = log.child({}, { redact: [] });
  app.use((req, res, next) => {
    const incoming = req.get('x-request-id');
    req.requestId = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.set('x-request-id', req.requestId);
    accessLog(access, req, res);
    next();
  });
  app.use(compressAnswers());

  // The absolute address of the API document, named in every error body: on the public URL, not the request's Host.
  const documentAddress = publicLink(publicUrlOf(config), API_DOCUMENT_PATH);
  const documentUrl = () => documentAddress;
  addOperationalRoutes(app, { checks: opts.checks ?? [], metricsOnHttp: config.METRICS_ON_HTTP_PORT, documentUrl });

  const api = express.Router();
  api.use(express.json({ limit: '1mb' }));
  const document = apiDocument(routes);
  api.get(API_DOCUMENT_PATH.replace('/api/v1', ''), (_req, res) => {
    res.locals.route = API_DOCUMENT_PATH;
    res.json(document);
  });
  api.use(API_DOCS_PATH.replace('/api/v1', ''), apiReference());
  // Every row in one radix tree: a request finds its row in one walk of its path (route-table.ts).
  api.use(routeTable(routes.map((route) => ({ method: route.method, path: route.path, handler: serveRoute(route, deps) }))));
  api.use((req) => {
    throw new NotFoundError(`no route for ${req.method} /api/v1${truncate(req.path, 128)}`);
  });
  app.use('/api/v1', api);

  if (gateOpen('marketplace', config)) {
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
          error: (_err, req, res) => {
            const out = res as Response;
            if (out.headersSent) return;
            out.status(503).json({ message: 'marketplace-listener is unavailable', url: documentUrl() });
          },
        },
      }),
    );
  }

  app.use(...webFrontend(backends, config));

  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const mapped = toHttpError(asDomainError(err));
    // Only faults are errors; a refused or malformed request is the client's, and the access log has it. A backend
    // being unavailable is logged once per outage by its client (backend-state.ts), not once per request.
    if (mapped.log && !isUnavailable(err)) log.error({ err, requestId: req.requestId }, 'request failed');
    // Every error body names the API document (the spec gives it for authorization errors; it helps on all).
    res
      .status(mapped.status)
      .set(mapped.headers)
      .json({ ...mapped.body, url: documentUrl() });
  };
  app.use(onError);
  return app;
}


const httpMetrics = new HttpMetrics('gateway');

/**
 * One line per request when it is answered: request id, method, the row's path (never the raw URL, which
 * may carry `?token=`), status, duration, the client's address and the user (or, for Basic credentials, the login
 * tried, so a refused sign-in says who was tried from where). 5xx are warnings; the fault itself is logged once as
 * an error; a refused sign-in (401 for Basic credentials) is a warning too; probes and scrapes of the operational paths are debug. The same
 * route, method and status are counted in http_server_requests_total and http_server_request_duration_seconds.
 */
function accessLog(log: Logger, req: express.Request, res: Response): void {
  const started = process.hrtime.bigint();
  const { requestId, method } = req;
  res.once('finish', () => {
    const status = res.statusCode;
    const line = {
      requestId,
      method,
      route: (res.locals.route as string | undefined) ?? 'unmatched',
      status,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      client: req.ip,
      user: res.locals.user as string | undefined,
      login: res.locals.user ? undefined : (res.locals.login as string | undefined),
    };
    httpMetrics.record(line.route, method, status, line.durationMs / 1000);
    if (status >= 500) log.warn(line, 'request');
    else if (status === 401 && line.login) log.warn(line, 'request'); // a refused sign-in
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
