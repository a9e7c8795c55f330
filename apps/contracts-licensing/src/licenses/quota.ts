import { NotFoundError } from '@platform/errors';
import { billingDashboardV1, isQuotaMetric, type contractsV1, type QuotaMetric } from '@platform/proto';
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

/**
 * What contract `id` (of `ownerId`; 0: any owner) used of its quota, measured now as issuing a license and the quota
 * notices measure it, for the quota screens (GetQuotaUsage): the figure they show is the one the platform acts on.
 * NotFound for another owner's contract, as every owner-scoped read.
 */
export async function measureQuota(
  ref: { id: number; ownerId: number },
  store: ContractsStore,
  inventory: Inventory,
  usage: UsageSource,
): Promise<contractsV1.QuotaUsage> {
  const contract = await store.find(ref.id, ref.ownerId);
  if (!contract) throw new NotFoundError(`contract ${ref.id} does not exist`);
  const q = contract.quota;
  const measuredUnix = Math.floor(Date.now() / 1000);
  if (!q.enabled) return { enabled: false, metric: '', limit: 0, used: 0, measuredUnix };
  const use = await quotaUse(contract, store, inventory, usage);
  return { enabled: true, metric: q.metric ?? '', limit: q.limit ?? 0, used: use?.used ?? 0, measuredUnix };
}
