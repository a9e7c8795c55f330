import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Client-org creations under way (docs/client-organizations.md): one row from the moment a creation is accepted until
 * it is finished or undone, naming what its steps made in orgs-teams, so a creation a crash interrupted is carried on
 * or taken back by the outbox relay.
 */
export const clientOrgProvisions: Migration = {
  name: '20261124100000_client_org_provisions',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('client_org_provisions', (t) => {
      t.comment('Client-org creations under way; a row goes once its creation is finished or undone');
      t.bigIncrements('id').comment('Operation id (the outbox entry names it)');
      t.string('name', 40).notNullable().unique().comment('The organization slug being made; one creation at a time per name');
      t.string('state', 16).notNullable().comment('provisioning (going forward) or undoing (taking back what was made)');
      t.jsonb('request').notNullable().comment('The creation as asked (no secret: the admin password is made at its step)');
      t.string('admin_login', 40).notNullable().comment('Login of the admin user');
      t.boolean('admin_existed').notNullable().comment('The admin user existed when the creation was accepted (it is never deleted)');
      t.bigInteger('admin_user_id').nullable().comment('The admin user, once its step is done');
      t.boolean('admin_created').notNullable().defaultTo(false).comment('The admin user was made by this creation (undo deletes it)');
      t.bigInteger('org_id').nullable().comment('The organization made in orgs-teams, once its step is done');
      t.bigInteger('requester_id').notNullable().comment('The site admin who asked');
      t.text('last_error').nullable().comment('Why it is being undone, for operators');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the creation was accepted');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('client_org_provisions');
  },
};
