import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig, LOCK_DIR, PLATFORM_VERSION, readRestoreMarkerFile, RESTORE_MARKER_FILE, type RestoreMarker } from '@platform/service-kit';
import { appSchemasOn } from '../app-schemas';
import { databaseEnv, lockEmbedded, withDatabase, type Databases } from '../database';
import { CliError, EXIT, type CliIo } from '../io';
import type { Key } from './archive';
import { MIGRATION_TABLES, tablesOf } from './database-rows';
import { fetchArchive } from './destination';
import { keyOf } from './keys';
import { openObjectStore, type ObjectStore } from './objects';
import type { Target } from './restore-archive';
import {
  markerWhere,
  newMarker,
  readMarker,
  removeMarkerFile,
  removeMarkerRow,
  syncDir,
  unfinishedError,
  withClient,
  writeMarkerFile,
  writeMarkerRow,
} from './unfinished';

export interface RestoreOptions {
  passphraseFile?: string;
  passphraseStdin?: boolean;
  identity?: string[];
  force?: boolean;
  /** Restore again over what an interrupted restore left (a marked target); on an unmarked target as without it. */
  resume?: boolean;
  /** The target becomes an installation of its own (new id and namespace on NATS) instead of the archive's. */
  newInstallation?: boolean;
}

/**
 * `restore <file>`: into an empty DATA_DIR or database (a non-empty one only with --force, which replaces it),
 * then every app's migrations forward, so an archive of an older version comes back on this one. `file` may be
 * `s3://bucket/key`, or `s3://bucket/prefix/` for the newest archive there.
 *
 * It completes or leaves a target that says it is unfinished (unfinished.ts). Its first write is the marker (synced,
 * committed), after only the read-only checks of the target: this module loads no app and reads no archive before
 * it, so a restore killed at any moment leaves the target untouched or marked. Nothing starts on a marked target but
 * `restore --resume` (or `--force`), and the marker is removed last. The embedded database is restored (and
 * migrated) into a sibling directory `<DATA_DIR>.restoring` and moved into DATA_DIR at the end, so a failure leaves
 * DATA_DIR as it was, and a new DATA_DIR not at all.
 */
export async function restore(file: string, opts: RestoreOptions, io: CliIo): Promise<number> {
  const key = await keyOf(opts, io);
  const { DATABASE_URL, DATA_DIR } = loadConfig(databaseEnv, io.env);
  const remote = /^[a-z0-9]+:\/\//i.test(file);
  const archive = remote ? file : path.resolve(file);
  if (!remote && !fs.existsSync(archive)) throw new CliError(`${archive} does not exist`, 66);
  const run = { file, archive, key, opts, io };
  if (DATABASE_URL) await restorePostgres(run, { DATABASE_URL, DATA_DIR });
  else await restoreEmbedded(run, path.resolve(DATA_DIR));
  io.err(`restored ${archive}: start the platform\n`);
  return EXIT.ok;
}

interface Run {
  /** The archive as given: a file, or an s3:// address to download. */
  file: string;
  /** The archive as the marker and the messages name it (a file's absolute path). */
  archive: string;
  key: Key;
  opts: RestoreOptions;
  io: CliIo;
}

/** A marked target is refused unless the restore is to go over it (--resume, or --force which replaces anything). */
function refuseMarked(marker: RestoreMarker | undefined, where: string, opts: RestoreOptions): void {
  if (marker && !opts.resume && !opts.force) throw unfinishedError(where, marker);
}

/** Says the target is marked; `found` is the marker of the interrupted restore this one goes over. */
function saidMarked(io: CliIo, where: string, found: RestoreMarker | undefined): void {
  if (found) io.err(`going over the unfinished restore of ${found.archive} (started ${found.started})\n`);
  io.err(`marked ${where} as an unfinished restore: nothing starts on it until this restore completes\n`);
}

