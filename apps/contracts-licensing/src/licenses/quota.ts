import { billingDashboardV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import type { QUOTA_METRICS } from '../contracts/catalog';

/** A contract's usage so far, in the units of its quota metric. */
export interface UsageSource {
  /** What a product used on these clusters over the period, in each quota metric's unit. */
  usage(product: string, clusterUids: string[], start: Date, end: Date): Promise<Record<(typeof QUOTA_METRICS)[number], number>>;
}

/** Usage from billing-dashboard's `GetUsage`, which sums the usage samples member clusters reported. */
export function billingUsage(client: Pick<PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>, 'getUsage'>): UsageSource {
  return {
    async usage(product, clusterUids, start, end) {
      const u = await client.getUsage({
        product,
        clusterUids,
        startUnix: Math.floor(start.getTime() / 1000),
        endUnix: Math.max(Math.floor(end.getTime() / 1000), Math.floor(start.getTime() / 1000) + 1),
      });
      return {
        'cpu-core-hours': u.cpuCoreHours,
        'memory-gib-hours': u.memoryGibHours,
        'storage-gib-hours': u.storageGibHours,
        'object-hours': u.objectHours,
      };
    },
  };
}

/** The billing-dashboard client quotas ask. */
export function billingClient(address: string): PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService> {
  return createClient(billingDashboardV1.BillingDashboardServiceService, address, { name: 'billing-dashboard', deadlineMs: 5_000 });
}
