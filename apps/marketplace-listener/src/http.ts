import express, { type ErrorRequestHandler } from 'express';
import { NotFoundError, toHttpError } from '@platform/errors';
import { PLATFORM_VERSION, type Logger } from '@platform/service-kit';

/** Root of the webhook listener (spec section 4.9). */
export const LISTENER_ROOT = '/marketplace/api/v1';

/** The listener's HTTP API. Errors use the webhook ApiError body `{message}`. */
export function createListenerHttp(log: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
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
