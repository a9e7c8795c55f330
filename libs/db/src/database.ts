import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { observeKnex, observeResultCache } from './db-metrics';
import { knexLog } from './knex-log';
import { StaticMigrationSource, type Migration } from './migration';
import { drivers } from './drivers';
import { keptStatementsClient } from './kept-statements';
import { freshDatabaseCache, openPGliteWorker, type PGliteWorker } from './pglite-worker';

/** A service's view of Postgres: its own schema, migrated, behind knex. */
export interface Database {
  readonly knex: Knex;
  readonly schema: string;
  /**
   * The embedded PGlite under DATA_DIR, which one process at a time holds (its DATA_DIR lock): whatever another
   * process left in it, that process is gone.
   */
  readonly embedded: boolean;
  /**
   * The embedded database did not exist before this process opened it: it was made now (as a copy of a migrated one
   * when the opener named one, so what its migrations did is new here too). Always false on Postgres.
   */
  readonly created: boolean;
  /** A query builder on one of this service's tables (always schema-qualified). */
  table<T extends object = any>(name: string, trx?: Knex.Transaction): Knex.QueryBuilder<T>;
  /** One of this service's tables by its quoted, schema-qualified name, for raw SQL: `"orgs_teams"."accounts"`. */
  sqlName(table: string): string;
  /** Runs fn in one transaction: it all commits or nothing does. */
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * Applies pending migrations oldest first, up to and including `to` (default: all), in one transaction (all of
   * them or none), and answers their names; the second argument may also be just the progress callback.
   */
  migrate(migrations: Migration[], opts?: MigrateOptions | ((msg: string) => void)): Promise<string[]>;
  /** Rolls applied migrations back one at a time, newest first, down to just after `to` (default: all), and answers their names. */
  rollback(migrations: Migration[], opts?: RollbackOptions): Promise<string[]>;
  close(): Promise<void>;
}

export interface MigrateOptions {
  /** The last migration to apply; later ones stay pending. */
  to?: string;
  /** Told about each migration before it runs. */
  onProgress?: (msg: string) => void;
}

export interface RollbackOptions {
  /** The newest migration to keep; everything applied after it is rolled back. */
  to?: string;
  /** Told about each migration before it is rolled back. */
  onProgress?: (msg: string) => void;
}

/** Where `name` is in `migrations`; a name that is not there is a mistake in the caller. */
function positionOf(migrations: Migration[], name: string): number {
  const i = migrations.findIndex((m) => m.name === name);
  if (i < 0) throw new Error(`no migration named ${name}`);
  return i;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent, the embedded PGlite under dataDir is used. */
  url?: string;
  dataDir: string;
  schema: string;
  /** Pool size for a real server. */
  poolMax?: number;
  /**
   * Embedded only: how many read answers to keep until the next write (result-cache.ts); default none. The
   * first opener of a data directory decides, as all apps of a process share its database.
   */
  resultCacheEntries?: number;
  /**
   * Embedded only: a database with every schema migrated (keptMigratedDatabase) to copy when the data directory holds
   * none yet, instead of a fresh one. The first opener of a data directory decides.
   */
  migratedDatabase?: string;
}

// The embedded engine is one process-wide PGlite per data directory, shared by every service of the process
// through one knex. PGlite has a single connection; the worker gives knex a pool of sessions over it and keeps
// each transaction's statements from interleaving with the others' (pglite-worker.ts).
const embedded = new Map<string, { knex: Knex; worker: PGliteWorker; users: number; created: boolean; unobserve(): void }>();

/** Whether DATA_DIR holds an embedded database: PGlite's folder has PG_VERSION once a database was made in it. */
export function hasEmbeddedDatabase(dataDir: string): boolean {
  return fs.existsSync(path.resolve(dataDir, 'postgres', 'PG_VERSION'));
}

/** knex's pool over the embedded database: enough for the worker to always have the next statement at hand. */
const EMBEDDED_SESSIONS = 8;

// Answers larger than this (about 1 MB of text) are not kept: a month's usage view can be tens of megabytes.
const MAX_KEPT_ANSWER = 1_000_000;

