import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Feature sets of cluster sets (docs/cluster-sets.md): the release a set pins, the features installed
 * on it with the feature set's values, a member cluster's own values, and the generation of each hub's desired
 * state last sent to its agent.
 */
export const featureSets: Migration = {
  name: '20261123010000_feature_sets',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('cluster_sets', (t) => {
      t.string('version', 64)
        .notNullable()
        .defaultTo('')
        .comment('The platform release the features of the set run at; auto-update moves it');
    });
    // Sets made before feature sets existed pin the release of this migration (the catalog's at the time).
    await knex.withSchema(schema).table('cluster_sets').update({ version: 'v2026.11.0' });
    await knex.schema.withSchema(schema).createTable('cluster_set_features', (t) => {
      t.comment('Features installed (desired) on a cluster set');
      t.bigInteger('set_id').notNullable().references('id').inTable(`${schema}.cluster_sets`).onDelete('CASCADE').comment('The set');
      t.string('feature', 255).notNullable().comment('Feature name (catalog)');
      t.string('feature_set', 255).notNullable().comment('Its feature set (catalog)');
      t.primary(['set_id', 'feature']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_set_values', (t) => {
      t.comment('Helm values of a feature set installed on a cluster set (install-featureset)');
      t.bigInteger('set_id').notNullable().references('id').inTable(`${schema}.cluster_sets`).onDelete('CASCADE').comment('The set');
      t.string('feature_set', 255).notNullable().comment('Feature set (catalog)');
      t.jsonb('values').notNullable().defaultTo('{}').comment('Values object as given');
      t.primary(['set_id', 'feature_set']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_set_cluster_values', (t) => {
      t.comment('Values of one member cluster for a feature set (update-featureset); gone when it leaves the set');
      t.bigInteger('cluster_id')
        .notNullable()
        .references('cluster_id')
        .inTable(`${schema}.cluster_set_members`)
        .onDelete('CASCADE')
        .comment('The member cluster');
      t.string('feature_set', 255).notNullable().comment('Feature set (catalog)');
      t.jsonb('values').notNullable().defaultTo('{}').comment('Values laid over the set values for this cluster');
      t.primary(['cluster_id', 'feature_set']);
    });
    await knex.schema.withSchema(schema).createTable('hub_desired_state', (t) => {
      t.comment('Generation of the desired state last sent to the agent of each hub');
      t.bigInteger('hub_id').primary().references('id').inTable(`${schema}.clusters`).onDelete('CASCADE').comment('The hub');
      t.bigInteger('generation').notNullable().defaultTo(0).comment('Increases with every state sent');
      t.timestamp('sent_at', { useTz: true }).nullable().comment('When the last one was published');
    });
  },
  async down(knex: Knex, schema: string) {
    for (const table of ['hub_desired_state', 'cluster_set_cluster_values', 'cluster_set_values', 'cluster_set_features']) {
      await knex.schema.withSchema(schema).dropTable(table);
    }
    await knex.schema.withSchema(schema).alterTable('cluster_sets', (t) => {
      t.dropColumn('version');
    });
  },
};
