import { authzApp } from '@platform/app-authz';
import { billingDashboardApp } from '@platform/app-billing-dashboard';
import { clustersApp } from '@platform/app-clusters';
import { contractsLicensingApp } from '@platform/app-contracts-licensing';
import { gatewayApp } from '@platform/app-gateway';
import { marketplaceListenerApp } from '@platform/app-marketplace-listener';
import { metricsproxyApp } from '@platform/app-metricsproxy';
import { orgsTeamsApp } from '@platform/app-orgs-teams';
import type { AppDatabase, AppDefinition } from '@platform/service-kit';

/** An app as the CLI sees it: its settings and, when it owns data, its schema and migrations (the app's own). */
export interface CliApp {
  app: AppDefinition<any>;
  /**
   * `serverOnly`: the app opens its schema only on a Postgres server (DATABASE_URL), never on the embedded database
   * (the gateway: one embedded process is one gateway, which counts sign-in failures in memory).
   */
  database?: AppDatabase;
  /** The variable other apps find its gRPC server by (a backend's), for `check`. */
  addressVar?: string;
}

/**
 * Every app, in the launcher's start order, with the schema and migrations its definition names (those its start
 * opens and applies). app-schemas.ts names the same schemas for the restore's first checks (a unit test holds them
 * equal).
 */
export const APPS: CliApp[] = (
  [
    [authzApp, 'AUTHZ_GRPC_ADDR'],
    [orgsTeamsApp, 'ORGS_TEAMS_GRPC_ADDR'],
    [contractsLicensingApp, 'CONTRACTS_LICENSING_GRPC_ADDR'],
    [billingDashboardApp, 'BILLING_DASHBOARD_GRPC_ADDR'],
    [metricsproxyApp, 'METRICSPROXY_GRPC_ADDR'],
    [clustersApp, 'CLUSTERS_GRPC_ADDR'],
    [marketplaceListenerApp, 'MARKETPLACE_LISTENER_GRPC_ADDR'],
    [gatewayApp, undefined],
  ] as const
).map(([app, addressVar]) => ({ app, database: app.database, addressVar }));