function openEmbedded(
  dataDir: string,
  resultCacheEntries = 0,
  migratedDatabase?: string,
): { knex: Knex; worker: PGliteWorker; created: boolean } {
  const dir = path.resolve(dataDir, 'postgres');
  const existing = embedded.get(dir);
  if (existing) {
    existing.users += 1;
    return existing;
  }
  const created = !hasEmbeddedDatabase(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  // Loaded lazily: production images talking to a real server never pay for the WASM engine. PGlite itself
  // runs in a worker thread, off the request thread (pglite-worker.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ClientPGLite = require('knex-pglite');
  const worker = openPGliteWorker(dir, {
    resultCache: { entries: resultCacheEntries, maxAnswerSize: MAX_KEPT_ANSWER },
    freshDatabase: freshDatabaseCache(),
    migratedDatabase,
  });
  const knex = drivers().knex({
    client: overWorker(countingDeletes(ClientPGLite), worker),
    dialect: 'postgres',
    connection: { pglite: worker },
  } as Knex.Config);
  observeKnex(knex, 'embedded');
  const unobserve = observeResultCache(worker.resultCache, 'embedded');
  embedded.set(dir, { knex, worker, users: 1, created, unobserve });
  return { knex, worker, created };
}

/**
 * knex-pglite takes PGlite's one connection as the pool's only one; over the worker, each connection knex opens
 * is a session of its own (pglite-worker.ts), and closing one ends only that session, not the database.
 */
function overWorker(ClientPGLite: any, worker: PGliteWorker): any {
  return class extends ClientPGLite {
    getPoolSettings(poolConfig: object) {
      return super.getPoolSettings({ ...poolConfig, min: 1, max: EMBEDDED_SESSIONS });
    }
    async _acquireOnlyConnection() {
      await worker.waitReady;
      return worker.session();
    }
  };
}

/**
 * knex-pglite names a delete's result after knex's method `del` ("DEL"), so knex's Postgres dialect, which
 * answers a row count only for "DELETE", answers the raw result instead and `.delete()` never reads as 0:
 * code that tells "nothing to delete" (404, 409) by the count would pass silently on the embedded database.
 */
function countingDeletes(ClientPGLite: any): any {
  return class extends ClientPGLite {
    processResponse(obj: { method?: string }, runner: unknown) {
      return super.processResponse(obj.method === 'del' ? { ...obj, method: 'delete' } : obj, runner);
    }
  };
}

async function releaseEmbedded(knex: Knex): Promise<void> {
  for (const [dir, entry] of embedded) {
    if (entry.knex !== knex) continue;
    entry.users -= 1;
    if (entry.users === 0) {
      embedded.delete(dir);
      entry.unobserve();
      await knex.destroy();
      await entry.worker.close();
    }
    return;
  }
}

/** Opens (and creates) the service's schema on the configured Postgres or the embedded default. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (!/^[a-z][a-z0-9_]*$/.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
  const isEmbedded = !opts.url;
  const opened = isEmbedded ? openEmbedded(opts.dataDir, opts.resultCacheEntries, opts.migratedDatabase) : undefined;
  const knex = opened
    ? opened.knex
    : drivers().knex({
        client: keptStatementsClient(drivers().ClientPG),
        dialect: 'postgres',
        connection: opts.url,
        pool: { min: 0, max: opts.poolMax ?? 10 },
        acquireConnectionTimeout: 10_000,
        log: knexLog,
      });
  if (!isEmbedded) observeKnex(knex, opts.schema);
  try {
    // A first start creates the embedded database, which takes seconds, and many more on a busy machine: wait for it
    // here, so that knex's acquire timeout bounds only the wait for a session, never the database's creation.
    await opened?.worker.waitReady;
    await knex.raw('create schema if not exists ??', [opts.schema]);
  } catch (err) {
    if (isEmbedded) await releaseEmbedded(knex);
    else await knex.destroy();
    throw err;
  }
  const schema = opts.schema;
  const migratorConfig = (migrations: Migration[]): Knex.MigratorConfig => ({
    migrationSource: new StaticMigrationSource(migrations, schema),
    schemaName: schema,
    tableName: 'knex_migrations',
  });
  // knex also checks that every applied migration is still in the list.
  const appliedNames = async (config: Knex.MigratorConfig): Promise<Set<string>> => {
    const [completed] = (await knex.migrate.list(config)) as [{ name: string }[], unknown];
    return new Set(completed.map((m) => m.name));
  };
  return {
    knex,
    schema,
    embedded: isEmbedded,
    created: opened?.created ?? false,
    table(name, trx) {
      return (trx ?? knex).withSchema(schema).table(name);
    },
    sqlName(table) {
      // The schema was checked above; a table name comes from the code, never from a caller, and is checked the same way.
      if (!/^[a-z][a-z0-9_]*$/.test(table)) throw new Error(`invalid table name ${table}`);
      return `"${schema}"."${table}"`;
    },
    transaction(fn) {
      return knex.transaction(fn);
    },
    async migrate(migrations, opts) {
      const { to, onProgress } = typeof opts === 'function' ? { to: undefined, onProgress: opts } : (opts ?? {});
      const last = to === undefined ? migrations.length - 1 : positionOf(migrations, to);
      const config = migratorConfig(migrations);
      const applied = await appliedNames(config);
      const pending = migrations.slice(0, last + 1).filter((m) => !applied.has(m.name));
      if (pending.length === 0) return [];
      // One run of knex's migrator for the whole batch: its bookkeeping (the tables' existence through
      // information_schema, the lock, the list of applied ones) once, not once per migration, which was most of a
      // first start's statements. knex runs a batch in one transaction. Each migration still says when it starts.
      const told = pending.map((m, i) => ({
        ...m,
        up: (k: Knex, s: string) => (onProgress?.(`applying migration ${i + 1}/${pending.length}: ${schema}.${m.name}`), m.up(k, s)),
      }));
      // The list was checked against what is applied just above; later migrations than `to` stay out of this one.
      await knex.migrate.latest({
        ...config,
        migrationSource: new StaticMigrationSource(told, schema),
        disableMigrationsListValidation: true,
      });
      return pending.map((m) => m.name);
    },
    async rollback(migrations, { to, onProgress } = {}) {
      const kept = to === undefined ? -1 : positionOf(migrations, to);
      const config = migratorConfig(migrations);
      const applied = await appliedNames(config);
      const undone = migrations
        .slice(kept + 1)
        .filter((m) => applied.has(m.name))
        .reverse();
      for (const [i, m] of undone.entries()) {
        onProgress?.(`rolling back migration ${i + 1}/${undone.length}: ${schema}.${m.name}`);
        await knex.migrate.down({ ...config, name: m.name });
      }
      return undone.map((m) => m.name);
    },
    async close() {
      if (isEmbedded) await releaseEmbedded(knex);
      else await knex.destroy();
    },
  };
}
