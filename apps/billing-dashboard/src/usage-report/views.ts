import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { SAMPLE_HOURS, quantitySums } from '../usage/quantities';

/**
 * The SQL of the usage-report views (spec 4.5, docs/usage-reports.md). Every view is one statement: the month's
 * (or the clusters') samples are aggregated by Postgres (GROUP BY with the sums of ../usage/quantities.ts), and
 * Postgres also writes the JSON document (json_build_object / json_agg), so no row passes through JavaScript.
 * Every sample row lies in one month (ingestion splits at month boundaries), so a month's quantities are whole
 * samples (SAMPLE_HOURS).
 */

/** The four quantities of a group, as json_build_object arguments over quantitySums' aliases. */
const QUANTITIES_JSON =
  "'cpuCoreHours', cpu_core_hours, 'memoryGiBHours', memory_gib_hours, 'storageGiBHours', storage_gib_hours, 'objectHours', object_hours";
const QUANTITY_TOTALS_JSON =
  "'cpuCoreHours', coalesce(sum(cpu_core_hours), 0), 'memoryGiBHours', coalesce(sum(memory_gib_hours), 0), " +
  "'storageGiBHours', coalesce(sum(storage_gib_hours), 0), 'objectHours', coalesce(sum(object_hours), 0)";

/** A timestamptz as RFC3339 in UTC (`2026-10-01T06:00:00Z`), whatever the session's time zone. */
export const rfc3339 = (expr: string) => `to_char((${expr}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** How a grouped view's rows are made. */
export interface Grouping {
  /** The columns grouped by (plain column names: the series joins on them). */
  by: string[];
  /** Further select expressions of a group, aliased (`max(cluster_name) as cluster_name`). */
  select: string[];
  /** json_build_object arguments of a row, over `by` and the aliases of `select` (the quantities are added). */
  row: string;
  /** Order of the rows, over the same names. */
  order: string;
}

/** A per-period series added to every row: per UTC day of the month (`daily`), or per month (`months`). */
export interface Series {
  /** The row's field holding it. */
  field: 'daily' | 'months';
  /** The field naming the period in each point. */
  point: 'date' | 'month';
  /** SQL of the period a sample counts in. */
  expr: string;
}

/** A sample counts on the UTC day it starts: samples are a few hours long and, from the simulator, never cross a day. */
export const DAILY: Series = { field: 'daily', point: 'date', expr: "(start_at at time zone 'UTC')::date" };
export const MONTHLY: Series = { field: 'months', point: 'month', expr: "to_char(month, 'YYYY-MM')" };

const sums = (knex: Knex) => quantitySums(knex, SAMPLE_HOURS);

/**
 * `{rows: [...], totals: {rows, cpuCoreHours, ...}}` of the samples `base` selects, grouped as `g` says; with a
 * series, each row also carries its quantities per period (a second aggregation of the same rows, by group and
 * period, joined to the groups). Answers the JSON text.
 */
export async function groupedView(db: Database, base: Knex.QueryBuilder, g: Grouping, series?: Series): Promise<string> {
  const k = db.knex;
  const by = g.by.join(', ');
  const groups = base
    .clone()
    .select(k.raw([...g.by, ...g.select].join(', ')), ...sums(k))
    .groupBy(g.by);
  const bindings: Knex.QueryBuilder[] = [groups];
  let seriesCte = '';
  let seriesJoin = '';
  let seriesField = '';
  if (series) {
    const perPeriod = base
      .clone()
      .select(k.raw(`${by}, ${series.expr} as period`), ...sums(k))
      .groupBy(k.raw(`${by}, ${series.expr}`));
    bindings.push(perPeriod);
    seriesCte = `, p as (?), ps as (
        select ${by}, json_agg(json_build_object('${series.point}', period, ${QUANTITIES_JSON}) order by period) as series
        from p group by ${by})`;
    seriesJoin = `left join ps using (${by})`;
    seriesField = `, '${series.field}', coalesce(ps.series, '[]'::json)`;
  }
  const { rows } = await k.raw(
    `with g as (?)${seriesCte}
     select json_build_object(
       'rows', coalesce((select json_agg(json_build_object(${g.row}, ${QUANTITIES_JSON}${seriesField}) order by ${g.order})
                         from g ${seriesJoin}), '[]'::json),
       'totals', (select json_build_object('rows', count(*), ${QUANTITY_TOTALS_JSON}) from g)
     )::text as view`,
    bindings,
  );
  return rows[0].view;
}

/** The resource columns of a sample as `{request, limit, used}` objects, in json_build_object arguments. */
const SAMPLE_RESOURCES_JSON = ['cpu', 'memory', 'storage']
  .map((r) => `'${r}', json_build_object('request', ${r}_request, 'limit', ${r}_limit, 'used', ${r}_used)`)
  .join(', ');
const QUOTA_JSON = ['cpu', 'memory', 'storage']
  .map((r) => `'${r}', json_build_object('request', ${r}_request, 'limit', ${r}_limit)`)
  .join(', ');
const QUOTA_COLUMNS = 'cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit';

/**
 * One object's samples in time order (`base` selects them) and its quota periods: the runs of consecutive samples
 * with the same requests and limits (gaps and islands: the difference of two row numbers is constant along a run),
 * each with its hours. Answers undefined when there are no samples.
 */
export async function quotaHistory(db: Database, base: Knex.QueryBuilder): Promise<string | undefined> {
  const k = db.knex;
  const samples = base
    .clone()
    .select(k.raw(`*, row_number() over (order by start_at) - row_number() over (partition by ${QUOTA_COLUMNS} order by start_at) as run`));
  const { rows } = await k.raw(
    `with s as (?),
     periods as (
       select ${QUOTA_COLUMNS}, min(start_at) as from_at, max(end_at) as to_at, coalesce(sum(${SAMPLE_HOURS}), 0)::float8 as hours
       from s group by ${QUOTA_COLUMNS}, run)
     select case when exists (select 1 from s) then json_build_object(
       'object', (select json_build_object('clusterUID', cluster_uid, 'clusterName', cluster_name, 'product', product,
                    'namespace', namespace, 'namespaceUID', namespace_uid, 'group', "group", 'kind', kind, 'name', name,
                    'objectID', object_uid, 'version', version, 'topology', topology)
                  from s order by start_at desc limit 1),
       'quotaPeriods', (select json_agg(json_build_object('from', ${rfc3339('from_at')}, 'to', ${rfc3339('to_at')}, 'hours', hours, ${QUOTA_JSON})
                         order by from_at) from periods),
       'samples', (select json_agg(json_build_object('start', ${rfc3339('start_at')}, 'end', ${rfc3339('end_at')}, 'replicas', replicas,
                     ${SAMPLE_RESOURCES_JSON}) order by start_at) from s)
     )::text end as view`,
    [samples],
  );
  return rows[0].view ?? undefined;
}

/** The months that have samples, oldest first. */
export async function generatedMonths(db: Database): Promise<{ year: number; month: number }[]> {
  // A loose index scan: each step asks the (month, ...) index for the next month after the last, so the cost is
  // one index probe per month, not a scan of every sample as `select distinct month` would be.
  const { rows } = await db.knex.raw(
    `with recursive m(month) as (
       select min(month) from ??.usage_samples
       union all
       select (select min(u.month) from ??.usage_samples u where u.month > m.month) from m where m.month is not null)
     select extract(year from month)::int as year, extract(month from month)::int as month from m where month is not null order by 1, 2`,
    [db.schema, db.schema],
  );
  return rows.map((r: { year: number; month: number }) => ({ year: Number(r.year), month: Number(r.month) }));
}
