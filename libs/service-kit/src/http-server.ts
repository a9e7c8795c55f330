import * as http from 'node:http';
import { z } from 'zod';

/**
 * Limits of every HTTP server the apps run (the gateway's, the webhook listener's), set explicitly rather than
 * left to Node's defaults, under which a body sent at a byte a second holds a connection for 300 s and
 * connections are unlimited. docs/configuration.md.
 */
export const httpServerEnv = {
  /** Longest wait for a request's headers; past it the client gets 408 and the connection closes. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(20_000),
  /**
   * Longest time to receive a whole request, body included (a contract document upload too); past it the client
   * gets 408. Answering may take longer: this bounds only what the client sends.
   */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /**
   * How long an idle keep-alive connection stays open. Longer than the 60 s idle timeout common to load balancers,
   * so the balancer, not the app, closes an idle connection and never sends a request into one being closed.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(65_000),
  /** Concurrent connections one process holds; further ones are closed at once (a replica is then full, not slow). */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(4_096),
};
export type HttpServerLimits = { [K in keyof typeof httpServerEnv]: z.infer<(typeof httpServerEnv)[K]> };

/** An HTTP server with these limits. */
export function createHttpServer(handler: http.RequestListener, limits: HttpServerLimits): http.Server {
  const requestTimeout = limits.HTTP_REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(limits.HTTP_HEADERS_TIMEOUT_MS, requestTimeout);
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout,
      // Node looks for expired requests at this interval (30 s by default, which would let a 20 s limit run to 50 s).
      connectionsCheckingInterval: Math.min(5_000, Math.max(250, Math.floor(headersTimeout / 4))),
    },
    handler,
  );
  server.keepAliveTimeout = limits.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  server.maxConnections = limits.HTTP_MAX_CONNECTIONS;
  return server;
}
