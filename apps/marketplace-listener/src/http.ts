import express, { type ErrorRequestHandler } from 'express';
import { NotFoundError, toHttpError } from '@platform/errors';
import {
  answerLive,
  answerReady,
  expressRoute,
  HEALTH_PATHS,
  HttpMetrics,
  PLATFORM_VERSION,
  type DependencyCheck,
  type Logger,
} from '@platform/service-kit';
import { bodyError, notificationRoutes, type NotificationDeps } from './notifications/routes';

/** Root of the webhook listener. */
export const LISTENER_ROOT = '/marketplace/api/v1';

const httpMetrics = new HttpMetrics('marketplace-listener');

export interface ListenerHttpOptions {
  log: Logger;
  checks?: DependencyCheck[];
  /** The notification, claimable-check and download routes; absent: only /version (tests of the root). */
  notifications?: Omit<NotificationDeps, 'log'>;
  /** Express's `trust proxy`: the peers whose X-Forwarded-For names the client (MARKETPLACE_TRUSTED_PROXIES). */
  trustedProxies?: string[] | false;
}

/**
 * The listener's HTTP API. Errors use the webhook ApiError body `{message}`. `/healthz` and `/readyz` (its
 * database) are answered beside the API root; requests are counted in the http_server_* metrics.
 */
export function createListenerHttp(opts: ListenerHttpOptions): express.Express {
  const { log } = opts;
  const app = express();
  app.disable('x-powered-by');
  // Without trusted proxies req.ip is the socket's peer and X-Forwarded-* are ignored.
  app.set('trust proxy', opts.trustedProxies ?? false);
  app.use(httpMetrics.middleware(expressRoute));
  app.get(HEALTH_PATHS.live, (_req, res) => answerLive(res));
  app.get(HEALTH_PATHS.ready, (_req, res) => answerReady(res, opts.checks ?? []));
  const api = express.Router();
  api.use(express.json({ limit: '256kb' }));
  api.get('/version', (_req, res) => {
    res.json({ version: PLATFORM_VERSION });
  });
  if (opts.notifications) api.use(notificationRoutes({ ...opts.notifications, log }));
  api.use(() => {
    throw new NotFoundError('no such webhook route');
  });
  app.use(LISTENER_ROOT, api);
  app.use(() => {
    throw new NotFoundError('not found');
  });
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const mapped = toHttpError(bodyError(err) ?? err);
    if (mapped.log) log.error({ err }, 'request failed');
    res.status(mapped.status).set(mapped.headers).json({ message: mapped.body.message });
  };
  app.use(onError);
  return app;
}
