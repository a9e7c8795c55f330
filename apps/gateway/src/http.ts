import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { DomainError, InputError, NotAllowedError, NotFoundError, toHttpError, truncate, ValidationError } from '@platform/errors';
import { type Logger } from '@platform/service-kit';
import type { Backends } from './backends';
import type { GatewayConfig } from './config';
import { gateOpen } from './gating';
import { API_DOCUMENT_PATH, apiDocument } from './openapi';
import type { Route, RouteContext, RouteResult } from './route';
import { addressFailureLimiter, authenticate, resolveOrg } from './authentication';
import type { FailureLimiter } from '@platform/service-kit';
import { assertBoundedInput, assertNoNul } from './validation';
import { webFrontend } from './frontend';

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
export function createGatewayHttp(opts: { routes: Route[]; backends: Backends; config: GatewayConfig; log: Logger }) {
  const { backends, config, log } = opts;
  const routes = registeredRoutes(opts.routes, config);
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  // X-Forwarded-For names the client only when TRUST_PROXY says which peers to believe; otherwise req.ip is the peer.
  app.set('trust proxy', config.TRUST_PROXY ?? false);
  const addressFailures = addressFailureLimiter(config);

  app.use((req, res, next) => {
    const incoming = req.get('x-request-id');
    req.requestId = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.set('x-request-id', req.requestId);
    next();
  });

  const api = express.Router();
  api.use(express.json({ limit: '1mb' }));
  api.get(API_DOCUMENT_PATH.replace('/api/v1', ''), (_req, res) => {
    res.json(apiDocument(routes));
  });
  for (const route of routes) {
    api[route.method](route.path, (req: Request, res: Response, next: NextFunction) => {
      serve(route, req, { backends, config, requestId: req.requestId }, addressFailures).then((result) => {
        res.status(result.status ?? 200).set(result.headers ?? {});
        if (result.body === undefined) res.end();
        else if (Buffer.isBuffer(result.body))
          res.send(result.body); // bytes (signed objects) go out as they are
        else res.json(result.body);
      }, next);
    });
  }
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
          error: (_err, _req, res) => {
            const out = res as Response;
            if (out.headersSent) return;
            out.status(503).json({ message: 'marketplace-listener is unavailable' });
          },
        },
      }),
    );
  }

  app.use(webFrontend(backends, config));

  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const mapped = toHttpError(asDomainError(err));
    if (mapped.log) log.error({ err, requestId: req.requestId }, 'request failed');
    // Authentication and authorization errors carry the address of the API document (spec section 7.1).
    if (mapped.status === 401 || mapped.status === 403) mapped.body.url = `${req.protocol}://${req.get('host')}${API_DOCUMENT_PATH}`;
    res.status(mapped.status).set(mapped.headers).json(mapped.body);
  };
  app.use(onError);
  return app;
}

/** Body-parser failures become the spec's statuses: malformed JSON is 422, never 500. */
function asDomainError(err: unknown): unknown {
  const type = (err as { type?: string }).type;
  if (type === 'entity.parse.failed') return new ValidationError('malformed JSON body');
  if (type === 'entity.too.large') return new DomainError('validation', 'request body too large', { httpStatus: 413 });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ValidationError('unsupported body encoding');
  return err;
}

/** Runs one route: authenticate, resolve the org context, check the route's permission, then handle. */
async function serve(
  route: Route,
  req: Request,
  base: Omit<RouteContext, 'caller' | 'org'>,
  addressFailures: FailureLimiter,
): Promise<RouteResult> {
  assertNoNul(req);
  assertBoundedInput(req);
  const ctx: RouteContext = { ...base };
  ctx.caller = await authenticate(route, req, base.backends, base.requestId, addressFailures);
  if (route.org) ctx.org = await resolveOrg(route, req, base.backends, base.requestId, ctx.caller?.id ?? 0);
  if (route.check) {
    if (!ctx.caller) throw new NotAllowedError(`${route.check.permission} requires a signed-in user`);
    const on = route.check.on;
    let objectId = 0;
    if (on === 'org') {
      if (!ctx.org) throw new InputError('the org query parameter is required', [{ field: 'query.org', description: 'required' }]);
      objectId = ctx.org.id;
    } else if (on !== 'site') {
      objectId = await on(req, ctx);
    }
    const { allowed } = await base.backends.authz.checkPermission(
      { userId: ctx.caller.id, permission: route.check.permission, objectId },
      { requestId: base.requestId },
    );
    if (!allowed) throw new NotAllowedError(route.check.denied ?? `you do not have the ${route.check.permission} permission`);
  }
  return route.handle(req, ctx);
}
