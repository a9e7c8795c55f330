import { isUuid } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { InputError } from '@platform/errors';
import type { billingDashboardV1 } from '@platform/proto';


/**
 * Usage of a product on some clusters over a period, from the usage samples (docs/billing-ingestion.md): each
 * sample weighted by the hours it overlaps the period; a resource counts its measured use, or its request when
 * the sample did not measure it (used = 0). Contract quotas read it at license-issue time.
 */
export async function usageOf(db: Database, req: billingDashboardV1.GetUsageRequest): Promise<billingDashboardV1.Usage> {
  const none = { cpuCoreHours: 0, memoryGibHours: 0, storageGibHours: 0, objectHours: 0 };
  if (req.endUnix <= req.startUnix) throw new InputError('the period must end after it starts');
  const clusters = [...new Set(req.clusterUids.map((u) => u.toLowerCase()))];
  if (clusters.some((u) => !isUuid(u))) throw new InputError('cluster UIDs must be UUIDs');
  if (clusters.length === 0 || !req.product) return none;
  const start = new Date(req.startUnix * 1000);
  const end = new Date(req.endUnix * 1000);
  const k = db.knex;
  // Hours of overlap between a sample and the period.
  const hours = k.raw('greatest(0, extract(epoch from (least(end_at, ?::timestamptz) - greatest(start_at, ?::timestamptz)))) / 3600.0', [end, start]);
  const quantity = (r: string) => `(case when ${r}_used > 0 then ${r}_used else ${r}_request end)`;
  const [row] = await db
    .table('usage_samples')
    .where({ product: req.product })
    .whereIn('cluster_uid', clusters)
    .andWhere('end_at', '>', start)
    .andWhere('start_at', '<', end)
    .select(
      k.raw(`coalesce(sum(${hours.toQuery()} * ${quantity('cpu')} / 1000.0), 0) as cpu`),
      k.raw(`coalesce(sum(${hours.toQuery()} * ${quantity('memory')} / 1073741824.0), 0) as memory`),
      k.raw(`coalesce(sum(${hours.toQuery()} * ${quantity('storage')} / 1073741824.0), 0) as storage`),
      k.raw(`coalesce(sum(${hours.toQuery()}), 0) as objects`),
    );
  return {
    cpuCoreHours: Number(row.cpu),
    memoryGibHours: Number(row.memory),
    storageGibHours: Number(row.storage),
    objectHours: Number(row.objects),
  };
}
