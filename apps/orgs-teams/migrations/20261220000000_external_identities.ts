import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * People who sign in through the site's OpenID provider (docs/authentication.md, "Single sign-on (OIDC)"): the
 * provider's (issuer, subject) pair names one account for good, whatever the person's name or e-mail becomes there.
 * The link goes with the account.
 */
export const externalIdentities: Migration = {
  name: '20261220000000_external_identities',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('external_identities', (t) => {
      t.text('issuer').notNullable().comment("The provider's issuer URL, as its ID tokens state it");
      t.text('subject').notNullable().comment("The ID token's sub: stable and unique at that issuer");
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.primary(['issuer', 'subject']);
      t.index(['uid']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('external_identities');
  },
};
