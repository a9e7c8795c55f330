import { billingDashboardV1, isQuotaMetric, type QuotaMetric } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { quotaAmount, type UsageHours } from '../contracts/catalog';
import type { ContractRow, ContractsStore } from '../contracts/contracts-store';
import { enrolledElsewhere, type Inventory } from '../contracts/inventory';

/** A contract's usage so far, in hours; each quota metric is computed from it (catalog.ts quotaAmount). */
export interface UsageSource {
  /** What a product used on these clusters over the period: core-hours, GiB-hours, object-hours. */
  usage(product: string, clusterUids: string[], start: Date, end: Date): Promise<UsageHours>;
}

/** Usage from billing-dashboard's `GetUsage`, which sums the usage samples member clusters reported. */
export function billingUsage(
  client: Pick<PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>, 'getUsage'>,
): UsageSource {
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

/** A contract's quota use over its period so far; undefined when it has no quota or nothing to measure yet. */
export interface QuotaUse {
  metric: QuotaMetric;
  limit: number;
  used: number;
}

/**
 * What the contract used of its quota, from what its bound clusters (and clusters nobody enrolled) reported over
 * its period so far: another account's figures never reach this contract's answers, audit trail or notices.
 */
export async function quotaUse(
  contract: ContractRow,
  store: ContractsStore,
  inventory: Inventory,
  usage: UsageSource,
): Promise<QuotaUse | undefined> {
  const q = contract.quota;
  const metric = q.metric ?? '';
  if (!q.enabled || !isQuotaMetric(metric) || !(q.limit! > 0)) return undefined;
  const bound = (await store.clustersOf([contract.id])).map((b) => b.cluster_uid);
  const found = await Promise.all(bound.map((uid) => inventory.cluster(uid)));
  const clusters = bound.filter((_, i) => !enrolledElsewhere(found[i], contract.owner_id));
  const start = new Date(contract.start_at);
  const end = new Date(Math.min(Date.now(), new Date(contract.end_at).getTime()));
  if (clusters.length === 0 || end <= start) return undefined;
  return { metric, limit: q.limit!, used: quotaAmount(metric, await usage.usage(contract.product, clusters, start, end)) };
}
