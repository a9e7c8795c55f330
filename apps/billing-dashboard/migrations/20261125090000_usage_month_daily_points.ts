import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Each object's daily points of a month, kept as text (docs/usage-reports.md), so the daily objects view joins
 * kept text instead of summing ~30 day rollups an object and writing their points: `daily`, 31 slots, slot i the
 * JSON point of day i (NULL for a day without samples), summed over all the object's day rollups of the day.
 * Ingestion rewrites a day's slot when it adds samples to that day. The days already rolled up get theirs here.
 */
export const usageMonthDailyPoints: Migration = {
  name: '20261125090000_usage_month_daily_points',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('usage_object_month_points', (t) => {
      t.comment('The daily points of each object in a UTC month as JSON text, for the daily usage views; written with the samples');
      t.date('month').notNullable().comment('First day of the UTC month');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the object lives on');
      t.string('object_uid', 64).notNullable().comment('Object UID');
      t.specificType('daily', 'text[]')
        .notNullable()
        .comment(
          'Slot i: the JSON point of day i, the float8s of the exact sums of the day rollups of the object on that day; NULL without samples',
        );
      t.primary(['cluster_uid', 'object_uid', 'month']);
    });
    await knex.raw(`insert into ??.usage_object_month_points (month, cluster_uid, object_uid, daily) ${SLOTS}`, [schema, schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('usage_object_month_points');
  },
};

// The points of apps/billing-dashboard/src/usage/daily-series.ts (dailySlots), kept here as they are at this
// migration so that a later change there does not change what this migration does.
const POINT = `format('{"date":"%s","cpuCoreHours":%s,"memoryGiBHours":%s,"storageGiBHours":%s,"objectHours":%s}',
  to_char(day, 'YYYY-MM-DD'), cpu_core_hours, memory_gib_hours, storage_gib_hours, object_hours)`;
const SLOTS = `select month, cluster_uid, object_uid, array(select points ->> i::text from generate_series(1, 31) i)
  from (select month, cluster_uid, object_uid, jsonb_object_agg(extract(day from day)::int, ${POINT}) as points
        from (select month, cluster_uid, object_uid, day, sum(cpu_core_hours)::float8 as cpu_core_hours,
                sum(memory_gib_hours)::float8 as memory_gib_hours, sum(storage_gib_hours)::float8 as storage_gib_hours,
                sum(object_hours)::float8 as object_hours
              from ??.usage_object_days group by month, cluster_uid, object_uid, day) d
        group by month, cluster_uid, object_uid) p`;
