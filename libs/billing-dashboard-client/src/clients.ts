import { allOf, BILLING_CHANGED, keptReads, keptServiceReads, type KeptRead, type ReadModel } from '@platform/bus';
import { billingDashboardV1, eventsV1, licensedV1, outagesV1, summaryV1, usageReportV1 } from '@platform/proto';
import { backendState, createClients, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** billing-dashboard's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const BILLING_DASHBOARD_SERVICES = {
  billing: billingDashboardV1.BillingDashboardServiceService,
  outages: outagesV1.SystemOutagesServiceService,
  usageReport: usageReportV1.UsageReportServiceService,
  licensed: licensedV1.LicensedUsageServiceService,
  events: eventsV1.ResourceEventsServiceService,
  summary: summaryV1.UsageSummaryServiceService,
} as const;

/** billing-dashboard's services as another app calls them. */
export interface BillingDashboardClients {
  billing: PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>;
  /** System outages and their report. */
  outages: PromiseClient<typeof outagesV1.SystemOutagesServiceService>;
  /** Usage reports: generated months, the monthly usage views, quota history, namespace billing. */
  usageReport: PromiseClient<typeof usageReportV1.UsageReportServiceService>;
  /** Licensed users, clusters, licenses and products with their received times. */
  licensed: PromiseClient<typeof licensedV1.LicensedUsageServiceService>;
  /** The licensed-resource rows: resource history asked from the cluster, resource events. */
  events: PromiseClient<typeof eventsV1.ResourceEventsServiceService>;
  /** The month's PDF usage summary (docs/usage-summary-pdf.md). */
  summary: PromiseClient<typeof summaryV1.UsageSummaryServiceService>;
}

/** What a reader keeps of billing-dashboard's answers, and how long at most (0 keeps nothing). */
export interface BillingDashboardKeeping {
  ttlMs: number;
  /** Names the caches in the metrics (`<reader>.billing`). */
  reader: string;
  /** Whether billing-dashboard answers (kept answers are not served while it does not). */
  available?: () => boolean;
}

/** What every kept billing answer shows: reports applied and outages recorded, both announced (`billing.changed`). */
const BILLING_ANSWER: KeptRead = { stale: [BILLING_CHANGED] };

/**
 * A usage view or namespace billing report, a stream of pieces of its JSON text, kept whole when it is at most 1 MiB:
 * an objects view is about 560 bytes a row and its daily view about 4.7 KB, so the demo's (a few KB) and a month of up
 * to ~1,800 objects are kept, while 7,500 objects' 4.2 MB or a large tenant's 52 MB pass on and are not (a reader keeps
 * at most 64 MiB of them, KeptReadsOptions.maxStreamBytes). What they read (usage samples and their rollups, written
 * only by the agent reports billing-dashboard applies, each batch announced) changes with `billing.changed` alone: no
 * view is of "now" (a month, and a namespace's months, are those of its samples), so none needs a lifetime of its own.
 */
const BILLING_STREAM = { ...BILLING_ANSWER, maxBytes: 1024 * 1024 };

/**
 * The reads a reader keeps, by service, as billing-dashboard defines them: it announces every write it answers by method
 * and every batch of agent reports it applies, which drops everything kept. The usage views (the per-object ones too)
 * and namespace billing are streams: kept under BILLING_STREAM's bound. Not kept: a resource history (asked live of
 * the member cluster, as the spec has it), the PDF (it carries the time it was rendered). The events of the last days
 * move with the clock as well: an event leaves the window with no report, so those are kept one second at most.
 */
export const BILLING_READS = {
  billing: { getUsage: BILLING_ANSWER },
  outages: { outageReport: BILLING_ANSWER, listOutageTags: BILLING_ANSWER },
  usageReport: {
    generatedMonths: BILLING_ANSWER,
    getObjectQuotaHistory: BILLING_ANSWER,
    getUsageView: BILLING_STREAM,
    getNamespaceBilling: BILLING_STREAM,
  },
  licensed: {
    listLicensedUsers: BILLING_ANSWER,
    listUserClusters: BILLING_ANSWER,
    listClusterLicenses: BILLING_ANSWER,
    listLicensedProducts: BILLING_ANSWER,
    listActiveClusterLicenses: BILLING_ANSWER,
  },
  events: { listResourceEvents: { ...BILLING_ANSWER, ttlMs: () => 1_000 }, getEventsReport: BILLING_ANSWER, getRawEvent: BILLING_ANSWER },
} satisfies { [S in keyof BillingDashboardClients]?: KeptReadsOf<BillingDashboardClients[S]> };

/** The rules keptReads takes for a client's methods (a method answering a stream needs its `maxBytes`). */
type KeptReadsOf<C extends object> = Parameters<typeof keptReads<C>>[1];

/** billing-dashboard's clients, answering the reads of BILLING_READS from what the reader keeps when `keep` is given. */
export function billingDashboardClients(
  address: string,
  opts: ClientOptions,
  keep?: BillingDashboardKeeping,
): { clients: BillingDashboardClients; readModel: ReadModel } {
  const clients: BillingDashboardClients = createClients(BILLING_DASHBOARD_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  return keptBilling(clients, { ...keep, available: () => backendState(opts.name).available });
}

/** The clients with the reads of BILLING_READS kept, one cache per service. */
export function keptBilling<C extends { [S in keyof typeof BILLING_READS]: object }>(
  clients: C,
  keep: BillingDashboardKeeping,
): { clients: C; readModel: ReadModel } {
  return keptServiceReads(clients, BILLING_READS as never, {
    name: `${keep.reader}.billing`,
    ttlMs: keep.ttlMs,
    available: keep.available,
  });
}

/** Every read of billing-dashboard a reader keeps (the gateway's `kept.billingDashboard`, KeptDoor). */
export const BILLING_DASHBOARD_KEPT = BILLING_READS;
