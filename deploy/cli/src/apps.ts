import { authzApp, authzMigrations } from '@platform/app-authz';
import { billingDashboardApp, billingDashboardMigrations } from '@platform/app-billing-dashboard';
import { clustersApp, clustersMigrations } from '@platform/app-clusters';
import { contractsLicensingApp, contractsLicensingMigrations } from '@platform/app-contracts-licensing';
import { gatewayApp, gatewayMigrations } from '@platform/app-gateway';
import { marketplaceListenerApp, marketplaceListenerMigrations } from '@platform/app-marketplace-listener';
import { metricsproxyApp, metricsproxyMigrations } from '@platform/app-metricsproxy';
import { orgsTeamsApp, orgsTeamsMigrations } from '@platform/app-orgs-teams';
import type { Migration } from '@platform/db';
import type { AppDefinition } from '@platform/service-kit';
import { APP_SCHEMAS } from './app-schemas';

/** An app as the CLI sees it: its settings and, when it owns data, its schema and migrations. */
export interface CliApp {
  app: AppDefinition<any>;
  /**
   * `serverOnly`: the app opens its schema only on a Postgres server (DATABASE_URL), never on the embedded database
   * (the gateway: one embedded process is one gateway, which counts sign-in failures in memory).
   */
  database?: { schema: string; migrations: Migration[]; serverOnly?: boolean };
  /** The variable other apps find its gRPC server by (a backend's), for `check`. */
  addressVar?: string;
}

/**
 * Every app, in the launcher's start order. The schema names are the ones each app's start() opens; the
 * CLI test proves it (after `migrate`, a platform start creates no schema of its own).
 */
export const APPS: CliApp[] = [
  { app: authzApp, database: { ...APP_SCHEMAS.authz, migrations: authzMigrations }, addressVar: 'AUTHZ_GRPC_ADDR' },
  { app: orgsTeamsApp, database: { ...APP_SCHEMAS.orgsTeams, migrations: orgsTeamsMigrations }, addressVar: 'ORGS_TEAMS_GRPC_ADDR' },
  {
    app: contractsLicensingApp,
    database: { ...APP_SCHEMAS.contractsLicensing, migrations: contractsLicensingMigrations },
    addressVar: 'CONTRACTS_LICENSING_GRPC_ADDR',
  },
  {
    app: billingDashboardApp,
    database: { ...APP_SCHEMAS.billingDashboard, migrations: billingDashboardMigrations },
    addressVar: 'BILLING_DASHBOARD_GRPC_ADDR',
  },
  { app: metricsproxyApp, database: { ...APP_SCHEMAS.metricsproxy, migrations: metricsproxyMigrations }, addressVar: 'METRICSPROXY_GRPC_ADDR' },
  { app: clustersApp, database: { ...APP_SCHEMAS.clusters, migrations: clustersMigrations }, addressVar: 'CLUSTERS_GRPC_ADDR' },
  {
    app: marketplaceListenerApp,
    database: { ...APP_SCHEMAS.marketplaceListener, migrations: marketplaceListenerMigrations },
    addressVar: 'MARKETPLACE_LISTENER_GRPC_ADDR',
  },
  { app: gatewayApp, database: { ...APP_SCHEMAS.gateway, migrations: gatewayMigrations } },
];
