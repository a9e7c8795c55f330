import type { AccountLookup } from '@platform/agent-protocol';
import { BILLING_CHANGED, type BillingChanged, type Unsubscribe } from '@platform/bus';
import { announcingWrites, defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { billingDashboardEnv } from './config';
import { ResourceEvents } from './events/events';
import { resourceEventsService } from './events/service';
import { licensingRecordsAt, type LicensingRecords } from './ingestion/attribution';
import { busAccountDirectory } from './ingestion/bus-accounts';
import { startIngestionConsumers } from './ingestion/consumer';
import { Ingestion, openWithAccounts } from './ingestion/ingestion';
import { LicensedUsage } from './licensed/licensed';
import { licensedUsageService } from './licensed/service';
import { Outages } from './outages/outages';
import { systemOutagesService } from './outages/service';
import { billingDashboardService } from './service';
import { usageSummaryService } from './summary/service';
import { UsageSummary } from './summary/usage-summary';
import { usageReportService } from './usage-report/service';
import { UsageReports } from './usage-report/usage-report';

export interface BillingDashboardDeps {
  /**
   * Where agent-report ingestion looks bus accounts (by nkey public key) and cluster ownership up, for
   * `open()` of @platform/agent-protocol. By default orgs-teams' `OrgTokensService.GetBusAccountByKey` (at
   * ORGS_TEAMS_GRPC_ADDR) and clusters' `ClustersService.GetCluster` (at CLUSTERS_GRPC_ADDR); tests give their own.
   */
  busAccountLookup?: AccountLookup & { forBatch?(): AccountLookup };
  /**
   * Where agent-report ingestion finds the licenses the platform issued and the contracts binding a cluster, which
   * a report's user and contract are attributed from. By default contracts-licensing's `GetIssuedLicenses` and
   * `ListContracts` (at CONTRACTS_LICENSING_GRPC_ADDR); tests give their own.
   */
  licensingRecords?: LicensingRecords;
  /** Consumer options for tests: durable name prefix, and one cluster's reports only. */
  ingestion?: { durablePrefix?: string; clusterUID?: string; maxBatch?: number };
}

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'billing', migrations };

/** The billing-dashboard app over the given dependencies. */
export function createBillingDashboardApp(deps: BillingDashboardDeps = {}) {
  return defineApp({
    name: 'billing-dashboard',
    env: billingDashboardEnv,
    database: DATABASE,
    start: (config) => {
      let stopIngestion: Unsubscribe | undefined;
      let stopPruning: (() => void) | undefined;
      const lookup = deps.busAccountLookup
        ? { directory: deps.busAccountLookup, close: () => {} }
        : busAccountDirectory({ orgsTeams: config.ORGS_TEAMS_GRPC_ADDR, clusters: config.CLUSTERS_GRPC_ADDR });
      const licensing = deps.licensingRecords
        ? { records: deps.licensingRecords, close: () => {} }
        : licensingRecordsAt(config.CONTRACTS_LICENSING_GRPC_ADDR);
      return startService(
        {
          name: 'billing-dashboard',
          protoPackage: 'billingdashboard',
          database: DATABASE,
          // Consumes agent reports (docs/billing-ingestion.md); readiness follows the bus connection.
          bus: true,
          grpc: async (svc) => {
            // What the other apps keep of the dashboard's answers (@platform/billing-dashboard-client) follows this notice,
            // sent after every write answered and every batch of reports applied. One that cannot be sent is logged: a
            // reader that misses it answers what it kept for at most its cache's lifetime (ORG_CACHE_TTL_MS).
            const changed = () =>
              svc.bus!.notify(BILLING_CHANGED, {} satisfies BillingChanged).catch((err) => svc.log.warn({ err }, 'could not send a billing notice'));
            const ingestion = new Ingestion(svc.db!, openWithAccounts(lookup.directory), licensing.records, svc.log, changed);
            stopIngestion = await startIngestionConsumers(svc.bus!, ingestion, { ...deps.ingestion, log: svc.log });
            stopPruning = ingestion.pruneSeenPeriodically();
            // Every method writes unless named here (announcingWrites), so a write added later is announced too.
            return [
              announcingWrites(billingDashboardService(svc.db!), ['getVersion', 'getUsage'], changed),
              announcingWrites(systemOutagesService(new Outages(svc.db!)), ['outageReport', 'listOutageTags'], changed),
              announcingWrites(
                licensedUsageService(new LicensedUsage(svc.db!)),
                ['listLicensedUsers', 'listUserClusters', 'listClusterLicenses', 'listLicensedProducts', 'listActiveClusterLicenses'],
                changed,
              ),
              announcingWrites(usageSummaryService(new UsageSummary(svc.db!), config.DEPLOYMENT_TYPE), ['renderUsageSummary'], changed),
              announcingWrites(
                usageReportService(new UsageReports(svc.db!)),
                ['generatedMonths', 'getUsageView', 'getObjectQuotaHistory', 'getNamespaceBilling'],
                changed,
              ),
              // The resource history is asked live over the bus and its sealed answer verified like a report.
              announcingWrites(
                resourceEventsService(new ResourceEvents(svc.db!, { bus: svc.bus!, accounts: lookup.directory })),
                ['getResourceHistory', 'listResourceEvents', 'getEventsReport', 'getRawEvent'],
                changed,
              ),
            ];
          },
          onStop: async () => {
            stopPruning?.();
            await stopIngestion?.().catch(() => {});
            lookup.close();
            licensing.close();
          },
        },
        config,
      );
    },
  });
}

/** Starts the billing-dashboard service: licensed usage, system outages and usage reports */
export const billingDashboardApp = createBillingDashboardApp();