/** After the mark: the archive as a file here (one in a bucket downloaded, first of all), removed after `fn`. */
async function withArchive<T>(run: Run, fn: (source: string) => Promise<T>): Promise<T> {
  const fetched = await fetchArchive(run.file, run.io.env, run.io.err);
  try {
    return await fn(fetched.file);
  } finally {
    fetched.release();
  }
}

/** The archive read into the target by restore-archive.ts, the module that loads every app's code. */
async function fill(
  run: Run,
  source: string,
  into: { dbs: Databases; store: ObjectStore; target: Target; touched: () => void },
): Promise<void> {
  const { restoreArchive } = await import('./restore-archive');
  await restoreArchive(source, run.key, { ...into, newInstallation: run.opts.newInstallation }, run.io);
}

/** Every app's pending migrations, as the platform would apply them on start: forward to this version. */
async function migrateForward(io: CliIo, env: NodeJS.ProcessEnv): Promise<void> {
  io.err(`migrating to ${PLATFORM_VERSION}\n`);
  const { migrate } = await import('../migrate-command');
  await migrate({ ...io, env, out: (s) => io.err(`  ${s}`) });
}

/** Postgres: the marker row first (committed), the restore, the row removed, then the migrations forward. */
async function restorePostgres(run: Run, target: { DATABASE_URL: string; DATA_DIR: string }): Promise<void> {
  const { io, opts } = run;
  const where = markerWhere(target);
  await withDatabase(io.env, { create: true, unfinishedRestore: 'allow' }, async (dbs) => {
    const marker = await readMarker(target);
    refuseMarked(marker, where, opts);
    const store = openObjectStore(io.env, target.DATA_DIR);
    try {
      const hadData =
        !marker && (await refuseNonEmpty({ where: dbs.where, filled: await filledSchemasOnServer(target.DATABASE_URL) }, store, opts.force === true));
      await writeMarkerRow(target.DATABASE_URL, newMarker(run.archive));
      saidMarked(io, where, marker);
      let lost = false;
      try {
        await withArchive(run, (source) => fill(run, source, { dbs, store, target, touched: () => (lost = hadData) }));
      } catch (err) {
        // A marker found stays, and so does one whose target's data is gone (given up with --force).
        if (!marker && !lost) await removeMarkerRow(target.DATABASE_URL);
        throw err;
      }
    } finally {
      store.close();
    }
  });
  await removeMarkerRow(target.DATABASE_URL);
  await migrateForward(io, io.env);
}

/** What a DATA_DIR holds of its own besides the lock, the marker and the staging directory. */
function contentsOf(dataDir: string): string[] {
  try {
    return fs.readdirSync(dataDir).filter((n) => n !== LOCK_DIR && n !== RESTORE_MARKER_FILE && !n.startsWith(`${RESTORE_MARKER_FILE}.`));
  } catch {
    return [];
  }
}

/**
 * The embedded database: the marker file in DATA_DIR first (synced), everything restored and migrated in
 * `<DATA_DIR>.restoring`, moved into DATA_DIR, the staging directory removed, the marker removed last. On a failure
 * before the move DATA_DIR is as it was (a new one is removed: nothing stays).
 */
