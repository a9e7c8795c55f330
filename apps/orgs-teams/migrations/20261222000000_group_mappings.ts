import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Groups to teams (docs/authentication.md, "Groups to teams"): a value of the identity provider's group claim names a
 * team of an organization, or (site-wide, no organization) site admin. Applied at every sign-in through the provider.
 * A mapping goes with its organization or team.
 */
export const groupMappings: Migration = {
  name: '20261222000000_group_mappings',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('group_mappings', (t) => {
      t.bigIncrements('id').primary();
      t.bigInteger('org_id')
        .nullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('The organization whose team is named; null for a site-wide mapping');
      t.text('group_value').notNullable().comment("A value of the provider's group claim, compared exactly");
      t.bigInteger('team_id').nullable().references('id').inTable(`${schema}.teams`).onDelete('CASCADE');
      t.boolean('site_admin').notNullable().defaultTo(false);
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['team_id']);
    });
    // A team mapping belongs to its organization; site admin only to the site-wide list.
    await knex.raw(
      `alter table ??.group_mappings add constraint group_mappings_target check
         ((team_id is not null and not site_admin and org_id is not null) or (team_id is null and site_admin))`,
      [schema],
    );
    await knex.raw('create unique index group_mappings_team_unique on ??.group_mappings (group_value, team_id) where team_id is not null', [
      schema,
    ]);
    await knex.raw('create unique index group_mappings_admin_unique on ??.group_mappings (group_value) where site_admin', [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('group_mappings');
  },
};
