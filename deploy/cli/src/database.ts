import * as fs from 'node:fs';
import * as path from 'node:path';
import pg from 'pg';
import { hasEmbeddedDatabase, keptMigratedDatabase, openDatabase, type Database, type Migration } from '@platform/db';
import { DataDirInUseError, embeddedDatabases, loadConfig, lockDataDir, serviceEnv, type DataDirLock } from '@platform/service-kit';
import { refuseUnfinished } from './backup/unfinished';
import { CliError, EXIT } from './io';

/** Where the data is: the settings the apps read for it. */
export const databaseEnv = { DATABASE_URL: serviceEnv.DATABASE_URL, DATA_DIR: serviceEnv.DATA_DIR };

/** The schemas a command opened, on one database, and how to open more. */
export interface Databases {
  /** A schema of the configured database (opened once, closed with the others). */
  open(schema: string): Promise<Database>;
  /** How the database is named in messages: postgres host:port/db, or the embedded one's directory. */
  where: string;
  embedded: boolean;
}

/**
 * Runs `fn` with the configured database: DATABASE_URL, or the embedded PGlite under DATA_DIR. The embedded
 * one is used by one process at a time, so the CLI takes the same DATA_DIR lock as the platform and refuses
 * (exit 75, naming the running platform's pid) while it is held. Without `create`, a DATA_DIR that has no
 * database yet is an error rather than a new empty database.
 */
export async function withDatabase<T>(
  env: NodeJS.ProcessEnv,
  opts: {
    create: boolean;
    /** Only the restore works on a target an interrupted restore left. */
    unfinishedRestore?: 'allow';
    /**
     * A new embedded database starts as a copy of the one every app's migrations made (keptMigratedDatabase), made
     * the first time: the commands that migrate every schema next. It loads every app's code.
     */
    migrated?: boolean;
  },
  fn: (dbs: Databases) => Promise<T>,
): Promise<T> {
  const { DATABASE_URL, DATA_DIR } = loadConfig(databaseEnv, env);
  const embedded = !DATABASE_URL;
  const where = embedded ? `the embedded database under ${path.resolve(DATA_DIR, 'postgres')}` : `postgres at ${serverOf(DATABASE_URL)}`;
  let lock: DataDirLock | undefined;
  const refuseMarked = () => (opts.unfinishedRestore === 'allow' ? undefined : refuseUnfinished({ DATABASE_URL, DATA_DIR }));
  if (embedded) {
    await refuseMarked();
    if (!opts.create && !fs.existsSync(path.join(DATA_DIR, 'postgres'))) {
      throw new CliError(
        `there is no database under ${path.resolve(DATA_DIR)} (DATA_DIR): start the platform once or run \`migrate\`, or set DATA_DIR or DATABASE_URL to where the data is`,
      );
    }
    lock = lockEmbedded(DATA_DIR);
  } else {
    await probe(DATABASE_URL, where);
    await refuseMarked();
  }
  const opened = new Map<string, Database>();
  try {
    const isNew = embedded && !hasEmbeddedDatabase(DATA_DIR);
    const migratedDatabase = isNew && opts.migrated ? await platformMigratedDatabase() : undefined;
    return await fn({
      where,
      embedded,
      async open(schema) {
        let db = opened.get(schema);
        if (!db) {
          db = await openDatabase({ url: DATABASE_URL, dataDir: DATA_DIR, schema, poolMax: 2, migratedDatabase }).catch((err) => {
            throw databaseError(err, where);
          });
          opened.set(schema, db);
        }
        return db;
      },
    });
  } finally {
    for (const db of opened.values()) await db.close().catch(() => undefined);
    lock?.release();
  }
}

/** The embedded database with every app's schema migrated, kept to start new ones from; undefined when it cannot be. */
async function platformMigratedDatabase(): Promise<string | undefined> {
  // Loaded here, not above: a restore marks its target before any app's code is loaded (restore-command.ts).
  const { APPS } = await import('./apps');
  return keptMigratedDatabase(embeddedDatabases(APPS));
}

/**
 * Connects once before knex does, so an unreachable server or a refused login is one clear line (exit 69)
 * instead of knex's pool retrying and warning with a stack.
 */
async function probe(url: string, where: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw databaseError(err, where);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Takes the DATA_DIR lock, or explains that the platform runs there (exit 75). */
export function lockEmbedded(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    const { pid, started } = err.holder;
    throw new CliError(
      `the embedded database under ${err.dir} (DATA_DIR) is in use by a running platform (pid ${pid}, started ${started}): ` +
        `stop the platform first (pid ${pid})`,
      EXIT.inUse,
    );
  }
}

/** host:port/database of a postgres URL, never its credentials. */
export function serverOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

const DB_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name could not be resolved',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'connection reset',
  '28P01': 'password authentication failed',
  '28000': 'the server refused this user',
  '3D000': 'the database does not exist',
};

/** One line about a database that cannot be used, naming the setting to check (exit 69). */
export function databaseError(err: unknown, where: string): CliError {
  const e = err as { code?: string; errors?: { code?: string }[]; message?: string; name?: string };
  const code = e.code ?? e.errors?.find((x) => x.code)?.code;
  const reason =
    (code && DB_REASONS[code]) ?? (e.name === 'KnexTimeoutError' ? 'no connection within 10 s' : firstLine(e.message ?? String(err)));
  const setting = where.startsWith('postgres') ? 'DATABASE_URL' : 'DATA_DIR';
  return new CliError(`cannot use ${where} (${setting}): ${reason}`, EXIT.unavailable);
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}

/** Names of the migrations applied to a schema; read without creating anything (no knex_migrations yet: none). */
export async function appliedMigrations(db: Database): Promise<Set<string>> {
  const table = await db.knex('information_schema.tables').where({ table_schema: db.schema, table_name: 'knex_migrations' }).first();
  return new Set<string>(table ? await db.table('knex_migrations').pluck('name') : []);
}

/** How many of `migrations` a schema has not applied yet. */
export async function pendingMigrations(db: Database, migrations: Migration[]): Promise<number> {
  const applied = await appliedMigrations(db);
  return migrations.filter((m) => !applied.has(m.name)).length;
}

/**
 * Refuses to work on a schema whose migrations are not all applied (a new install before `migrate`, or an
 * older schema): the commands use the current code's tables.
 */
export async function requireMigrated(db: Database, migrations: Migration[]): Promise<void> {
  const pending = await pendingMigrations(db, migrations);
  if (pending > 0) {
    throw new CliError(
      `the ${db.schema} schema has ${pending} migration(s) not applied yet: run \`migrate\` first (or start the platform once)`,
    );
  }
}
