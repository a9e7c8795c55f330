import type { Database } from '@platform/db';
import { InputError } from '@platform/errors';
import { overlapHours, QUANTITY, quantitySums, SAMPLE_HOURS } from '../usage/quantities';

/** The product the PDF summary covers: the database product. */
export const SUMMARY_PRODUCT = 'productdb';

/**
 * How much of a month the document lists, whatever the month holds (docs/usage-summary-pdf.md): the namespaces
 * with the most core-hours get a table each, the objects with the most core-hours a row each; the rest is summed
 * into "other" rows, and the totals always count everything.
 */
export const SUMMARY_LIMITS = { namespaces: 40, objectsPerNamespace: 25 } as const;

/** Core-hours, memory GiB-hours and storage GiB-hours (usage/quantities.ts). */
export interface Quantities {
  cpuCoreHours: number;
  memoryGibHours: number;
  storageGibHours: number;
}

export interface SummaryObject extends Quantities {
  kind: string;
  name: string;
  /** The product version the object last reported. */
  version: string;
}

/** One cluster's namespace: its listed objects, what the rest of its objects used, and its subtotal. */
export interface SummaryNamespace {
  clusterUid: string;
  /** The name the cluster last reported this month. */
  clusterName: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
  objects: SummaryObject[];
  /** The namespace's objects beyond SUMMARY_LIMITS.objectsPerNamespace, summed; undefined when none. */
  otherObjects?: Quantities & { objects: number };
  subtotal: Quantities & { objects: number };
}

/** A month's database-product usage as the PDF shows it. */
export interface MonthSummary {
  year: number;
  month: number;
  product: string;
  namespaces: SummaryNamespace[];
  /** The namespaces beyond SUMMARY_LIMITS.namespaces, summed; undefined when none. */
  otherNamespaces?: Quantities & { namespaces: number; objects: number };
  totals: Quantities & { clusters: number; namespaces: number; objects: number };
  /** Core-hours of each day of the month, day 1 first (the chart). */
  dailyCoreHours: number[];
}

/** The UTC bounds [start, end) of a month, validated (1970..9999, 1..12): a bad value is 400. */
export function monthBounds(year: number, month: number): { start: Date; end: Date; days: number } {
  if (!Number.isInteger(year) || year < 1970 || year > 9999) throw new InputError('year must be a four-digit year from 1970');
  if (!Number.isInteger(month) || month < 1 || month > 12) throw new InputError('month must be 1..12');
  const start = new Date(Date.UTC(year, month - 1, 1));
  const end = new Date(Date.UTC(year, month, 1));
  return { start, end, days: new Date(Date.UTC(year, month, 0)).getUTCDate() };
}

const QUANTITY_COLUMNS = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours'] as const;
/** Sums of the per-object quantities (the objects CTE) of the table aliased `from`, as select SQL. */
const sumsOf = (from: string) => QUANTITY_COLUMNS.map((c) => `coalesce(sum(${from}.${c}), 0)::float8 as ${c}`).join(', ');

const NONE: Quantities = { cpuCoreHours: 0, memoryGibHours: 0, storageGibHours: 0 };

const quantities = (r: Record<string, unknown>): Quantities => ({
  cpuCoreHours: Number(r.cpu_core_hours),
  memoryGibHours: Number(r.memory_gib_hours),
  storageGibHours: Number(r.storage_gib_hours),
});

/** Reads a month's summary from the usage samples; every sum is computed by Postgres. */
export class UsageSummary {
  constructor(private readonly db: Database) {}

  async month(year: number, month: number): Promise<MonthSummary> {
    const { start, end, days } = monthBounds(year, month);
    const [rows, daily] = await Promise.all([this.tableRows(start), this.dailyCoreHours(start, end, days)]);
    return { year, month, product: SUMMARY_PRODUCT, ...assemble(rows), dailyCoreHours: daily };
  }

