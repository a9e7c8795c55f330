import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * What member clusters report over the agent protocol (docs/agent-protocol.md, docs/billing-ingestion.md):
 * licensed products with their first and last received times and licensed-resource events (both for the admin
 * dashboard), usage samples (for the usage reports), plus the ids of the agent messages applied (idempotency).
 */
export const agentReports: Migration = {
  name: '20261122010000_agent_reports',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('licensed_products', (t) => {
      t.comment(
        'A licensed product received on a cluster (LicenseUsage reports): one row per user, cluster, license and product (admin dashboard)',
      );
      t.bigInteger('user_id').notNullable().comment('Platform account id of the license holder');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the product runs on (a hub or a spoke)');
      t.string('license_id', 255).notNullable().comment('License id');
      t.string('product', 255).notNullable().comment('Product name, e.g. productdb');
      t.timestamp('first_received_at', { useTz: true }).notNullable().comment('Earliest received time reported');
      t.timestamp('last_received_at', { useTz: true }).notNullable().comment('Latest received time reported');
      t.primary(['user_id', 'cluster_uid', 'license_id', 'product']);
      // Active users, clusters and licenses of a window: last_received_at >= since.
      t.index(['last_received_at'], 'licensed_products_last_received');
      // /dashboard/clusters/{cid}/licenses/active, across all users.
      t.index(['cluster_uid', 'license_id', 'last_received_at'], 'licensed_products_cluster_license');
    });

    await knex.schema.withSchema(schema).createTable('resource_events', (t) => {
      t.comment(
        'Licensed-resource events (ResourceEvent reports): one row per (cluster, key, version) (dashboard events, raw-event, events-histories)',
      );
      t.bigIncrements('id').comment('Row id (internal)');
      t.bigInteger('user_id').notNullable().comment('Platform account id of the license holder');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the object lives on');
      t.string('license_id', 255).notNullable().comment('License id the object runs under');
      t.string('product', 255).notNullable().comment('Product name');
      t.string('group', 255).notNullable().comment('API group of the object, e.g. kubedb.com');
      t.string('resource', 255).notNullable().comment('Resource, plural and lower-case, e.g. postgreses');
      t.jsonb('resource_id').notNullable().comment('Identity of the object (group, kind, namespace, name), free-form object');
      t.string('key', 1024).notNullable().comment('Resource-history key: stable per object');
      t.bigInteger('version').notNullable().comment('Version of the object within its key, from 1; (key, version) names one event');
      t.timestamp('event_at', { useTz: true }).notNullable().comment('When the event happened');
      t.jsonb('partial_object_meta').notNullable().comment('The object as metav1.PartialObjectMetadata, free-form object');
      t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the platform stored it');
      t.unique(['cluster_uid', 'key', 'version'], { indexName: 'resource_events_key_version' });
      // events/ (lastDays, newest first) of a user, cluster, license and product.
      t.index(['user_id', 'cluster_uid', 'license_id', 'product', 'event_at'], 'resource_events_by_license_time');
      // events-histories (group, resource, key filters) and raw-event (key, version).
      t.index(['user_id', 'cluster_uid', 'license_id', 'product', 'group', 'resource', 'key', 'version'], 'resource_events_by_resource');
    });

    await knex.schema.withSchema(schema).createTable('usage_samples', (t) => {
      t.comment(
        'What one licensed object used over an interval (UsageSample reports), split at month boundaries so every row lies in one month (usage reports)',
      );
      t.bigIncrements('id').comment('Row id (internal)');
      t.date('month').notNullable().comment('First day of the UTC month the interval lies in');
      t.string('product', 255).notNullable().comment('Product name: productdb, productbackup, productvault, productingress');
      t.bigInteger('contract_id').notNullable().comment('Contract the usage is billed under; 0 when none binds the cluster');
      t.string('license_id', 255).notNullable().comment('License id the object runs under');
      t.bigInteger('user_id').notNullable().comment('Platform account id of the license holder');
      t.uuid('cluster_uid').notNullable().comment('UID of the cluster the object lives on');
      t.string('cluster_name', 255).notNullable().comment('Cluster name at sampling time');
      t.string('hosting', 64).notNullable().comment('gks for the hosted Kubernetes service, otherwise the provider');
      t.string('namespace', 255).notNullable().comment('Namespace name; empty for a cluster-scoped object');
      t.string('namespace_uid', 64).notNullable().comment('Namespace UID; empty when none');
      t.string('group', 255).notNullable().comment('API group of the object');
      t.string('kind', 255).notNullable().comment('Kind of the object, e.g. Postgres');
      t.string('name', 255).notNullable().comment('Object name');
      t.string('object_uid', 64).notNullable().comment('Object UID (the objectID of the quota-history routes)');
      t.string('version', 64).notNullable().comment('Product version of the object, e.g. 16.4');
      t.string('topology', 16).notNullable().comment('STANDALONE, CLUSTER, or UNSPECIFIED');
      t.integer('replicas').notNullable().comment('Replicas running over the interval (average, rounded)');
      t.timestamp('start_at', { useTz: true }).notNullable().comment('Interval start (inclusive), clipped to the month');
      t.timestamp('end_at', { useTz: true }).notNullable().comment('Interval end (exclusive), clipped to the month; after start_at');
      t.bigInteger('cpu_request').notNullable().comment('CPU request, millicores');
      t.bigInteger('cpu_limit').notNullable().comment('CPU limit, millicores; 0 = unlimited');
      t.bigInteger('cpu_used').notNullable().comment('Average CPU used over the interval, millicores; 0 = not measured');
      t.bigInteger('memory_request').notNullable().comment('Memory request, bytes');
      t.bigInteger('memory_limit').notNullable().comment('Memory limit, bytes; 0 = unlimited');
      t.bigInteger('memory_used').notNullable().comment('Average memory used over the interval, bytes; 0 = not measured');
      t.bigInteger('storage_request').notNullable().comment('Storage request, bytes');
      t.bigInteger('storage_limit').notNullable().comment('Storage limit, bytes; 0 = unlimited');
      t.bigInteger('storage_used').notNullable().comment('Average storage used over the interval, bytes; 0 = not measured');
      t.jsonb('resources')
        .notNullable()
        .comment('Every resource as reported: [{resource, request, limit, used}], including any beyond cpu, memory, storage');
      t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the platform stored it');
      // One object's samples in time order (object-quota-history), and idempotency by object and interval.
      t.unique(['cluster_uid', 'object_uid', 'start_at'], { indexName: 'usage_samples_object_interval' });
      // generated-months; objects, clusters, namespaces views and the PDF summary of a month and product.
      t.index(['month', 'product', 'cluster_uid', 'namespace', 'object_uid'], 'usage_samples_month_product_cluster');
      // contracts-usage-view and the contractID filter.
      t.index(['month', 'product', 'contract_id'], 'usage_samples_month_product_contract');
      // gks-usage-view.
      t.index(['month', 'hosting', 'cluster_uid'], 'usage_samples_month_hosting');
    });

    await knex.schema.withSchema(schema).createTable('agent_seen_messages', (t) => {
      t.comment('Agent messages applied, by id, written in the same transaction as their effect: a redelivery is skipped');
      t.uuid('message_id').primary().comment('Envelope message_id');
      t.uuid('cluster_uid').notNullable().comment('Envelope cluster_uid');
      t.string('kind', 32).notNullable().comment('Kind token, e.g. usage-sample');
      t.timestamp('seen_at', { useTz: true })
        .notNullable()
        .defaultTo(knex.fn.now())
        .comment('When it was applied; retention deletes by it');
      t.index(['seen_at'], 'agent_seen_messages_seen_at');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('agent_seen_messages');
    await knex.schema.withSchema(schema).dropTable('usage_samples');
    await knex.schema.withSchema(schema).dropTable('resource_events');
    await knex.schema.withSchema(schema).dropTable('licensed_products');
  },
};
