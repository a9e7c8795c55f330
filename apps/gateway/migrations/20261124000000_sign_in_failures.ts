import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * The gateway's one table: failed Basic-auth attempts per client address, shared by every gateway replica
 * (docs/authentication.md). Its columns are the ones rate-limiter-flexible's Postgres store reads and writes, in
 * its order (it inserts by position).
 */
export const signInFailures: Migration = {
  name: '20261124000000_sign_in_failures',
  async up(knex: Knex, schema: string) {
    await knex.raw(`comment on schema ?? is 'the gateway: failed sign-in attempts per client address, shared by its replicas'`, [schema]);
    await knex.schema.withSchema(schema).createTable('sign_in_failures', (t) => {
      t.comment('failed Basic-auth attempts per client address in the current window (rate-limiter-flexible)');
      t.string('key', 255).primary().comment("the counted key: 'address:' and the client's address (an IPv6 client by its /64)");
      t.integer('points').notNullable().defaultTo(0).comment('failures counted in the window');
      t.bigInteger('expire').comment('when the window closes, in milliseconds since the epoch; it opened at the first failure');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('sign_in_failures');
    await knex.raw('comment on schema ?? is null', [schema]);
  },
};
