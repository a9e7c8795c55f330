import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Client organizations (docs/client-organizations.md): the organization a site admin made for a client, the hub it
 * is served from, the spokes imported for it, and the status of their asynchronous cleanup.
 */
export const clientOrgs: Migration = {
  name: '20261123020000_client_orgs',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('client_orgs', (t) => {
      t.comment('Client organizations (the organization itself lives in orgs-teams)');
      t.bigInteger('org_id').primary().comment('The organization id (orgs-teams)');
      t.string('name', 255).notNullable().unique().comment('The organization slug');
      t.bigInteger('hub_id').notNullable().references('id').inTable(`${schema}.clusters`).comment('The hub it is served from');
      t.bigInteger('admin_user_id').notNullable().comment('Its admin user (orgs-teams)');
      t.string('admin_login', 255).notNullable().comment('Login of the admin user');
      t.bigInteger('requester_id').notNullable().comment('The site admin who made it (deletion acts as them)');
      t.string('status', 32).notNullable().defaultTo('Active').comment('Active, Deleting, Partially Deleted, Deleted');
      t.jsonb('settings')
        .notNullable()
        .defaultTo('{}')
        .comment('annotations, dbConfig, useGateway, gatewayConfig, telemetryParams, as given');
      t.boolean('usable_as_shared').notNullable().defaultTo(false).comment('Whether other client orgs may use its gateway config');
      t.bigInteger('gateway_config_ref')
        .nullable()
        .references('org_id')
        .inTable(`${schema}.client_orgs`)
        .comment('The client org whose gateway config this one uses');
      t.jsonb('role_refs').notNullable().defaultTo('[]').comment('Role-refs granted to the admin (set/roleRef or hub/roleRef)');
      t.text('last_error').nullable().comment('Why the last cleanup step failed, for operators');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was made');
    });
    await knex.schema.withSchema(schema).createTable('client_org_clusters', (t) => {
      t.comment('Spoke clusters imported for a client organization');
      t.bigInteger('org_id')
        .notNullable()
        .references('org_id')
        .inTable(`${schema}.client_orgs`)
        .onDelete('CASCADE')
        .comment('The client org');
      t.string('name', 63).notNullable().comment('The spoke name under the hub');
      t.uuid('uid').notNullable().comment('The spoke UID (its authz object cluster:<uid>)');
      t.string('status', 32).notNullable().defaultTo('Active').comment('Active, Deleting, Deleted');
      t.jsonb('settings')
        .notNullable()
        .defaultTo('{}')
        .comment('annotations, dbConfig, useGateway, gatewayConfig, telemetryParams of the import');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Last status change');
      t.primary(['org_id', 'name']);
      t.index(['uid']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('client_org_clusters');
    await knex.schema.withSchema(schema).dropTable('client_orgs');
  },
};
