import type { AccountLookup } from '@platform/agent-protocol';
import type { Unsubscribe } from '@platform/bus';
import { defineApp, serviceEnv, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { startIngestionConsumers } from './ingestion/consumer';
import { Ingestion, openWithAccounts } from './ingestion/ingestion';
import { billingDashboardService } from './service';

export interface BillingDashboardDeps {
  /**
   * Where agent-report ingestion looks bus accounts (by nkey public key) and cluster ownership up, for
   * `open()` of @platform/agent-protocol. In production this is backed by orgs-teams'
   * `OrgTokensService.GetBusAccountByKey` RPC (with cluster ownership from `clusters`). Without it the
   * ingestion consumers are not started: reports wait in stream AGENT, and the durable consumers read them
   * from the start once it is wired (docs/billing-ingestion.md).
   */
  busAccountLookup?: AccountLookup;
  /** Consumer options for tests: durable name prefix, and one cluster's reports only. */
  ingestion?: { durablePrefix?: string; clusterUID?: string };
}

/** The billing-dashboard app over the given dependencies (`busAccountLookup` turns agent-report ingestion on). */
export function createBillingDashboardApp(deps: BillingDashboardDeps = {}) {
  return defineApp({
    name: 'billing-dashboard',
    env: serviceEnv,
    start: (config) => {
      let stopIngestion: Unsubscribe | undefined;
      let stopPruning: (() => void) | undefined;
      return startService(
        {
          name: 'billing-dashboard',
          protoPackage: 'billingdashboard',
          database: { schema: 'billing', migrations },
          // Consumes agent reports (docs/billing-ingestion.md); readiness follows the bus connection.
          bus: true,
          grpc: async (svc) => {
            if (deps.busAccountLookup) {
              const ingestion = new Ingestion(svc.db!, openWithAccounts(deps.busAccountLookup), svc.log);
              stopIngestion = await startIngestionConsumers(svc.bus!, ingestion, { ...deps.ingestion, log: svc.log });
              stopPruning = ingestion.pruneSeenPeriodically();
            } else {
              svc.log.warn({}, 'agent-report ingestion is off: no bus-account lookup (orgs-teams GetBusAccountByKey) is wired yet');
            }
            return [billingDashboardService()];
          },
          onStop: async () => {
            stopPruning?.();
            await stopIngestion?.().catch(() => {});
          },
        },
        config,
      );
    },
  });
}

/** Starts the billing-dashboard service: licensed usage, system outages and usage reports */
export const billingDashboardApp = createBillingDashboardApp();
