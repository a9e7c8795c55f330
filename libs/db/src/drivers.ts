/**
 * knex and the pg driver, loaded when a process opens its first database: a process that opens none (the gateway) and
 * every unit test that only imports `@platform/db` never pay for loading them (some 350 modules).
 */
// ClientPG is untyped: knex ships no types for its dialect classes.
let loaded: { knex: (typeof import('knex'))['knex']; pg: typeof import('pg'); ClientPG: any } | undefined;

export function drivers(): NonNullable<typeof loaded> {
  if (!loaded) {
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
    const pg = require('pg') as typeof import('pg');
    const { knex } = require('knex') as typeof import('knex');
    // knex's Postgres client, for a class of our own over it (kept-statements.ts).
    const ClientPG = require('knex/lib/dialects/postgres');
    /* eslint-enable @typescript-eslint/no-require-imports */
    // int8 ids are JS numbers everywhere (ids stay far below 2^53); pg would hand them back as strings.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    loaded = { knex, pg, ClientPG };
  }
  return loaded;
}
