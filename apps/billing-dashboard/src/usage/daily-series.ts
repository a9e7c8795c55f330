/**
 * The daily series of a usage view (docs/usage-reports.md): a point per UTC day of the month with the four
 * quantities, `{"date":"2026-10-01","cpuCoreHours":…,"memoryGiBHours":…,"storageGiBHours":…,"objectHours":…}`.
 *
 * A view that lists objects shows each object's points, and a month of 7,500 objects is 220,000 of them: writing
 * their text was most of that view's time. So ingestion keeps each monthly rollup's points, already written, in
 * `usage_object_months.daily` (a `text[]` of 31 slots, slot i holding day i's point, NULL for a day without
 * samples), rewriting a day's slot whenever it adds samples to that day. A view then joins the slots
 * (`array_to_string` skips the NULLs) for every object whose month is one rollup, and writes the points of the
 * others, the few whose attributes changed within the month, from their days, with the same text.
 */

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
 * SQL of the kept slots of the day rollups in `days` (a table or a CTE with usage_object_days' key and float8
 * columns): one row per monthly rollup key (month, cluster_uid, object_uid, attributes_key) with `daily`, its 31
 * slots. A day rollup is one day of one monthly rollup (the same attributes), so its point is its own sums.
 */
export function dailySlots(days: string): string {
  const point = pointJson('date', DAY_TEXT('day'), ['cpu_core_hours_f8', 'memory_gib_hours_f8', 'storage_gib_hours_f8', 'object_hours_f8']);
  return `select month, cluster_uid, object_uid, attributes_key, array(select points ->> i::text from generate_series(1, 31) i) as daily
    from (select month, cluster_uid, object_uid, attributes_key, jsonb_object_agg(extract(day from day)::int, ${point}) as points
          from ${days} group by month, cluster_uid, object_uid, attributes_key) p`;
}

/** SQL merging a rollup's new slots (`fresh`) into its kept ones (`kept`): a new day's point replaces the kept one. */
export function mergedSlots(kept: string, fresh: string): string {
  // A rollup whose slots were never kept (NULL) stays so: its other days are not among the new ones, and a view
  // writes its points from its days.
  return `case when ${kept} is null then null else array(select coalesce(${fresh}[i], ${kept}[i]) from generate_series(1, 31) i) end`;
}

/**
 * SQL keeping the slots of every monthly rollup from its day rollups (a load that rolled up the samples in bulk, as
 * the usage-reports benchmark does). One `??` binding: the schema, used twice.
 */
export function keepDailySlots(): string {
  return `update ??.usage_object_months m set daily = s.daily from (${dailySlots('??.usage_object_days')}) s
    where m.month = s.month and m.cluster_uid = s.cluster_uid and m.object_uid = s.object_uid and m.attributes_key = s.attributes_key`;
}
