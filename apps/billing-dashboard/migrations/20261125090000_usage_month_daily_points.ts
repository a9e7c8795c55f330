import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Each monthly per-object rollup keeps the points of its daily series (docs/usage-reports.md), so the daily objects
 * view joins kept text instead of writing a point for every object and day: `daily`, 31 slots, slot i the JSON of
 * day i (NULL for a day without samples). Ingestion rewrites a day's slot when it adds samples to that day. The
 * rollups already stored get theirs from their day rollups here.
 */
export const usageMonthDailyPoints: Migration = {
  name: '20261125090000_usage_month_daily_points',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('usage_object_months', (t) => {
      t.specificType('daily', 'text[]').comment(
        "The month's daily points: slot i is day i's JSON point (its sums' float8s), NULL without samples; NULL when not kept",
      );
    });
    await knex.raw(
      `update ??.usage_object_months m set daily = s.daily from (${SLOTS}) s
       where m.month = s.month and m.cluster_uid = s.cluster_uid and m.object_uid = s.object_uid and m.attributes_key = s.attributes_key`,
      [schema, schema],
    );
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('usage_object_months', (t) => t.dropColumn('daily'));
  },
};

// The slots of apps/billing-dashboard/src/usage/daily-series.ts (dailySlots), kept here as they are at this
// migration so that a later change there does not change what this migration does.
const POINT = `format('{"date":"%s","cpuCoreHours":%s,"memoryGiBHours":%s,"storageGiBHours":%s,"objectHours":%s}',
  to_char(day, 'YYYY-MM-DD'), cpu_core_hours_f8, memory_gib_hours_f8, storage_gib_hours_f8, object_hours_f8)`;
const SLOTS = `select month, cluster_uid, object_uid, attributes_key, array(select points ->> i::text from generate_series(1, 31) i) as daily
  from (select month, cluster_uid, object_uid, attributes_key, jsonb_object_agg(extract(day from day)::int, ${POINT}) as points
        from ??.usage_object_days group by month, cluster_uid, object_uid, attributes_key) p`;
