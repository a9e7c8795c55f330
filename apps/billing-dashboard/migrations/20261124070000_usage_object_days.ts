import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Daily per-object rollups of the usage samples, which the monthly usage views read instead of the samples
 * (docs/usage-reports.md). Since 20261123060000_usage_sample_days every sample row lies in one UTC day, so a
 * row's day is the day it starts, as the views' daily series already counts it; older rows crossing midnight
 * count on their first day here too. Ingestion adds to these rows in the transaction that inserts the samples,
 * from the samples it actually inserted. The samples already stored are rolled up here, by the same aggregation,
 * so an upgraded installation answers the same numbers.
 *
 * The sums are `numeric`, exactly the sums of the per-sample products the views used to add up, so a month's
 * sum of days is the same number as the sum of its samples and converts to the same float8.
 */
export const usageObjectDays: Migration = {
  name: '20261124070000_usage_object_days',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('usage_object_days', (t) => {
      t.comment(
        'Usage samples summed per object and UTC day (and per the attributes the usage views filter or split by, which rarely change within a day); written with the samples',
      );
      t.date('day').notNullable().comment('UTC day the samples start in');
      t.date('month').notNullable().comment('First day of the UTC month of day');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the object lives on');
      t.string('object_uid', 64).notNullable().comment('Object UID');
      t.uuid('attributes_key')
        .notNullable()
        .comment(
          "md5 of the row's other attributes (product to storage_limit): tells rows of one object and day apart with an index entry of bounded size",
        );
      t.string('product', 255).notNullable().comment('Product name of the samples');
      t.bigInteger('contract_id').notNullable().comment('Contract the samples are billed under; 0 when none');
      t.string('hosting', 64).notNullable().comment('Hosting of the samples: gks or the provider');
      t.string('namespace', 255).notNullable().comment('Namespace name of the samples');
      t.string('namespace_uid', 64).notNullable().comment('Namespace UID of the samples');
      t.string('group', 255).notNullable().comment('API group of the samples');
      t.string('kind', 255).notNullable().comment('Kind of the samples');
      t.string('topology', 16).notNullable().comment('Topology of the samples: STANDALONE, CLUSTER, or UNSPECIFIED');
      for (const r of ['cpu', 'memory', 'storage']) {
        const unit = r === 'cpu' ? 'millicores' : 'bytes';
        t.bigInteger(`${r}_request`).notNullable().comment(`${r} request of the samples, ${unit}`);
        t.bigInteger(`${r}_limit`).notNullable().comment(`${r} limit of the samples, ${unit}; 0 = unlimited`);
      }
      t.integer('samples').notNullable().comment('How many sample rows are summed here');
      t.bigInteger('last_id')
        .notNullable()
        .comment('Greatest usage_samples.id summed here: the last stored sample, whose names a view shows');
      t.timestamp('first_at', { useTz: true }).notNullable().comment('Earliest start of the samples');
      t.timestamp('last_at', { useTz: true }).notNullable().comment('Latest end of the samples');
      t.integer('replicas').notNullable().comment('Most replicas of the samples');
      for (const r of ['cpu', 'memory', 'storage'])
        t.bigInteger(`${r}_peak_used`).notNullable().comment(`Greatest average ${r} used of the samples; 0 = never measured`);
      t.specificType('cpu_core_hours', 'numeric').notNullable().comment('Σ hours × cores (used, else requested) of the samples, exact');
      t.specificType('memory_gib_hours', 'numeric').notNullable().comment('Σ hours × GiB of memory (used, else requested), exact');
      t.specificType('storage_gib_hours', 'numeric').notNullable().comment('Σ hours × GiB of storage (used, else requested), exact');
      t.specificType('object_hours', 'numeric').notNullable().comment('Σ hours of the samples, exact');
      t.specificType('replica_hours', 'numeric').notNullable().comment('Σ replicas × hours of the samples, exact');
      // Ingestion's upsert; one object's days (its views, namespace billing of a set of clusters).
      t.primary(['cluster_uid', 'object_uid', 'day', 'attributes_key']);
      // The month views of a product (and their cluster filter), in each object's day order.
      t.index(['month', 'product', 'cluster_uid', 'object_uid', 'day'], 'usage_object_days_month_product');
    });
    await knex.raw(`insert into ??.usage_object_days ${ROLLUP_SELECT} group by ${ROLLUP_KEY}`, [schema, schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('usage_object_days');
  },
};

// The aggregation of apps/billing-dashboard/src/ingestion/ingestion-store.ts (rollUpSamples), kept here as it is
// at this migration so that a later change there does not change what this migration does.
const HOURS = 'extract(epoch from (end_at - start_at)) / 3600.0';
const ATTRIBUTES =
  'product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit';
const ROLLUP_KEY = `(start_at at time zone 'UTC')::date, month, cluster_uid, object_uid, ${ATTRIBUTES}`;
const ROLLUP_SELECT = `(day, month, cluster_uid, object_uid, attributes_key, ${ATTRIBUTES}, samples, last_id, first_at, last_at, replicas,
    cpu_peak_used, memory_peak_used, storage_peak_used, cpu_core_hours, memory_gib_hours, storage_gib_hours, object_hours, replica_hours)
  select (start_at at time zone 'UTC')::date, month, cluster_uid, object_uid, md5(row(${ATTRIBUTES})::text)::uuid, ${ATTRIBUTES},
    count(*), max(id), min(start_at), max(end_at), max(replicas), max(cpu_used), max(memory_used), max(storage_used),
    sum(${HOURS} * ((case when cpu_used > 0 then cpu_used else cpu_request end) / 1000.0)),
    sum(${HOURS} * ((case when memory_used > 0 then memory_used else memory_request end) / 1073741824.0)),
    sum(${HOURS} * ((case when storage_used > 0 then storage_used else storage_request end) / 1073741824.0)),
    sum(${HOURS}), sum(replicas * ${HOURS})
  from ??.usage_samples`;
