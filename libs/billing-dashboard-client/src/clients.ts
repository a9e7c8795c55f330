import { allOf, BILLING_CHANGED, keptServiceReads, type KeptRead, type ReadModel } from '@platform/bus';
import { billingDashboardV1, eventsV1, licensedV1, outagesV1, summaryV1, usageReportV1 } from '@platform/proto';
import { backendState, createClient, type ClientOptions, type PromiseClient } from '@platform/service-kit';

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
 * The reads a reader keeps, by service, as billing-dashboard defines them: it announces every write it answers by method
 * and every batch of agent reports it applies, which drops everything kept. Not kept: the usage views and namespace
 * billing (streams of up to megabytes), a resource history (asked live of the member cluster, as the spec has it), the
 * PDF (it carries the time it was rendered). The events of the last days move with the clock as well: an event leaves
 * the window with no report, so those are kept one second at most.
 */
export const BILLING_READS = {
  billing: { getUsage: BILLING_ANSWER },
  outages: { outageReport: BILLING_ANSWER, listOutageTags: BILLING_ANSWER },
  usageReport: { generatedMonths: BILLING_ANSWER, getObjectQuotaHistory: BILLING_ANSWER },
  licensed: {
    listLicensedUsers: BILLING_ANSWER,
    listUserClusters: BILLING_ANSWER,
    listClusterLicenses: BILLING_ANSWER,
    listLicensedProducts: BILLING_ANSWER,
    listActiveClusterLicenses: BILLING_ANSWER,
  },
  events: { listResourceEvents: { ...BILLING_ANSWER, ttlMs: () => 1_000 }, getEventsReport: BILLING_ANSWER, getRawEvent: BILLING_ANSWER },
} satisfies { [S in keyof BillingDashboardClients]?: { [M in keyof BillingDashboardClients[S]]?: KeptRead } };

/** billing-dashboard's clients, answering the reads of BILLING_READS from what the reader keeps when `keep` is given. */
export function billingDashboardClients(
  address: string,
  opts: ClientOptions,
  keep?: BillingDashboardKeeping,
): { clients: BillingDashboardClients; readModel: ReadModel } {
  const clients: BillingDashboardClients = {
    billing: createClient(billingDashboardV1.BillingDashboardServiceService, address, opts),
    outages: createClient(outagesV1.SystemOutagesServiceService, address, opts),
    usageReport: createClient(usageReportV1.UsageReportServiceService, address, opts),
    licensed: createClient(licensedV1.LicensedUsageServiceService, address, opts),
    events: createClient(eventsV1.ResourceEventsServiceService, address, opts),
    summary: createClient(summaryV1.UsageSummaryServiceService, address, opts),
  };
  if (!keep) return { clients, readModel: allOf([]) };
  return keptBilling(clients, { ...keep, available: () => backendState(opts.name).available });
}

/** The clients with the reads of BILLING_READS kept, one cache per service. */
export function keptBilling<C extends { [S in keyof typeof BILLING_READS]: object }>(clients: C, keep: BillingDashboardKeeping): { clients: C; readModel: ReadModel } {
  return keptServiceReads(clients, BILLING_READS as never, { name: `${keep.reader}.billing`, ttlMs: keep.ttlMs, available: keep.available });
}
