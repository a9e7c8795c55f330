import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { chunks } from '@platform/service-kit';
import { keepTouchedPoints } from '../usage/daily-series';
import { QUANTITY, SAMPLE_HOURS } from '../usage/quantities';

/** A licensed product received on a cluster at one time (a LicenseUsage report). */
export interface LicenseUsageRow {
  userId: number;
  clusterUID: string;
  licenseId: string;
  product: string;
  receivedAt: Date;
}

/** One licensed-resource event (a ResourceEvent report). */
export interface ResourceEventRow {
  userId: number;
  clusterUID: string;
  licenseId: string;
  product: string;
  group: string;
  resource: string;
  resourceId: object;
  key: string;
  version: number;
  eventAt: Date;
  partialObjectMeta: object;
}

/** The quota and usage of one resource of an object over a sample's interval, in the resource's unit. */
export interface ResourceAmounts {
  resource: string;
  request: number;
  limit: number;
  used: number;
}

/** One usage sample, already lying within one UTC month (`month` is its first day, `YYYY-MM-01`). */
export interface UsageSampleRow {
  month: string;
  product: string;
  contractId: number;
  licenseId: string;
  userId: number;
  clusterUID: string;
  clusterName: string;
  hosting: string;
  namespace: string;
  namespaceUID: string;
  group: string;
  kind: string;
  name: string;
  objectUID: string;
  version: string;
  topology: string;
  replicas: number;
  startAt: Date;
  endAt: Date;
  resources: ResourceAmounts[];
}

const MEASURED = ['cpu', 'memory', 'storage'] as const;

/**
 * The rows agent reports write in the billing schema: licensed products, resource events, usage samples and
 * the ids of the messages applied. Every write takes the caller's transaction, so a message's effect and its
 * id commit together (docs/billing-ingestion.md).
 */
export class IngestionStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): IngestionStore {
    return new IngestionStore(db);
  }

  /**
   * Records message ids in one statement; answers the messages seen for the first time (a message whose id
   * was recorded before, or that repeats an id earlier in `messages`, is left out: skip its effect).
   */
  async rememberAll<M extends { messageId: string; clusterUID: string; kind: string }>(
    messages: M[],
    trx: Knex.Transaction,
  ): Promise<Set<M>> {
    const first = new Map<string, M>();
    for (const m of messages) if (!first.has(m.messageId)) first.set(m.messageId, m);
    const fresh = new Set<M>();
    for (const part of chunks([...first.values()], 1000)) {
      const rows: { message_id: string }[] = await this.db
        .table('agent_seen_messages', trx)
        .insert(part.map((m) => ({ message_id: m.messageId, cluster_uid: m.clusterUID, kind: m.kind })))
        .onConflict('message_id')
        .ignore()
        .returning('message_id');
      for (const { message_id } of rows) fresh.add(first.get(message_id)!);
    }
    return fresh;
  }

  /** Drops the ids of messages applied before `before` (retention); returns how many. */
  async forgetBefore(before: Date, trx?: Knex.Transaction): Promise<number> {
    return this.db.table('agent_seen_messages', trx).where('seen_at', '<', before).delete();
  }

  /**
   * Upserts one row per (user, cluster, license, product), widening its first and last received times to
   * include every `receivedAt` given (reports of one key within the call are merged first: one statement
   * may not update a row twice).
   */
  async recordLicenseUsages(usages: LicenseUsageRow[], trx: Knex.Transaction): Promise<void> {
    const byKey = new Map<
      string,
      { user_id: number; cluster_uid: string; license_id: string; product: string; first_received_at: Date; last_received_at: Date }
    >();
    for (const u of usages) {
      const key = JSON.stringify([u.userId, u.clusterUID, u.licenseId, u.product]);
      const row = byKey.get(key);
      if (!row)
        byKey.set(key, {
          user_id: u.userId,
          cluster_uid: u.clusterUID,
          license_id: u.licenseId,
          product: u.product,
          first_received_at: u.receivedAt,
          last_received_at: u.receivedAt,
        });
      else {
        if (u.receivedAt < row.first_received_at) row.first_received_at = u.receivedAt;
        if (u.receivedAt > row.last_received_at) row.last_received_at = u.receivedAt;
      }
    }
    for (const part of chunks([...byKey.values()], 1000))
      await this.db
        .table('licensed_products', trx)
        .insert(part)
        .onConflict(['user_id', 'cluster_uid', 'license_id', 'product'])
        .merge({
          first_received_at: this.db.knex.raw('least(licensed_products.first_received_at, excluded.first_received_at)'),
          last_received_at: this.db.knex.raw('greatest(licensed_products.last_received_at, excluded.last_received_at)'),
        });
  }

  /** Inserts events; one already stored under the same (cluster, key, version) is kept as it is. Returns how many were new. */
  async insertResourceEvents(events: ResourceEventRow[], trx: Knex.Transaction): Promise<number> {
    let inserted = 0;
    for (const part of chunks(events, 1000)) {
      const rows = await this.db
        .table('resource_events', trx)
        .insert(
          part.map((row) => ({
            user_id: row.userId,
            cluster_uid: row.clusterUID,
            license_id: row.licenseId,
            product: row.product,
            group: row.group,
            resource: row.resource,
            resource_id: JSON.stringify(row.resourceId),
            key: row.key,
            version: row.version,
            event_at: row.eventAt,
            partial_object_meta: JSON.stringify(row.partialObjectMeta),
          })),
        )
        .onConflict(['cluster_uid', 'key', 'version'])
        .ignore()
        .returning('id');
      inserted += rows.length;
    }
    return inserted;
  }

  /**
   * Inserts samples; one already stored for the same (cluster, object, start) is kept as it is. Returns how many were
   * new. The same statement adds the rows it inserted, and only those, to their objects' days (usage_object_days)
   * and months (usage_object_months), so a sample counts once in the rollups exactly when it counts once among the
   * samples; the next keeps the points of the days it changed (../usage/daily-series.ts).
   */
  async insertUsageSamples(rows: UsageSampleRow[], trx: Knex.Transaction): Promise<number> {
    let inserted = 0;
    // 29 columns a row: 1,000 rows stay well under Postgres' 65,535 parameters a statement.
    for (const part of chunks(rows, 1000)) {
      const insert = this.db
        .table('usage_samples', trx)
        .insert(part.map(toSampleColumns))
        .onConflict(['cluster_uid', 'object_uid', 'start_at'])
        .ignore()
        .returning(ROLLED_UP_COLUMNS)
        .toSQL();
      const { rows: counted } = await trx.raw(
        `with inserted as (${insert.sql}), days as (${rollUpSamples('inserted', true)}), months as (${rollUpSamplesByMonth('inserted')})
         select count(*)::int as n,
           (select coalesce(jsonb_agg(distinct jsonb_build_object('c', cluster_uid, 'o', object_uid, 'd', day)), '[]') from days) as touched
         from inserted`,
        [...insert.bindings, this.db.schema, this.db.schema],
      );
      const [{ n, touched }] = counted as { n: number; touched: unknown[] }[];
      inserted += n;
      // The days' points, now that their rollups hold these samples (a statement of its own: the one above cannot
      // read the day rows it writes).
      if (touched.length > 0) await trx.raw(keepTouchedPoints(), [this.db.schema, this.db.schema, JSON.stringify(touched)]);
    }
    return inserted;
  }
}

