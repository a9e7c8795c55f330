import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsText } from './metrics';

/** The path Prometheus scrapes, on the metrics port and on the launcher's HTTP port. */
export const METRICS_PATH = '/metrics';

/** Default of METRICS_PORT: the port the OpenTelemetry/Prometheus convention gives an exporter. */
export const DEFAULT_METRICS_PORT = 9464;

/** A request handler answering `GET /metrics` with this process's metrics. */
export async function answerMetrics(res: http.ServerResponse): Promise<void> {
  try {
    const { contentType, body } = await metricsText();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics could not be collected: ${(err as Error).message}\n`);
  }
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves this process's metrics on their own port (METRICS_PORT): `GET /metrics`, 404 for anything else.
 * Kept apart from the API port so the API's ingress never exposes them. Rejects with the listen error
 * (EADDRINUSE) when the port cannot be had.
 */
export async function serveMetrics(port: number, host?: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === METRICS_PATH && (req.method === 'GET' || req.method === 'HEAD')) return void answerMetrics(res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
