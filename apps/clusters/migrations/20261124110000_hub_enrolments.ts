import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Hub enrolments under way (docs/clusters.md): one row from the moment an enrolment is accepted until its hub is
 * recorded or its bus account revoked, so an enrolment a crash interrupted is taken back by the outbox relay.
 */
export const hubEnrolments: Migration = {
  name: '20261124110000_hub_enrolments',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('hub_enrolments', (t) => {
      t.comment('Hub enrolments under way; a row goes once its hub is recorded or its bus account revoked');
      t.bigIncrements('id').comment('Operation id (the outbox entry names it)');
      t.bigInteger('owner_id').notNullable().comment('The organization enrolling the hub (orgs-teams account id)');
      t.string('name', 63).notNullable().comment('The hub name being enrolled');
      t.string('uid', 36).notNullable().unique().comment('The hub cluster UUID being enrolled');
      t.string('state', 16).notNullable().comment('enrolling, undoing (revoking its bus account) or done (its hub recorded)');
      t.jsonb('request').notNullable().comment('The hub as asked (CreateHub fields)');
      t.bigInteger('bus_account_id').nullable().comment('The bus account issued for the hub, once its step is done (never its seed)');
      t.text('last_error').nullable().comment('Why it is being undone, for operators');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the enrolment was accepted');
      t.unique(['owner_id', 'name']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('hub_enrolments');
  },
};
