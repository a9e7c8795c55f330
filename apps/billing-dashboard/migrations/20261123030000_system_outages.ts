import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** System outages a site admin records (`/dashboard/system-outages`, docs/system-outages.md). */
export const systemOutages: Migration = {
  name: '20261123030000_system_outages',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('system_outages', (t) => {
      t.comment('A system outage recorded by a site admin, for one account and cluster or none (dashboard system outages)');
      t.bigIncrements('id').comment('Outage id');
      t.bigInteger('account_id').nullable().comment('Platform account id the outage concerns, resolved from accountName; null: none');
      t.string('account_name', 255).notNullable().defaultTo('').comment('Account login as given (accountName); empty when none');
      t.string('cluster_id', 255).notNullable().defaultTo('').comment('Cluster the outage concerns (clusterID); empty when none');
      t.timestamp('start_at', { useTz: true }).notNullable().comment('When the outage began');
      t.timestamp('end_at', { useTz: true }).notNullable().comment('When it ended; after start_at');
      t.jsonb('tags').notNullable().defaultTo('[]').comment('Tags, distinct and trimmed: a JSON array of strings');
      t.text('comments').notNullable().defaultTo('').comment('Free-text comments');
      t.string('created_by', 255).notNullable().defaultTo('').comment('Login of the site admin who recorded it');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was recorded');
      // Overlap check of a new outage (same account and cluster, start_at < end and end_at > start).
      t.index(['account_id', 'cluster_id', 'start_at', 'end_at'], 'system_outages_overlap');
      // The report's start filter and its newest-first order.
      t.index(['end_at'], 'system_outages_end_at');
    });
    await knex.raw('alter table ??.system_outages add constraint system_outages_end_after_start check (end_at > start_at)', [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('system_outages');
  },
};