  /**
   * The tables' rows in one pass over the month's samples: per object (each sample whole: a row lies in its
   * month), then ranked within its namespace and namespaces ranked by core-hours; listed objects, the rest of
   * each listed namespace, the rest of the month and the totals come back as rows of one answer, in print order.
   */
  private async tableRows(monthStart: Date): Promise<Record<string, any>[]> {
    const knex = this.db.knex;
    const objects = this.db
      .table('usage_samples')
      .where({ month: monthStart.toISOString().slice(0, 10), product: SUMMARY_PRODUCT })
      .groupBy('cluster_uid', 'namespace', 'object_uid')
      .select(
        'cluster_uid',
        'namespace',
        'object_uid',
        // What the object and its cluster were last called this month.
        knex.raw('(array_agg(cluster_name order by end_at desc))[1] as cluster_name'),
        knex.raw('(array_agg(kind order by end_at desc))[1] as kind'),
        knex.raw('(array_agg(name order by end_at desc))[1] as name'),
        knex.raw('(array_agg(version order by end_at desc))[1] as version'),
        knex.raw('max(end_at) as last_at'),
        ...quantitySums(knex, SAMPLE_HOURS),
      );
    const { namespaces: maxNamespaces, objectsPerNamespace: maxObjects } = SUMMARY_LIMITS;
    // Columns of every row: row_type, cluster_uid, cluster_name, namespace, kind, name, version, clusters,
    // namespaces, objects, the three quantities, namespace_rank, object_rank (null where they do not apply).
    const { rows } = (await knex.raw(
      `with objects as (${objects.toQuery()}),
      ranked as (
        select o.*,
          first_value(cluster_name) over (partition by cluster_uid order by last_at desc) as cluster_now,
          row_number() over (partition by cluster_uid, namespace order by cpu_core_hours desc, name, object_uid) as object_rank
        from objects o
      ),
      namespaces as (
        select cluster_uid, max(cluster_now) as cluster_name, namespace, count(*)::int as objects, ${sumsOf('r')},
          row_number() over (order by sum(cpu_core_hours) desc, cluster_uid, namespace) as namespace_rank
        from ranked r group by cluster_uid, namespace
      )
      select 'object' as row_type, r.cluster_uid, r.cluster_now as cluster_name, r.namespace, r.kind, r.name, r.version,
        null::int as clusters, null::int as namespaces, 1 as objects,
        r.cpu_core_hours, r.memory_gib_hours, r.storage_gib_hours, n.namespace_rank, r.object_rank
        from ranked r join namespaces n using (cluster_uid, namespace)
        where n.namespace_rank <= :maxNamespaces and r.object_rank <= :maxObjects
      union all
      select 'other_objects', r.cluster_uid, null, r.namespace, null, null, null, null, null, count(*)::int, ${sumsOf('r')},
        n.namespace_rank, null
        from ranked r join namespaces n using (cluster_uid, namespace)
        where n.namespace_rank <= :maxNamespaces and r.object_rank > :maxObjects
        group by r.cluster_uid, r.namespace, n.namespace_rank
      union all
      select 'namespace', cluster_uid, cluster_name, namespace, null, null, null, null, null, objects,
        cpu_core_hours, memory_gib_hours, storage_gib_hours, namespace_rank, null
        from namespaces where namespace_rank <= :maxNamespaces
      union all
      select 'other_namespaces', null, null, null, null, null, null, null, count(*)::int, coalesce(sum(n.objects), 0)::int, ${sumsOf('n')},
        null, null
        from namespaces n where namespace_rank > :maxNamespaces having count(*) > 0
      union all
      select 'total', null, null, null, null, null, null, count(distinct cluster_uid)::int, count(*)::int, coalesce(sum(n.objects), 0)::int,
        ${sumsOf('n')}, null, null
        from namespaces n
      order by namespace_rank nulls last, row_type, object_rank`,
      { maxNamespaces, maxObjects },
    )) as { rows: Record<string, any>[] };
    return rows;
  }

  /** Core-hours of each day (the hours of each sample within the day), one sum per day in one pass. */
  private async dailyCoreHours(start: Date, end: Date, days: number): Promise<number[]> {
    const knex = this.db.knex;
    const DAY_MS = 86_400_000;
    const perDay = Array.from({ length: days }, (_, i) => {
      const from = new Date(start.getTime() + i * DAY_MS);
      const hours = overlapHours(knex, from, new Date(Math.min(from.getTime() + DAY_MS, end.getTime()))).toQuery();
      return knex.raw(`coalesce(sum(${hours} * ${QUANTITY.cpu}), 0)::float8 as ??`, [`d${i + 1}`]);
    });
    const [row] = await this.db
      .table('usage_samples')
      .where({ month: start.toISOString().slice(0, 10), product: SUMMARY_PRODUCT })
      .select(perDay);
    return perDay.map((_, i) => Number(row[`d${i + 1}`]));
  }
}

/** The answer's rows as tables, in print order: a namespace's rows share its rank. */
function assemble(rows: Record<string, any>[]): Omit<MonthSummary, 'year' | 'month' | 'product' | 'dailyCoreHours'> {
  const byRank = new Map<number, SummaryNamespace>();
  const tableOf = (r: Record<string, any>): SummaryNamespace => {
    const rank = Number(r.namespace_rank);
    let table = byRank.get(rank);
    if (!table) {
      table = { clusterUid: r.cluster_uid, clusterName: '', namespace: r.namespace, objects: [], subtotal: { objects: 0, ...NONE } };
      byRank.set(rank, table);
    }
    return table;
  };
  let otherNamespaces: MonthSummary['otherNamespaces'];
  let totals: MonthSummary['totals'] = { clusters: 0, namespaces: 0, objects: 0, ...NONE };
  for (const r of rows) {
    if (r.row_type === 'object') tableOf(r).objects.push({ kind: r.kind, name: r.name, version: r.version, ...quantities(r) });
    else if (r.row_type === 'other_objects') tableOf(r).otherObjects = { objects: r.objects, ...quantities(r) };
    else if (r.row_type === 'namespace')
      Object.assign(tableOf(r), { clusterName: r.cluster_name, subtotal: { objects: r.objects, ...quantities(r) } });
    else if (r.row_type === 'other_namespaces') otherNamespaces = { namespaces: r.namespaces, objects: r.objects, ...quantities(r) };
    else if (r.row_type === 'total') totals = { clusters: r.clusters, namespaces: r.namespaces, objects: r.objects, ...quantities(r) };
  }
  return { namespaces: [...byRank.values()], otherNamespaces, totals };
}
