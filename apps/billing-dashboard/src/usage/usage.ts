import { isUuid } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { InputError } from '@platform/errors';
import type { billingDashboardV1 } from '@platform/proto';
import { overlapHours, quantitySums } from './quantities';

/**
 * Usage of a product on some clusters over a period, from the usage samples (docs/billing-ingestion.md), with
 * the quantities of ./quantities.ts over the hours each sample overlaps the period. Contract quotas read it at
 * license-issue time.
 */
export async function usageOf(db: Database, req: billingDashboardV1.GetUsageRequest): Promise<billingDashboardV1.Usage> {
  const none = { cpuCoreHours: 0, memoryGibHours: 0, storageGibHours: 0, objectHours: 0 };
  if (req.endUnix <= req.startUnix) throw new InputError('the period must end after it starts');
  const clusters = [...new Set(req.clusterUids.map((u) => u.toLowerCase()))];
  if (clusters.some((u) => !isUuid(u))) throw new InputError('cluster UIDs must be UUIDs');
  if (clusters.length === 0 || !req.product) return none;
  const start = new Date(req.startUnix * 1000);
  const end = new Date(req.endUnix * 1000);
  const [row] = await db
    .table('usage_samples')
    .where({ product: req.product })
    .whereIn('cluster_uid', clusters)
    .andWhere('end_at', '>', start)
    .andWhere('start_at', '<', end)
    .select(quantitySums(db.knex, overlapHours(db.knex, start, end).toQuery()));
  return {
    cpuCoreHours: Number(row.cpu_core_hours),
    memoryGibHours: Number(row.memory_gib_hours),
    storageGibHours: Number(row.storage_gib_hours),
    objectHours: Number(row.object_hours),
  };
}
