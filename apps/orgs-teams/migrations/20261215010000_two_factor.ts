import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * A TOTP second factor for local accounts (docs/authentication.md, "Second factor (TOTP)"): the secret sealed with the
 * service's SecretBox (it must be read again to check codes, so it cannot be hashed), the last time step a code was
 * accepted for (a code is not taken twice), and recovery codes by their SHA-256, each used once. The site's
 * requirement is a site setting. Everything goes with the account.
 */
export const twoFactor: Migration = {
  name: '20261215010000_two_factor',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('two_factor', (t) => {
      t.bigInteger('uid').primary().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.text('secret_sealed').notNullable().comment('The base32 TOTP secret, sealed (SecretBox)');
      t.boolean('enabled').notNullable().defaultTo(false).comment('false while enrolment waits for its first code');
      t.bigInteger('last_used_step').notNullable().defaultTo(0).comment('The 30-second step of the last code accepted');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.withSchema(schema).createTable('recovery_codes', (t) => {
      t.bigIncrements('id').primary();
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.string('code_hash', 64).notNullable().comment('SHA-256 (hex) of the normalized code');
      t.timestamp('used_at', { useTz: true }).nullable();
      t.unique(['uid', 'code_hash']);
    });
    await knex.schema.withSchema(schema).alterTable('site_settings', (t) => {
      t.string('require_two_factor', 16).notNullable().defaultTo('off').comment('off, admins or all');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('site_settings', (t) => t.dropColumn('require_two_factor'));
    await knex.schema.withSchema(schema).dropTable('recovery_codes');
    await knex.schema.withSchema(schema).dropTable('two_factor');
  },
};