async function restoreEmbedded(run: Run, dataDir: string): Promise<void> {
  const { io, opts } = run;
  const existed = fs.existsSync(dataDir);
  const lock = lockEmbedded(dataDir);
  const staging = `${dataDir}.restoring`;
  const where = markerWhere({ DATA_DIR: dataDir });
  try {
    // Refused here (a marked target without --resume, a target in use, one not empty): nothing of it is touched.
    const marker = readRestoreMarkerFile(dataDir);
    refuseMarked(marker, where, opts);
    const fresh = contentsOf(dataDir).length === 0;
    const hadData = !marker && (await embeddedHasData(dataDir, io, opts.force === true));
    writeMarkerFile(dataDir, newMarker(run.archive));
    saidMarked(io, where, marker);

    // What DATA_DIR held is gone: the switch into it began, or a shared bucket's objects were deleted (not staged).
    let lost = false;
    try {
      const env = { ...io.env, DATA_DIR: staging };
      const sharedStore = Boolean(io.env.OBJECT_STORAGE_URL);
      await withArchive(run, async (source) => {
        fs.rmSync(staging, { recursive: true, force: true });
        fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
        await withDatabase(env, { create: true, unfinishedRestore: 'allow', migrated: true }, async (dbs) => {
          const into = openObjectStore(env, staging);
          try {
            await fill(run, source, { dbs, store: into, target: { DATA_DIR: staging }, touched: () => (lost = sharedStore && hadData) });
          } finally {
            into.close();
          }
          // Forward while the staging database is still open: the apps' migrations use this process's embedded
          // database as it is, instead of starting the engine on it again (most of a second).
          await migrateForward(io, env);
        });
      });

      // The switch: each of the staging directory's entries replaces DATA_DIR's of that name.
      lost = lost || !fresh;
      const entries = fs.readdirSync(staging).filter((n) => n !== LOCK_DIR);
      if (!sharedStore && !entries.includes('objects')) entries.push('objects');
      for (const name of entries) {
        fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
        if (fs.existsSync(path.join(staging, name))) fs.renameSync(path.join(staging, name), path.join(dataDir, name));
      }
      syncDir(dataDir);
      fs.rmSync(staging, { recursive: true, force: true });
    } catch (err) {
      fs.rmSync(staging, { recursive: true, force: true });
      // A marker found stays (only a restore that completes removes it), and so does one whose target's data is gone.
      if (!marker && !lost && fresh) {
        // A new DATA_DIR: nothing of the failed restore stays (not the lock, not the marker, not an empty database).
        lock.release();
        if (existed) for (const name of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
        else fs.rmSync(dataDir, { recursive: true, force: true });
      } else if (!marker && !lost) {
        removeMarkerFile(dataDir);
      }
      throw err;
    }
    removeMarkerFile(dataDir);
  } finally {
    lock.release();
  }
}

/** Refuses a DATA_DIR that holds data (unless --force); answers whether it does. Opens its database if it has one. */
async function embeddedHasData(dataDir: string, io: CliIo, force: boolean): Promise<boolean> {
  const store = openObjectStore(io.env, dataDir);
  try {
    if (!fs.existsSync(path.join(dataDir, 'postgres'))) return await refuseNonEmpty(undefined, store, force);
    return await withDatabase({ ...io.env, DATA_DIR: dataDir }, { create: false, unfinishedRestore: 'allow' }, async (dbs) => {
      const schemas = appSchemasOn(true);
      const db = await dbs.open(schemas[0]);
      const filled: string[] = [];
      for (const schema of schemas) if ((await tablesOf(db.knex, schema)).length > 0) filled.push(schema);
      return refuseNonEmpty({ where: dbs.where, filled }, store, force);
    });
  } finally {
    store.close();
  }
}

/** The app schemas of a Postgres database that hold tables (beyond migrations' bookkeeping): read only. */
async function filledSchemasOnServer(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ schema: string }>(
      `select distinct table_schema as schema from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema = any($1) and not (table_name = any($2)) order by 1`,
      [appSchemasOn(false), MIGRATION_TABLES],
    );
    return rows.map((r) => r.schema);
  });
}

/**
 * Refuses a target that holds data, naming what, unless --force (which then replaces it); answers whether it holds
 * any. `database` undefined: there is no database yet.
 */
async function refuseNonEmpty(database: { where: string; filled: string[] } | undefined, store: ObjectStore, force: boolean): Promise<boolean> {
  const found: string[] = [];
  if (database && database.filled.length > 0) found.push(`${database.where} has tables in schema ${database.filled.join(', ')}`);
  if (!(await store.isEmpty())) found.push(`objects in ${store.where}`);
  if (found.length === 0) return false;
  if (!force) {
    throw new CliError(
      `the target is not empty (${found.join(', ')}): restore into an empty DATA_DIR or database, or add --force to replace what is there`,
    );
  }
  return true;
}