/** The sample columns a rollup reads. */
const ROLLED_UP_COLUMNS = [
  'id',
  'month',
  'start_at',
  'end_at',
  'cluster_uid',
  'object_uid',
  'product',
  'contract_id',
  'hosting',
  'namespace',
  'namespace_uid',
  'group',
  'kind',
  'topology',
  'replicas',
  'cluster_name',
  'name',
  'version',
  ...MEASURED.flatMap((r) => [`${r}_request`, `${r}_limit`, `${r}_used`]),
];

/** The attributes of a day's row besides its object and day: what the views filter or split by. */
const ATTRIBUTES =
  'product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit';

/**
 * SQL adding the sample rows of `source` (a table or CTE name with usage_samples' columns) to usage_object_days: one
 * row per object, UTC day (the day a row starts in: it lies in that day) and attributes, the sums added to the row
 * already there. The sums are the per-sample products of ../usage/quantities.ts, summed as numeric (exact), so a
 * month's days add up to the same number as its samples. The rows are upserted in key order, so concurrent
 * ingestions lock shared rows in the same order. With `returning`, the statement answers the keys of the days it
 * wrote. One `??` binding: the schema.
 */
export function rollUpSamples(source: string, returning = false): string {
  const sums = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours', 'object_hours', 'replica_hours'];
  const maxes = ['last_id', 'last_at', 'replicas', 'cpu_peak_used', 'memory_peak_used', 'storage_peak_used'];
  return `insert into ??.usage_object_days as d (day, month, cluster_uid, object_uid, attributes_key, ${ATTRIBUTES}, samples, last_id,
      first_at, last_at, replicas, cpu_peak_used, memory_peak_used, storage_peak_used, ${sums.join(', ')})
    select (start_at at time zone 'UTC')::date, month, cluster_uid, object_uid, md5(row(${ATTRIBUTES})::text)::uuid, ${ATTRIBUTES},
      count(*), max(id), min(start_at), max(end_at), max(replicas), max(cpu_used), max(memory_used), max(storage_used),
      sum(${SAMPLE_HOURS} * ${QUANTITY.cpu}), sum(${SAMPLE_HOURS} * ${QUANTITY.memory}), sum(${SAMPLE_HOURS} * ${QUANTITY.storage}),
      sum(${SAMPLE_HOURS}), sum(replicas * ${SAMPLE_HOURS})
    from ${source}
    group by (start_at at time zone 'UTC')::date, month, cluster_uid, object_uid, ${ATTRIBUTES}
    order by cluster_uid, object_uid, 1, 5
    on conflict (cluster_uid, object_uid, day, attributes_key) do update set
      samples = d.samples + excluded.samples, first_at = least(d.first_at, excluded.first_at),
      ${maxes.map((c) => `${c} = greatest(d.${c}, excluded.${c})`).join(', ')},
      ${sums.map((c) => `${c} = d.${c} + excluded.${c}`).join(', ')}${returning ? '\n    returning cluster_uid, object_uid, day' : ''}`;
}

