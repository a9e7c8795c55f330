import express from 'express';
import {
  authzV1,
  billingDashboardV1,
  clustersV1,
  contractsLicensingV1,
  marketplaceListenerV1,
  metricsproxyV1,
  orgsTeamsV1,
} from '@platform/proto';
import {
  answerLive,
  answerReady,
  fullServiceName,
  grpcServingCheck,
  HEALTH_PATHS,
  type DependencyCheck,
  type GrpcServingCheck,
} from '@platform/service-kit';
import { answerMetrics, METRICS_PATH } from '@platform/telemetry';
import type { BackendName } from './backends';
import type { GatewayConfig } from './config';

/**
 * The gateway's operational paths, registered before the API and the web frontend so neither can take them:
 * `/healthz` (alive), `/readyz` (the backends it needs are ready), `/metrics` (only where METRICS_ON_HTTP_PORT
 * says so, as in the one-process launcher; otherwise 404 JSON pointing at METRICS_PORT), and `/docs`, a
 * redirect to the API reference.
 */

/**
 * The backends without which the gateway cannot serve: every authenticated route asks orgs-teams who the
 * caller is and authz what they may do. The others are reported by /readyz but do not make the gateway
 * unready: while one is down only its own routes answer 503.
 */
export const REQUIRED_BACKENDS: readonly BackendName[] = ['authz', 'orgs-teams'];

/** Each backend's address setting and the gRPC service whose health is its readiness. */
const BACKEND_HEALTH: Record<BackendName, { address: keyof GatewayConfig; service: unknown }> = {
  authz: { address: 'AUTHZ_GRPC_ADDR', service: authzV1.AuthzServiceService },
  'orgs-teams': { address: 'ORGS_TEAMS_GRPC_ADDR', service: orgsTeamsV1.OrgsTeamsServiceService },
  'contracts-licensing': { address: 'CONTRACTS_LICENSING_GRPC_ADDR', service: contractsLicensingV1.ContractsLicensingServiceService },
  'billing-dashboard': { address: 'BILLING_DASHBOARD_GRPC_ADDR', service: billingDashboardV1.BillingDashboardServiceService },
  metricsproxy: { address: 'METRICSPROXY_GRPC_ADDR', service: metricsproxyV1.MetricsproxyServiceService },
  'marketplace-listener': { address: 'MARKETPLACE_LISTENER_GRPC_ADDR', service: marketplaceListenerV1.MarketplaceListenerServiceService },
  clusters: { address: 'CLUSTERS_GRPC_ADDR', service: clustersV1.ClustersServiceService },
};

/** A grpc.health.v1 check of every backend's service (close them when the gateway stops). */
export function backendChecks(config: GatewayConfig): GrpcServingCheck[] {
  return (Object.entries(BACKEND_HEALTH) as [BackendName, (typeof BACKEND_HEALTH)[BackendName]][]).map(([name, { address, service }]) =>
    grpcServingCheck(name, String(config[address]), fullServiceName(service), REQUIRED_BACKENDS.includes(name)),
  );
}

/**
 * Registers the operational paths on the app itself (no router of their own: nothing is added in front of
 * the API's requests); `documentUrl` names the API document in 404/405 bodies.
 */
export function addOperationalRoutes(
  app: express.Express,
  opts: { checks: DependencyCheck[]; metricsOnHttp: boolean; documentUrl: (req: express.Request) => string },
): void {
  const only = (path: string, answer: (req: express.Request, res: express.Response) => unknown) =>
    app.all(path, (req, res) => {
      res.locals.route = path;
      // Probes and scrapes come every few seconds: their access-log lines are debug, not info.
      res.locals.operational = true;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return void res
          .status(405)
          .set('allow', 'GET, HEAD')
          .json({ message: `${req.method} is not allowed on ${path}`, url: opts.documentUrl(req) });
      }
      return answer(req, res);
    });
  only(HEALTH_PATHS.live, (_req, res) => answerLive(res));
  only(HEALTH_PATHS.ready, (_req, res) => answerReady(res, opts.checks));
  only(METRICS_PATH, (req, res) =>
    opts.metricsOnHttp
      ? answerMetrics(res)
      : res
          .status(404)
          .json({ message: 'metrics are served on the metrics port (METRICS_PORT), not on HTTP_PORT', url: opts.documentUrl(req) }),
  );
  app.all('/docs', (_req, res) => {
    res.locals.route = '/docs';
    res.redirect(301, '/api/v1/docs/');
  });
}
