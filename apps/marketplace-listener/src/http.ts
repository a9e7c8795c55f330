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

/** Root of the webhook listener (spec section 4.9). */
export const LISTENER_ROOT = '/marketplace/api/v1';

const httpMetrics = new HttpMetrics('marketplace-listener');

/**
 * The listener's HTTP API. Errors use the webhook ApiError body `{message}`. `/healthz` and `/readyz` (its
 * database) are answered beside the API root; requests are counted in the http_server_* metrics.
 */
export function createListenerHttp(log: Logger, checks: DependencyCheck[] = []): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetrics.middleware(expressRoute));
  app.get(HEALTH_PATHS.live, (_req, res) => answerLive(res));
  app.get(HEALTH_PATHS.ready, (_req, res) => answerReady(res, checks));
  const api = express.Router();
  api.get('/version', (_req, res) => {
    res.json({ version: PLATFORM_VERSION });
  });
  api.use(() => {
    throw new NotFoundError('no such webhook route');
  });
  app.use(LISTENER_ROOT, api);
  app.use(() => {
    throw new NotFoundError('not found');
  });
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const mapped = toHttpError(err);
    if (mapped.log) log.error({ err }, 'request failed');
    res.status(mapped.status).set(mapped.headers).json({ message: mapped.body.message });
  };
  app.use(onError);
  return app;
}
