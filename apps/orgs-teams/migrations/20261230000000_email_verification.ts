import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Verified e-mail addresses and one provider subject per account (docs/authentication.md, "Verified e-mail
 * addresses" and "Single sign-on (OIDC)").
 *
 * - `accounts.email_verified`: accounts made before count as verified (site admins made them, or they signed up before
 *   the rule existed); new rows are unverified unless the code making them says otherwise.
 * - `email_verifications`: the one pending link of an account, by the SHA-256 of its token (the token itself is only
 *   in the mail), for the address it was sent to.
 * - `external_identities (issuer, uid)` unique: an account has at most one subject of a provider. Accounts that two
 *   subjects of one issuer already reached (the way an unverified e-mail could take an account) lose those links, so
 *   none of those people is trusted by a link the rule would not have made: the next verified sign-in links afresh.
 *   `down` drops the index but cannot bring those links back.
 */
export const emailVerification: Migration = {
  name: '20261230000000_email_verification',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.boolean('email_verified').notNullable().defaultTo(true).comment('The address was proven (the mailed link) or vouched for by a site admin');
    });
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.boolean('email_verified').notNullable().defaultTo(false).alter();
    });
    await knex.schema.withSchema(schema).createTable('email_verifications', (t) => {
      t.bigInteger('uid').primary().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.specificType('token_hash', 'char(64)').notNullable().unique().comment("SHA-256 (hex) of the mailed link's token; the token is never stored");
      t.string('email', 255).notNullable().comment('The address the link was sent to: it verifies only that one');
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the mail was asked for (resends are limited)');
    });
    await knex
      .withSchema(schema)
      .table('external_identities')
      .whereIn(['issuer', 'uid'], knex.withSchema(schema).table('external_identities').select('issuer', 'uid').groupBy('issuer', 'uid').havingRaw('count(*) > 1'))
      .delete();
    await knex.schema.withSchema(schema).alterTable('external_identities', (t) => {
      t.unique(['issuer', 'uid'], { indexName: 'external_identities_issuer_uid_unique' });
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('external_identities', (t) => {
      t.dropUnique(['issuer', 'uid'], 'external_identities_issuer_uid_unique');
    });
    await knex.schema.withSchema(schema).dropTable('email_verifications');
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.dropColumn('email_verified');
    });
  },
};
