import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Monthly per-object rollups of the usage samples, next to the daily ones (usage_object_days): the month views
 * without a daily series read one row per object and month here instead of ~30 day rows (docs/usage-reports.md).
 * A row also keeps the names of its last stored sample that are not among its attributes (cluster name, name,
 * version), so a view takes an object's names from its rows instead of looking its last sample up among the
 * samples. Ingestion adds to these rows in the statement that inserts the samples and adds them to their days.
 * The samples already stored are rolled up here, by the same aggregation, so an upgraded installation answers the
 * same numbers.
 *
 * The sums are `numeric`, exactly the sums of the per-sample products, as in the daily rollups: an object's month
 * here is the same number as the sum of its days or of its samples. Both tables also get a float8 copy of each sum
 * (`<sum>_f8`, a stored generated column, so always the float8 of the exact sum): a view adds those for the
 * objects whose day or month is one row, which is several times faster than adding the numerics and converting.
 */
export const usageObjectMonths: Migration = {
  name: '20261124140000_usage_object_months',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('usage_object_months', (t) => {
      t.comment(
        'Usage samples summed per object and UTC month (and per the attributes the usage views filter or split by), with the names of the last sample; written with the samples',
      );
      t.date('month').notNullable().comment('First day of the UTC month the samples lie in');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the object lives on');
      t.string('object_uid', 64).notNullable().comment('Object UID');
      t.uuid('attributes_key')
        .notNullable()
        .comment("md5 of the row's other attributes (product to storage_limit), as in usage_object_days");
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
      t.string('cluster_name', 255).notNullable().comment('Cluster name of the sample last_id');
      t.string('name', 255).notNullable().comment('Object name of the sample last_id');
      t.string('version', 64).notNullable().comment('Version of the sample last_id');
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
      float8Copies(t);
      // Ingestion's upsert; one object's months (namespace billing of a set of clusters).
      t.primary(['cluster_uid', 'object_uid', 'month', 'attributes_key']);
      // The month views of a product (and their cluster filter).
      t.index(['month', 'product', 'cluster_uid', 'object_uid'], 'usage_object_months_month_product');
    });
    await knex.schema.withSchema(schema).alterTable('usage_object_days', float8Copies);
    await knex.raw(
      `insert into ??.usage_object_months (${COLUMNS})
       select g.*, s.cluster_name, s.name, s.version from (${GROUPED}) g join ??.usage_samples s on s.id = g.last_id`,
      [schema, schema, schema],
    );
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('usage_object_months');
    await knex.schema.withSchema(schema).alterTable('usage_object_days', (t) => t.dropColumns(...SUMS.map((q) => `${q}_f8`)));
  },
};

const SUMS = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours', 'object_hours', 'replica_hours'];

/** The float8 copy of each exact sum, kept by Postgres. */
function float8Copies(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder) {
  for (const q of SUMS)
    t.specificType(`${q}_f8`, `float8 generated always as (${q}::float8) stored`).comment(`${q} as float8 (the nearest double)`);
}

// The aggregation of apps/billing-dashboard/src/ingestion/ingestion-store.ts (rollUpSamplesByMonth), kept here as
// it is at this migration so that a later change there does not change what this migration does.
const HOURS = 'extract(epoch from (end_at - start_at)) / 3600.0';
const ATTRIBUTES =
  'product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit';
const COLUMNS = `month, cluster_uid, object_uid, attributes_key, ${ATTRIBUTES}, samples, last_id, first_at, last_at, replicas,
  cpu_peak_used, memory_peak_used, storage_peak_used, cpu_core_hours, memory_gib_hours, storage_gib_hours, object_hours, replica_hours,
  cluster_name, name, version`;
const GROUPED = `select month, cluster_uid, object_uid, md5(row(${ATTRIBUTES})::text)::uuid, ${ATTRIBUTES},
    count(*)::int, max(id) as last_id, min(start_at), max(end_at), max(replicas), max(cpu_used), max(memory_used), max(storage_used),
    sum(${HOURS} * ((case when cpu_used > 0 then cpu_used else cpu_request end) / 1000.0)),
    sum(${HOURS} * ((case when memory_used > 0 then memory_used else memory_request end) / 1073741824.0)),
    sum(${HOURS} * ((case when storage_used > 0 then storage_used else storage_request end) / 1073741824.0)),
    sum(${HOURS}), sum(replicas * ${HOURS})
  from ??.usage_samples
  group by month, cluster_uid, object_uid, ${ATTRIBUTES}`;
