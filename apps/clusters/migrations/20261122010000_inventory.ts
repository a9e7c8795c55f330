import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** The cluster inventory: hub clusters of an owner, managed (spoke) clusters under a hub, namespaces, installed features. */
export const inventory: Migration = {
  name: '20261122010000_inventory',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('clusters', (t) => {
      t.comment('Hub clusters (hub_id null) owned by an organization or user, and the managed (spoke) clusters under a hub');
      t.bigIncrements('id').comment('Cluster id (internal)');
      t.uuid('uid').notNullable().unique().comment('Cluster UUID (its kube-system namespace UID); the authz object is cluster:<uid>');
      t.bigInteger('hub_id')
        .nullable()
        .references('id')
        .inTable(`${schema}.clusters`)
        .onDelete('CASCADE')
        .comment('The hub a managed cluster is under; null for a hub');
      t.string('owner_type', 16).notNullable().comment('Owning account type: organization or user');
      t.bigInteger('owner_id').notNullable().comment("Owning account id (orgs-teams' id space); a spoke has its hub's owner");
      t.string('name', 63).notNullable().comment('DNS label; unique among the hubs of an owner or the spokes of a hub');
      t.string('display_name', 255).notNullable().defaultTo('').comment('Name shown to people');
      t.string('provider', 64).notNullable().defaultTo('').comment('Where it runs (aws, gcp, azure, on-prem, ...)');
      t.string('kubernetes_version', 64).notNullable().defaultTo('').comment('Kubernetes version reported by the cluster');
      t.integer('node_count').notNullable().defaultTo(0).comment('Number of nodes reported by the cluster');
      t.jsonb('status').notNullable().defaultTo('{}').comment('Kubernetes-style status object, free-form, as reported');
      t.string('manager_endpoint', 2048).notNullable().defaultTo('').comment('Multi-cluster-manager endpoint; empty when none');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the platform recorded it');
      t.index(['hub_id']);
    });
    await knex.raw('create unique index clusters_hub_name_per_owner on ??.clusters (owner_type, owner_id, name) where hub_id is null', [
      schema,
    ]);
    await knex.raw('create unique index clusters_spoke_name_per_hub on ??.clusters (hub_id, name) where hub_id is not null', [schema]);
    await knex.schema.withSchema(schema).createTable('cluster_namespaces', (t) => {
      t.comment('Namespaces of a hub or managed cluster');
      t.bigInteger('cluster_id').notNullable().references('id').inTable(`${schema}.clusters`).onDelete('CASCADE').comment('Cluster');
      t.string('name', 63).notNullable().comment('Namespace name');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the platform recorded it');
      t.primary(['cluster_id', 'name']);
    });
    await knex.schema.withSchema(schema).createTable('cluster_features', (t) => {
      t.comment('Platform features installed on a hub or managed cluster, with their versions');
      t.bigInteger('cluster_id').notNullable().references('id').inTable(`${schema}.clusters`).onDelete('CASCADE').comment('Cluster');
      t.string('feature', 255).notNullable().comment('Feature name');
      t.string('version', 64).notNullable().comment('Installed version');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When this version was reported');
      t.primary(['cluster_id', 'feature']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('cluster_features');
    await knex.schema.withSchema(schema).dropTable('cluster_namespaces');
    await knex.schema.withSchema(schema).dropTable('clusters');
  },
};
