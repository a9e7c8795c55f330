import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Console sessions (docs/authentication.md, "Console sessions"): one row per signed-in browser, found by the SHA-256
 * of its secret (the cookie's value is never stored), with the client that began it and its last use, so the user can
 * see and end it. A user's sessions go with the account.
 */
export const sessions: Migration = {
  name: '20261202000000_sessions',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('sessions', (t) => {
      t.bigIncrements('id').primary();
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE');
      t.string('secret_hash', 64).notNullable().unique().comment('SHA-256 (hex) of the session secret');
      t.string('user_agent', 512).notNullable().defaultTo('').comment('User-Agent of the client that signed in');
      t.string('address', 64).notNullable().defaultTo('').comment('Address of the client that signed in');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('last_used_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('absolute_expires_at', { useTz: true }).notNullable().comment('created_at + SESSION_MAX_LIFETIME');
      t.index(['uid']);
      t.index(['last_used_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('sessions');
  },
};
