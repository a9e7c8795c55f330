import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Contracts, the clusters bound to them and their audit trail (docs/contracts.md). */
export const contracts: Migration = {
  name: '20261123010000_contracts',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('contracts', (t) => {
      t.comment('Contracts: what an owner account (organization or user) is licensed for, one product each');
      t.bigIncrements('id').primary().comment('Contract id');
      t.bigInteger('owner_id').notNullable().comment('Owner account id (orgs-teams id space): the uid field');
      t.string('owner_login', 64).notNullable().comment('Owner slug at creation: the orgOrUser field');
      t.string('owner_type', 16).notNullable().comment('organization or user');
      t.string('name', 255).notNullable().defaultTo('').comment('Contract name');
      t.string('product', 64).notNullable().comment('Product alias of the catalog (docs/contracts.md)');
      t.jsonb('features').notNullable().defaultTo('[]').comment('Licensed features: a JSON array of feature names');
      t.jsonb('emails').notNullable().defaultTo('{}').comment('Recipient lists by role: contactPerson, signingAuthority, ...');
      t.jsonb('quota').notNullable().defaultTo('{}').comment('Quota: enabled, metric, limit, alertThresholds, disableLicenseOnLimitReached');
      t.timestamp('start_at', { useTz: true }).notNullable().comment('Start of the contract');
      t.timestamp('end_at', { useTz: true }).notNullable().comment('End of the contract: licenses expire then');
      t.string('document_path', 512).notNullable().defaultTo('').comment('Object-storage key of the contract document; empty when none');
      t.string('document_name', 255).notNullable().defaultTo('').comment('File name the document was uploaded with');
      t.string('document_type', 255).notNullable().defaultTo('').comment('Content type the document was uploaded with');
      t.boolean('allow_offline').notNullable().defaultTo(false).comment('Offline (air-gapped) licenses permitted');
      t.boolean('auto_assign_cluster').notNullable().defaultTo(false).comment('Newly imported clusters of the owner are bound automatically');
      t.boolean('disable_analytics').notNullable().defaultTo(false).comment('Licenses carry DisableAnalytics=true');
      t.boolean('enable_client_billing').notNullable().defaultTo(false).comment('Client (managed-service) billing');
      t.boolean('revoked').notNullable().defaultTo(false).comment('Revoked: no license is issued, issued ones are on the CRL');
      t.text('restrictions').notNullable().defaultTo('').comment('JSON-encoded restrictions, carried into licenses');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the contract was created');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Last change');
      t.index(['owner_id', 'id'], 'contracts_owner');
    });
    await knex.schema.withSchema(schema).createTable('contract_clusters', (t) => {
      t.comment('Clusters bound to contracts: the ccID of the routes');
      t.bigIncrements('id').primary().comment('Contract-cluster id (ccID)');
      t.bigInteger('contract_id').notNullable().references('id').inTable(`${schema}.contracts`).onDelete('CASCADE').comment('The contract');
      t.uuid('cluster_uid').notNullable().comment('Bound cluster UUID (lower-case)');
      t.string('display_name', 255).notNullable().defaultTo('').comment('Display name given when binding');
      t.string('name', 255).notNullable().defaultTo('').comment('Cluster name set by PATCH .../name; empty: the inventory name');
      t.jsonb('tags').notNullable().defaultTo('[]').comment('Tags: a JSON array, synced across contracts bound to the same cluster');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was bound');
      t.unique(['contract_id', 'cluster_uid'], { indexName: 'contract_clusters_once' });
      t.index(['cluster_uid'], 'contract_clusters_cluster');
    });
    await knex.schema.withSchema(schema).createTable('contract_events', (t) => {
      t.comment('Audit trail: every change of a contract, written in the transaction of the change');
      t.bigIncrements('id').primary().comment('Event id');
      t.bigInteger('contract_id').notNullable().references('id').inTable(`${schema}.contracts`).onDelete('CASCADE').comment('The contract');
      t.string('added_by', 64).notNullable().comment('Login of who made the change');
      t.text('event').notNullable().comment('What changed, e.g. contract-created or cluster-bound: <uuid>');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When');
      t.index(['contract_id', 'id'], 'contract_events_contract');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('contract_events');
    await knex.schema.withSchema(schema).dropTable('contract_clusters');
    await knex.schema.withSchema(schema).dropTable('contracts');
  },
};
