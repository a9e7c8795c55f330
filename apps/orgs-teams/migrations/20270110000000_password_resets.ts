import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Forgotten passwords (docs/authentication.md, "Forgotten passwords"): the one pending reset link of an account. The
 * link's code is a selector, by which the row is found, and a verifier, of which only the SHA-256 is kept and compared
 * in constant time; the code itself is only in the mail.
 */
export const passwordResets: Migration = {
  name: '20270110000000_password_resets',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('password_resets', (t) => {
      t.comment('The one pending password-reset link of each account; a new request replaces it, using it deletes it');
      t.bigInteger('uid').primary().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.string('selector', 32).notNullable().unique().comment("The link's lookup part (random, not secret on its own)");
      t.specificType('verifier_hash', 'char(64)')
        .notNullable()
        .comment("SHA-256 (hex) of the link's secret part; the secret is never stored");
      t.string('email', 255).notNullable().comment('The address the link was sent to: the link is void once the account has another');
      t.specificType('password_fingerprint', 'char(64)')
        .notNullable()
        .comment('SHA-256 of the password hash when the link was made: the link is void once the password changed another way');
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('password_resets');
  },
};
