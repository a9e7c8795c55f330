import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Self-registration arrives closed (docs/site-settings.md, "Registration toggle"): until sign-up existed the toggle
 * changed nothing, so a site that never chose still read "enabled". With sign-up live that would open every existing
 * and every new site to anyone who can reach it; a site admin opens it deliberately instead.
 */
export const registrationClosedByDefault: Migration = {
  name: '20261202010000_registration_closed_by_default',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('site_settings', (t) => {
      t.boolean('disable_registration').notNullable().defaultTo(true).alter();
    });
    await knex.withSchema(schema).table('site_settings').update({ disable_registration: true });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('site_settings', (t) => {
      t.boolean('disable_registration').notNullable().defaultTo(false).alter();
    });
  },
};
