import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Gitea's token scopes (docs/authentication.md, "Token scopes"): what each access token may be used for, as a
 * comma-separated list as Gitea stores it. Tokens made before scopes existed keep doing everything: `all`.
 */
export const tokenAccessScopes: Migration = {
  name: '20261201020000_token_access_scopes',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('access_tokens', (t) => {
      t.string('access_scopes', 255).notNullable().defaultTo('all').comment("Gitea scopes, comma-separated ('all', 'read:organization', ...)");
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('access_tokens', (t) => {
      t.dropColumn('access_scopes');
    });
  },
};
