import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * The registered metrics backends: one row per flavor and cluster (and project), naming what was made on the
 * dashboard API so unregister removes exactly that and the auth hook finds the client organization. No
 * credential is kept here: they live in the dashboard's secure fields or secrets only.
 */
export const backends: Migration = {
  name: '20261123000000_backends',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('backends', (t) => {
      t.bigIncrements('id');
      t.string('flavor', 1).notNullable().comment("'a' (Grafana-compatible) or 'b' (Perses-compatible)");
      t.bigInteger('owner_id').notNullable();
      t.string('cluster_uid', 64).notNullable();
      t.string('project_id', 255).notNullable().defaultTo('');
      t.string('hub_uid', 64).notNullable().defaultTo('');
      t.string('client_org_id', 255).notNullable().defaultTo('');
      t.string('datasource', 512).notNullable();
      t.string('datasource_uid', 64).notNullable().defaultTo('');
      t.string('container', 255).notNullable().comment('flavor a: the folder uid; flavor b: the project name');
      t.bigInteger('container_id').notNullable().defaultTo(0).comment('flavor a: the folder id');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['flavor', 'owner_id', 'cluster_uid', 'project_id']);
      t.index(['owner_id', 'cluster_uid']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('backends');
  },
};
