import type * as http from 'node:http';
import { Counter, Histogram, type CounterChild, type HistogramChild } from '@platform/telemetry';

/**
 * HTTP requests by server (gateway, marketplace-listener), route, method and status, with their latency, labelled as
 * OpenTelemetry's HTTP semantic conventions name them (`http_route`, `http_request_method`,
 * `http_response_status_code`), so dashboards made for other HTTP services read them. The route is the row's path
 * (`/api/v1/orgs/:orgname`), never the raw URL, so the label set stays small; a request no route took is `unmatched`.
 */

const LABELS = ['server', 'http_route', 'http_request_method', 'http_response_status_code'];
const requests = new Counter('http_server_requests_total', 'HTTP requests answered, by server, route, method and status.', LABELS);
const duration = new Histogram(
  'http_server_request_duration_seconds',
  'Time from a request’s arrival to the end of its answer, by server, route, method and status.',
  LABELS,
);

interface Cell {
  count: CounterChild;
  seconds: HistogramChild;
}

/** The HTTP metrics of one server; its children are cached per route, method and status, so recording allocates nothing. */
export class HttpMetrics {
  private readonly cells = new Map<string, Map<string, Cell[]>>();

  constructor(private readonly server: string) {}

  record(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.cells.get(route);
    if (!byMethod) this.cells.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = []));
    let cell = byStatus[status];
    if (!cell) {
      const labels = [this.server, route, method, status] as const;
      cell = byStatus[status] = { count: requests.child(...labels), seconds: duration.child(...labels) };
    }
    cell.count.inc();
    cell.seconds.observe(seconds);
  }

  /**
   * Middleware recording every request when its answer is finished, with the route `routeOf` names then
   * (for Express: the matched route's path, see `expressRoute`).
   */
  middleware(routeOf: (req: http.IncomingMessage, res: http.ServerResponse) => string) {
    return (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => {
      const start = performance.now();
      res.once('finish', () => this.record(routeOf(req, res), req.method ?? 'GET', res.statusCode, (performance.now() - start) / 1000));
      next();
    };
  }
}

/** An Express request's route: mount path plus the matched route's path, or `unmatched`. */
export function expressRoute(req: http.IncomingMessage): string {
  const r = req as http.IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
  return typeof r.route?.path === 'string' ? `${r.baseUrl ?? ''}${r.route.path}` : 'unmatched';
}
