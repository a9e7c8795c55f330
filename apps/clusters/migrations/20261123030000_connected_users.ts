import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Team auto-connect (docs/organizations-and-teams.md): the users the platform wants connected to each hub (sent to
 * the hub's agent in its desired state), and the users each cluster's agent reports connected.
 */
export const connectedUsers: Migration = {
  name: '20261123030000_connected_users',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('hub_connected_users', (t) => {
      t.comment('Users to connect to a hub and its managed clusters (desired; the agent applies it)');
      t.bigInteger('hub_id').notNullable().references('id').inTable(`${schema}.clusters`).onDelete('CASCADE').comment('The hub cluster');
      t.bigInteger('user_id').notNullable().comment('The user (orgs-teams account id)');
      t.string('login', 255).notNullable().comment('Login of the user, the subject the agent binds the role to');
      t.string('role', 64).notNullable().comment('ClusterRole bound to the user, e.g. cluster-admin');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was recorded');
      t.primary(['hub_id', 'user_id']);
    });
    await knex.schema.withSchema(schema).alterTable('clusters', (t) => {
      t.jsonb('connected_users').notNullable().defaultTo('[]').comment('Users the agent last reported connected: [{login, role}] by login');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('clusters', (t) => t.dropColumn('connected_users'));
    await knex.schema.withSchema(schema).dropTable('hub_connected_users');
  },
};
