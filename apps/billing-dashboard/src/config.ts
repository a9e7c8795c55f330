import { addressVar, serviceEnv, type ConfigOf } from '@platform/service-kit';

/**
 * billing-dashboard settings: the common ones, and where the services are that agent-report ingestion asks:
 * orgs-teams (the bus account holding a sender's key), clusters (who owns the cluster a report is about) and
 * contracts-licensing (the licenses the platform issued and the contracts binding a cluster, which a report's
 * user and contract are attributed from).
 */
export const billingDashboardEnv = {
  ...serviceEnv,
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  CONTRACTS_LICENSING_GRPC_ADDR: addressVar.default('127.0.0.1:50054'),
};
export type BillingDashboardConfig = ConfigOf<typeof billingDashboardEnv>;
