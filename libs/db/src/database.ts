import * as fs from 'node:fs';
import * as path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { StaticMigrationSource, type Migration } from './migration';

// int8 ids are JS numbers everywhere (ids stay far below 2^53); pg would hand them back as strings.
pg.types.setTypeParser(20, (v: string) => Number(v));

/** A service's view of Postgres: its own schema, migrated, behind knex. */
export interface Database {
  readonly knex: Knex;
  readonly schema: string;
  /** A query builder on one of this service's tables (always schema-qualified). */
  table<T extends object = any>(name: string, trx?: Knex.Transaction): Knex.QueryBuilder<T>;
  /** Runs fn in one transaction: it all commits or nothing does. */
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** Applies pending migrations; logs each through onProgress. */
  migrate(migrations: Migration[], onProgress?: (msg: string) => void): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent, the embedded PGlite under dataDir is used. */
  url?: string;
  dataDir: string;
  schema: string;
  /** Pool size for a real server. */
  poolMax?: number;
}

// The embedded engine is one process-wide PGlite per data directory. PGlite has a single connection, so
// every service in the process shares one knex (pool of 1) and its queries queue instead of interleaving
// inside each other's transactions.
const embedded = new Map<string, { knex: Knex; users: number }>();

function openEmbedded(dataDir: string): Knex {
  const dir = path.resolve(dataDir, 'postgres');
  const existing = embedded.get(dir);
  if (existing) {
    existing.users += 1;
    return existing.knex;
  }
  fs.mkdirSync(dir, { recursive: true });
  // Loaded lazily: production images talking to a real server never pay for the WASM engine.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ClientPGLite = require('knex-pglite');
  const knex = knexFactory({ client: ClientPGLite, dialect: 'postgres', connection: { connectionString: dir } } as Knex.Config);
  embedded.set(dir, { knex, users: 1 });
  return knex;
}

async function releaseEmbedded(knex: Knex): Promise<void> {
  for (const [dir, entry] of embedded) {
    if (entry.knex !== knex) continue;
    entry.users -= 1;
    if (entry.users === 0) {
      embedded.delete(dir);
      await knex.destroy();
    }
    return;
  }
}

/** Opens (and creates) the service's schema on the configured Postgres or the embedded default. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (!/^[a-z][a-z0-9_]*$/.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
  const isEmbedded = !opts.url;
  const knex = isEmbedded
    ? openEmbedded(opts.dataDir)
    : knexFactory({
        client: 'pg',
        connection: opts.url,
        pool: { min: 0, max: opts.poolMax ?? 10 },
        acquireConnectionTimeout: 10_000,
      });
  try {
    await knex.raw('create schema if not exists ??', [opts.schema]);
  } catch (err) {
    if (isEmbedded) await releaseEmbedded(knex);
    else await knex.destroy();
    throw err;
  }
  const schema = opts.schema;
  return {
    knex,
    schema,
    table(name, trx) {
      return (trx ?? knex).withSchema(schema).table(name);
    },
    transaction(fn) {
      return knex.transaction(fn);
    },
    async migrate(migrations, onProgress) {
      const config: Knex.MigratorConfig = {
        migrationSource: new StaticMigrationSource(migrations, schema),
        schemaName: schema,
        tableName: 'knex_migrations',
      };
      const pending = (await knex.migrate.list(config))[1] as Migration[];
      // One at a time, so a person watching start-up sees which migration is running.
      for (const [i, m] of pending.entries()) {
        onProgress?.(`applying migration ${i + 1}/${pending.length}: ${schema}.${m.name}`);
        await knex.migrate.up(config);
      }
      return pending.map((m) => m.name);
    },
    async close() {
      if (isEmbedded) await releaseEmbedded(knex);
      else await knex.destroy();
    },
  };
}