/**
 * SQL adding the sample rows of `source` (as in rollUpSamples) to usage_object_months: one row per object, UTC month
 * and attributes, the sums added to the row already there, as rollUpSamples does per day. A row also keeps the
 * cluster name, name and version of its last stored sample (greatest id), which a view shows for the object: the
 * names come with the greatest id, whether it is the row's or the batch's. One `??` binding: the schema.
 */
export function rollUpSamplesByMonth(source: string): string {
  const sums = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours', 'object_hours', 'replica_hours'];
  const maxes = ['last_id', 'last_at', 'replicas', 'cpu_peak_used', 'memory_peak_used', 'storage_peak_used'];
  const names = ['cluster_name', 'name', 'version'];
  return `insert into ??.usage_object_months as d (month, cluster_uid, object_uid, attributes_key, ${ATTRIBUTES}, samples, last_id,
      first_at, last_at, replicas, cpu_peak_used, memory_peak_used, storage_peak_used, ${sums.join(', ')}, ${names.join(', ')})
    select g.*, ${names.map((c) => `s.${c}`).join(', ')}
    from (select month, cluster_uid, object_uid, md5(row(${ATTRIBUTES})::text)::uuid as attributes_key, ${ATTRIBUTES},
            count(*), max(id) as last_id, min(start_at), max(end_at), max(replicas), max(cpu_used), max(memory_used), max(storage_used),
            sum(${SAMPLE_HOURS} * ${QUANTITY.cpu}), sum(${SAMPLE_HOURS} * ${QUANTITY.memory}), sum(${SAMPLE_HOURS} * ${QUANTITY.storage}),
            sum(${SAMPLE_HOURS}), sum(replicas * ${SAMPLE_HOURS})
          from ${source}
          group by month, cluster_uid, object_uid, ${ATTRIBUTES}) g
    join ${source} s on s.id = g.last_id
    order by g.cluster_uid, g.object_uid, g.month, g.attributes_key
    on conflict (cluster_uid, object_uid, month, attributes_key) do update set
      ${names.map((c) => `${c} = case when excluded.last_id > d.last_id then excluded.${c} else d.${c} end`).join(', ')},
      samples = d.samples + excluded.samples, first_at = least(d.first_at, excluded.first_at),
      ${maxes.map((c) => `${c} = greatest(d.${c}, excluded.${c})`).join(', ')},
      ${sums.map((c) => `${c} = d.${c} + excluded.${c}`).join(', ')}`;
}

/** The usage_samples columns of a row (the bench loads simulated samples with it, bench/usage-reports.ts). */
export function toSampleColumns(row: UsageSampleRow): Record<string, unknown> {
  const columns: Record<string, unknown> = {
    month: row.month,
    product: row.product,
    contract_id: row.contractId,
    license_id: row.licenseId,
    user_id: row.userId,
    cluster_uid: row.clusterUID,
    cluster_name: row.clusterName,
    hosting: row.hosting,
    namespace: row.namespace,
    namespace_uid: row.namespaceUID,
    group: row.group,
    kind: row.kind,
    name: row.name,
    object_uid: row.objectUID,
    version: row.version,
    topology: row.topology,
    replicas: row.replicas,
    start_at: row.startAt,
    end_at: row.endAt,
    resources: JSON.stringify(row.resources),
  };
  for (const name of MEASURED) {
    const r = row.resources.find((x) => x.resource === name);
    columns[`${name}_request`] = r?.request ?? 0;
    columns[`${name}_limit`] = r?.limit ?? 0;
    columns[`${name}_used`] = r?.used ?? 0;
  }
  return columns;
}
