import {
  authzV1,
  billingDashboardV1,
  clustersV1,
  contractsLicensingV1,
  marketplaceListenerV1,
  metricsproxyV1,
  orgsTeamsV1,
} from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import type { GatewayConfig } from './config';

/** gRPC clients of every backend app, keyed by app name. */
export interface Backends {
  authz: PromiseClient<typeof authzV1.AuthzServiceService>;
  'orgs-teams': PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  'contracts-licensing': PromiseClient<typeof contractsLicensingV1.ContractsLicensingServiceService>;
  'billing-dashboard': PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>;
  metricsproxy: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService>;
  'marketplace-listener': PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;
  clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
}
export type BackendName = keyof Backends;

/** Opens a channel to each backend; channels connect lazily and reconnect by themselves. */
export function connectBackends(config: GatewayConfig): Backends {
  const opts = (name: string) => ({ name, deadlineMs: config.BACKEND_DEADLINE_MS, idempotent: ['getVersion'] });
  return {
    authz: createClient(authzV1.AuthzServiceService, config.AUTHZ_GRPC_ADDR, opts('authz')),
    'orgs-teams': createClient(orgsTeamsV1.OrgsTeamsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    'contracts-licensing': createClient(
      contractsLicensingV1.ContractsLicensingServiceService,
      config.CONTRACTS_LICENSING_GRPC_ADDR,
      opts('contracts-licensing'),
    ),
    'billing-dashboard': createClient(
      billingDashboardV1.BillingDashboardServiceService,
      config.BILLING_DASHBOARD_GRPC_ADDR,
      opts('billing-dashboard'),
    ),
    metricsproxy: createClient(metricsproxyV1.MetricsproxyServiceService, config.METRICSPROXY_GRPC_ADDR, opts('metricsproxy')),
    'marketplace-listener': createClient(
      marketplaceListenerV1.MarketplaceListenerServiceService,
      config.MARKETPLACE_LISTENER_GRPC_ADDR,
      opts('marketplace-listener'),
    ),
    clusters: createClient(clustersV1.ClustersServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
  };
}

/** Closes every channel. */
export function closeBackends(backends: Backends): void {
  for (const client of Object.values(backends)) client.close();
}
