import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Cluster sets (docs/cluster-sets.md): named groups of a hub's managed clusters, who holds which
 * role-ref on a set, and the hub namespaces bound to sets. A managed cluster is in at most one set (the
 * primary key of cluster_set_members on cluster_id), as a ManagedClusterSet of the multi-cluster manager.
 */
export const clusterSets: Migration = {
  name: '20261123000000_cluster_sets',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('cluster_sets', (t) => {
      t.comment('Cluster sets of a hub cluster');
      t.bigIncrements('id').comment('Set id (internal)');
      t.bigInteger('hub_id').notNullable().references('id').inTable(`${schema}.clusters`).onDelete('CASCADE').comment('The hub');
      t.string('name', 63).notNullable().comment('DNS label, unique among the sets of the hub');
      t.string('title', 255).notNullable().defaultTo('').comment('Title shown to people; may be empty');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was created');
      t.unique(['hub_id', 'name']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_set_members', (t) => {
      t.comment('Managed clusters in a set; a cluster is in at most one set');
      t.bigInteger('cluster_id')
        .primary()
        .references('id')
        .inTable(`${schema}.clusters`)
        .onDelete('CASCADE')
        .comment('The managed cluster (one set at most)');
      t.bigInteger('set_id').notNullable().references('id').inTable(`${schema}.cluster_sets`).onDelete('CASCADE').comment('Its set');
      t.timestamp('added_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was added');
      t.index(['set_id']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_set_role_bindings', (t) => {
      t.comment('Role-refs granted on a set (auth-info): the creator gets the admin one, client-org provisioning the requested ones');
      t.bigInteger('set_id').notNullable().references('id').inTable(`${schema}.cluster_sets`).onDelete('CASCADE').comment('The set');
      t.string('role_ref', 255).notNullable().comment('Role-ref name, e.g. open-cluster-management:managedclusterset:admin');
      t.string('login', 255).notNullable().comment('Login of the user holding it');
      t.primary(['set_id', 'role_ref', 'login']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_set_namespaces', (t) => {
      t.comment('Hub namespaces bound to cluster sets (ManagedClusterSetBinding)');
      t.bigInteger('set_id').notNullable().references('id').inTable(`${schema}.cluster_sets`).onDelete('CASCADE').comment('The set');
      t.string('namespace', 63).notNullable().comment('Namespace of the hub');
      t.primary(['set_id', 'namespace']);
    });
  },
  async down(knex: Knex, schema: string) {
    for (const table of ['cluster_set_namespaces', 'cluster_set_role_bindings', 'cluster_set_members', 'cluster_sets']) {
      await knex.schema.withSchema(schema).dropTable(table);
    }
  },
};
