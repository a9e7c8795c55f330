import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Creates nothing yet but documents the schema; later migrations add the tables. */
export const init: Migration = {
  name: '20261122000000_init',
  async up(knex: Knex, schema: string) {
    await knex.raw(`comment on schema ?? is 'per-cluster metrics backends registered as dashboard datasources'`, [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.raw('comment on schema ?? is null', [schema]);
  },
};
