import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Scoped access tokens (docs/authentication.md): a token may be limited to one use, such as the license proxy
 * an installer sets up, and then acts for one account (an organization or the user) instead of its owner's.
 */
export const scopedTokens: Migration = {
  name: '20261123000000_scoped_tokens',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('access_tokens', (t) => {
      t.string('scope', 32).notNullable().defaultTo('').comment('The one use the token is limited to (license-proxy); empty: unrestricted');
      t.bigInteger('scope_account_id')
        .nullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('The account a scoped token acts for (an organization or the user); null when unscoped');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('access_tokens', (t) => {
      t.dropColumn('scope_account_id');
      t.dropColumn('scope');
    });
  },
};
