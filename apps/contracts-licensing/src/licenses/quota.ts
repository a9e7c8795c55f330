import { billingDashboardV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import type { UsageHours } from '../contracts/catalog';

/** A contract's usage so far, in hours; each quota metric is computed from it (catalog.ts quotaAmount). */
export interface UsageSource {
  /** What a product used on these clusters over the period: core-hours, GiB-hours, object-hours. */
  usage(product: string, clusterUids: string[], start: Date, end: Date): Promise<UsageHours>;
}

/** Usage from billing-dashboard's `GetUsage`, which sums the usage samples member clusters reported. */
export function billingUsage(client: Pick<PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>, 'getUsage'>): UsageSource {
  return {
    usage(product, clusterUids, start, end) {
      return client.getUsage({
        product,
        clusterUids,
        startUnix: Math.floor(start.getTime() / 1000),
        endUnix: Math.max(Math.floor(end.getTime() / 1000), Math.floor(start.getTime() / 1000) + 1),
      });
    },
  };
}

/** The billing-dashboard client quotas ask. */
export function billingClient(address: string): PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService> {
  return createClient(billingDashboardV1.BillingDashboardServiceService, address, { name: 'billing-dashboard', deadlineMs: 5_000 });
}
