/**
 * The daily series of a usage view (docs/usage-reports.md): a point per UTC day of the month with the four
 * quantities, `{"date":"2026-10-01","cpuCoreHours":…,"memoryGiBHours":…,"storageGiBHours":…,"objectHours":…}`.
 *
 * The daily objects view shows each object's points, and a month of 7,500 objects is 220,000 of them: summing the
 * day rollups and writing the points' text was most of that view's time. So ingestion keeps each object's points of
 * a month, already written, in `usage_object_month_points.daily` (a `text[]` of 31 slots, slot i holding day i's
 * point, NULL for a day without samples), rewriting the points of the days it adds samples to. A point sums all of
 * the object's day rollups of its day (whatever their attributes), so the view joins the kept text when it selects
 * all of each object's rollups (no filter on an attribute); otherwise it writes the points from the day rollups
 * it selects, with the same text.
 */

/** The four quantities of a point, in its order. */
const QUANTITIES = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours', 'object_hours'];

/**
 * SQL of a point's JSON text, formatted as JSON by format() (twice as fast as json_build_object): the period's text
 * and the four quantities, float8 expressions. `field` names the period (`date`, or `month` in a monthly series).
 * Both the kept points and those a view writes are this text, so a view answers the same either way.
 */
export function pointJson(field: 'date' | 'month', period: string, quantities: readonly string[]): string {
  return (
    `format('{"${field}":"%s","cpuCoreHours":%s,"memoryGiBHours":%s,"storageGiBHours":%s,"objectHours":%s}', ` +
    `${period}, ${quantities.join(', ')})`
  );
}

/** A day's text in a point. */
export const DAY_TEXT = (day: string) => `to_char(${day}, 'YYYY-MM-DD')`;

/**
 * SQL of the points of the day rollups of `days` (usage_object_days, qualified) that `where` selects: one row per
 * object and month with `daily`, its 31 slots. A day's point is the float8 of the exact sum of the object's day
 * rollups of that day, which is what a view sums for it.
 */
export function dailySlots(days: string, where = 'true'): string {
  const sums = QUANTITIES.map((q) => `sum(${q})::float8 as ${q}`).join(', ');
  return `select month, cluster_uid, object_uid, array(select points ->> i::text from generate_series(1, 31) i) as daily
    from (select month, cluster_uid, object_uid, jsonb_object_agg(extract(day from day)::int, ${pointJson('date', DAY_TEXT('day'), QUANTITIES)}) as points
          from (select month, cluster_uid, object_uid, day, ${sums} from ${days} where ${where}
                group by month, cluster_uid, object_uid, day) d
          group by month, cluster_uid, object_uid) p`;
}

/**
 * SQL keeping the points of the object-days `touched` names (a JSON array of `{c, o, d}`: cluster UID, object UID,
 * day; one `?` binding after the schema's two `??`), from their day rollups as they are now: a touched day's point
 * replaces the kept one, the others stay. Ingestion runs it in the samples' transaction, after the statement that
 * added them to their days.
 */
export function keepTouchedPoints(): string {
  const touched = `(cluster_uid, object_uid, day) in (
      select (t->>'c')::uuid, t->>'o', (t->>'d')::date from jsonb_array_elements(?::jsonb) t)`;
  return `insert into ??.usage_object_month_points as k (month, cluster_uid, object_uid, daily)
    ${dailySlots('??.usage_object_days', touched)}
    order by cluster_uid, object_uid, month
    on conflict (cluster_uid, object_uid, month) do update
      set daily = array(select coalesce(excluded.daily[i], k.daily[i]) from generate_series(1, 31) i)`;
}

/**
 * SQL keeping the points of every object and month from the day rollups, replacing what was kept (after a load
 * that rolled up the samples in bulk, as the usage-reports benchmark does). Two `??` bindings: the schema.
 */
export function keepAllPoints(): string {
  return `insert into ??.usage_object_month_points (month, cluster_uid, object_uid, daily)
    ${dailySlots('??.usage_object_days')}
    on conflict (cluster_uid, object_uid, month) do update set daily = excluded.daily`;
}
