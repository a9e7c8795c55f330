import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import {
  loadConfig,
  LOCK_DIR,
  PLATFORM_VERSION,
  readRestoreMarkerFile,
  RESTORE_MARKER_FILE,
  type RestoreMarker,
} from '@platform/service-kit';
import { APPS } from '../apps';
import { databaseEnv, lockEmbedded, withDatabase, type Databases } from '../database';
import { CliError, EXIT, type CliIo } from '../io';
import { migrate } from '../migrate-command';
import { readArchive, type ArchiveEntry, type Key } from './archive';
import { fetchArchive } from './destination';
import { emptyTables, loadRows, restoreSequences, tablesOf } from './database-rows';
import { keyOf } from './keys';
import { BACKUP_FORMAT, type Manifest, type Summary } from './manifest';
import { decodeObject, openObjectStore, type ObjectStore } from './objects';
import { findPgTool, pgEnv, runPgTool } from './pg-tools';
import {
  markerWhere,
  newMarker,
  readMarker,
  removeMarkerFile,
  removeMarkerRow,
  syncDir,
  unfinishedError,
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
}

/**
 * `restore <file>`: into an empty DATA_DIR or database (a non-empty one only with --force, which replaces it),
 * then every app's migrations forward, so an archive of an older version comes back on this one. `file` may be
 * `s3://bucket/key`, or `s3://bucket/prefix/` for the newest archive there.
 *
 * It completes or leaves a target that says it is unfinished (unfinished.ts): a marker is written (synced,
 * committed) before anything else and removed last, and nothing starts on a marked target but `restore --resume`
 * (or `--force`). The embedded database is restored (and migrated) into a sibling directory `<DATA_DIR>.restoring`
 * and moved into DATA_DIR at the end, so a failure leaves DATA_DIR as it was, and a new DATA_DIR not at all.
 */
export async function restore(file: string, opts: RestoreOptions, io: CliIo): Promise<number> {
  const key = await keyOf(opts, io);
  const { DATABASE_URL, DATA_DIR } = loadConfig(databaseEnv, io.env);
  const archive = /^[a-z0-9]+:\/\//i.test(file) ? file : path.resolve(file);
  const fetched = await fetchArchive(file, io.env, io.err);
  try {
    if (!fs.existsSync(fetched.file)) throw new CliError(`${fetched.file} does not exist`, 66);
    const run = { source: fetched.file, archive, key, opts, io };
    if (DATABASE_URL) await restorePostgres(run, { DATABASE_URL, DATA_DIR });
    else await restoreEmbedded(run, path.resolve(DATA_DIR));
  } finally {
    fetched.release();
  }
  io.err(`restored ${fetched.file}: start the platform\n`);
  return EXIT.ok;
}

interface Run {
  /** The archive's file here. */
  source: string;
  /** The archive as the operator named it (in the marker and the messages). */
  archive: string;
  key: Key;
  opts: RestoreOptions;
  io: CliIo;
}

const appsOn = (dbs: Databases) => APPS.filter((a) => a.database && !(a.database.serverOnly && dbs.embedded));

/** A marked target is refused unless the restore is to go over it (--resume, or --force which replaces anything). */
function refuseMarked(marker: RestoreMarker | undefined, where: string, opts: RestoreOptions): void {
  if (marker && !opts.resume && !opts.force) throw unfinishedError(where, marker);
}

/** Postgres: the marker row first (committed), the restore, the row removed, then the migrations forward. */
async function restorePostgres(run: Run, target: { DATABASE_URL: string; DATA_DIR: string }): Promise<void> {
  const { io, opts } = run;
  await withDatabase(io.env, { create: true, unfinishedRestore: 'allow' }, async (dbs) => {
    const marker = await readMarker(target);
    refuseMarked(marker, markerWhere(target), opts);
    if (marker) io.err(`going over the unfinished restore of ${marker.archive} (started ${marker.started})\n`);
    const apps = appsOn(dbs);
    const store = openObjectStore(io.env, target.DATA_DIR);
    try {
      const hadData = marker !== undefined || (await refuseNonEmpty(dbs, apps.map((a) => a.database!.schema), store, opts.force === true));
      await writeMarkerRow(target.DATABASE_URL, newMarker(run.archive));
      const restoring = new Restore(dbs, apps, store, { ...target, force: opts.force === true }, io);
      try {
        await readArchive(run.source, run.key, (entry) => restoring.entry(entry));
        await restoring.finish();
      } catch (err) {
        await restoring.undo();
        // The target stays marked when what it held is gone (an unfinished restore's, or given up with --force).
        if (!(hadData && restoring.touchedDatabase)) await removeMarkerRow(target.DATABASE_URL);
        throw err;
      }
    } finally {
      store.close();
    }
  });
  await removeMarkerRow(target.DATABASE_URL);
  // Forward to this version: each app's pending migrations, as the platform would apply them on start.
  io.err(`migrating to ${PLATFORM_VERSION}\n`);
  await migrate({ ...io, out: (s) => io.err(`  ${s}`) });
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
  let fresh = false;
  let keepMarker = false;
  let moving = false;
  // Refused before it began (a marked target without --resume, a target in use): nothing of the target is touched.
  let begun = false;
  try {
    const marker = readRestoreMarkerFile(dataDir);
    refuseMarked(marker, where, opts);
    begun = true;
    if (marker) io.err(`going over the unfinished restore of ${marker.archive} (started ${marker.started})\n`);
    fresh = contentsOf(dataDir).length === 0;
    const store = openObjectStore(io.env, dataDir);
    const sharedStore = Boolean(io.env.OBJECT_STORAGE_URL);
    let hadData = false;
    try {
      if (!marker) {
        const schemas = APPS.filter((a) => a.database && !a.database.serverOnly).map((a) => a.database!.schema);
        hadData = fs.existsSync(path.join(dataDir, 'postgres'))
          ? await withDatabase({ ...io.env, DATA_DIR: dataDir }, { create: false, unfinishedRestore: 'allow' }, (dbs) =>
              refuseNonEmpty(dbs, schemas, store, opts.force === true),
            )
          : await refuseNonEmpty(undefined, schemas, store, opts.force === true);
      }
    } finally {
      store.close();
    }
    keepMarker = marker !== undefined && !fresh;
    writeMarkerFile(dataDir, newMarker(run.archive));

    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
    const env = { ...io.env, DATA_DIR: staging };
    await withDatabase(env, { create: true, unfinishedRestore: 'allow' }, async (dbs) => {
      const apps = appsOn(dbs);
      const into = openObjectStore(env, staging);
      const restoring = new Restore(dbs, apps, into, { DATA_DIR: staging, force: true }, io);
      try {
        await readArchive(run.source, run.key, (entry) => restoring.entry(entry));
        await restoring.finish();
      } catch (err) {
        // Objects in a bucket are not staged: the bucket's old ones are gone once the restore began.
        if (sharedStore && hadData && restoring.touchedDatabase) keepMarker = true;
        await restoring.undo();
        throw err;
      } finally {
        into.close();
      }
    });
    io.err(`migrating to ${PLATFORM_VERSION}\n`);
    await migrate({ ...io, env, out: (s) => io.err(`  ${s}`) });

    // The switch: each of the staging directory's entries replaces DATA_DIR's of that name.
    moving = true;
    const entries = fs.readdirSync(staging).filter((n) => n !== LOCK_DIR);
    if (!sharedStore && !entries.includes('objects')) entries.push('objects');
    for (const name of entries) {
      fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
      if (fs.existsSync(path.join(staging, name))) fs.renameSync(path.join(staging, name), path.join(dataDir, name));
    }
    syncDir(dataDir);
    fs.rmSync(staging, { recursive: true, force: true });
    removeMarkerFile(dataDir);
  } catch (err) {
    if (!begun) throw err;
    fs.rmSync(staging, { recursive: true, force: true });
    if (fresh) {
      // A new DATA_DIR: nothing of the failed restore stays (not the lock, not the marker, not an empty database).
      lock.release();
      if (existed) for (const name of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
      else fs.rmSync(dataDir, { recursive: true, force: true });
    } else if (!moving && !keepMarker) {
      removeMarkerFile(dataDir);
    }
    throw err;
  } finally {
    lock.release();
  }
}

/**
 * Refuses a target that holds data, naming what, unless --force (which then replaces it); answers whether it holds
 * any. `dbs` undefined: there is no database yet.
 */
async function refuseNonEmpty(dbs: Databases | undefined, schemas: string[], store: ObjectStore, force: boolean): Promise<boolean> {
  const found: string[] = [];
  if (dbs) {
    const db = await dbs.open(schemas[0]);
    const filled: string[] = [];
    for (const schema of schemas) if ((await tablesOf(db.knex, schema)).length > 0) filled.push(schema);
    if (filled.length > 0) found.push(`${dbs.where} has tables in schema ${filled.join(', ')}`);
  }
  if (!(await store.isEmpty())) found.push(`objects in ${store.where}`);
  if (found.length === 0) return false;
  if (!force) {
    throw new CliError(
      `the target is not empty (${found.join(', ')}): restore into an empty DATA_DIR or database, or add --force to replace what is there`,
    );
  }
  return true;
}

interface Target {
  DATABASE_URL?: string;
  DATA_DIR: string;
  force: boolean;
}

/** One restore as the archive's entries arrive: manifest, keys, database, objects, summary. */
class Restore {
  private manifest?: Manifest;
  private summary?: Summary;
  private settings: Record<string, string> = {};
  private files = new Map<string, Buffer>();
  private trx?: Knex.Transaction;
  private knex?: Knex;
  private schemas: string[] = [];
  touchedDatabase = false;
  private objectsPut: string[] = [];
  private filesWritten: string[] = [];
  private rows = 0;
  private objects = 0;

  constructor(
    private readonly dbs: Databases,
    private readonly apps: typeof APPS,
    private readonly store: ObjectStore,
    private readonly target: Target,
    private readonly io: CliIo,
  ) {}

  async entry(entry: ArchiveEntry): Promise<void> {
    const { name } = entry;
    if (!this.manifest) {
      if (name !== 'manifest.json') throw new CliError('the archive is not a platform backup (no manifest first)', 65);
      await this.begin(JSON.parse((await entry.read()).toString('utf8')) as Manifest);
    } else if (name === 'keys/settings.json') {
      this.settings = JSON.parse((await entry.read()).toString('utf8'));
    } else if (name.startsWith('datadir/')) {
      this.files.set(name.slice('datadir/'.length), await entry.read());
    } else if (name === 'database/postgres.dump') {
      await this.pgRestore(entry);
    } else if (name.startsWith('database/')) {
      await this.rowsEntry(name, entry);
    } else if (name.startsWith('objects/')) {
      await this.openDatabaseDone();
      const { contentType, body } = decodeObject(await entry.read());
      const key = name.slice('objects/'.length);
      await this.store.storage.put(key, body, contentType);
      this.objectsPut.push(key);
      if (++this.objects % 100 === 0) this.io.err(`objects: ${this.objects}\n`);
    } else if (name === 'summary.json') {
      this.summary = JSON.parse((await entry.read()).toString('utf8')) as Summary;
    }
  }

  private async begin(manifest: Manifest): Promise<void> {
    if (manifest.format !== BACKUP_FORMAT) throw new CliError(`the archive's format ${manifest.format} is not ${BACKUP_FORMAT}`, 65);
    this.manifest = manifest;
    this.io.err(
      `archive of ${manifest.platformVersion} made ${manifest.createdAt} on ${manifest.host} (${manifest.database.engine}, ${manifest.database.format})\n`,
    );
    if (manifest.database.format === 'pg_dump' && this.dbs.embedded) {
      throw new CliError('this archive holds a pg_dump of a Postgres database: restore it with DATABASE_URL set to an empty database');
    }
    // Every migration the archive's schemas had must be one this version knows; else it is from a newer version.
    for (const [schema, { migrations }] of Object.entries(manifest.database.schemas)) {
      const app = this.apps.find((a) => a.database!.schema === schema);
      if (!app) continue; // the gateway's on the embedded database: its failed sign-ins are not kept there
      const known = new Set(app.database!.migrations.map((m) => m.name));
      const unknown = migrations.filter((m) => !known.has(m));
      if (unknown.length > 0) {
        throw new CliError(
          `the archive comes from a newer version (${manifest.platformVersion}; schema ${schema} has ${unknown[0]}, which ${PLATFORM_VERSION} does not know): restore it with that version or a later one`,
        );
      }
      this.schemas.push(schema);
    }
    // Replace what is there (refuseNonEmpty let it through only with --force).
    this.touchedDatabase = true;
    const first = await this.dbs.open(this.apps[0].database!.schema);
    for (const { database } of this.apps) await first.knex.raw('drop schema if exists ?? cascade', [database!.schema]);
    for (const key of await this.store.keys()) await this.store.storage.delete(key);
    if (manifest.database.format === 'rows') {
      for (const schema of this.schemas) {
        const app = this.apps.find((a) => a.database!.schema === schema)!;
        const db = await this.dbs.open(schema);
        await db.knex.raw('create schema if not exists ??', [schema]);
        const last = manifest.database.schemas[schema].migrations.at(-1);
        if (last) await db.migrate(app.database!.migrations, { to: last });
      }
      this.knex = first.knex;
      this.trx = await first.knex.transaction();
      try {
        // Triggers and foreign keys stay quiet while rows go in as they were (the tuple-change log included).
        await this.trx.raw('set local session_replication_role = replica');
      } catch (err) {
        throw new CliError(
          `restoring rows needs permission to set session_replication_role (${(err as Error).message.split('\n')[0]}): ` +
            'use a superuser, or GRANT SET ON PARAMETER session_replication_role to this user, or restore a pg_dump archive',
          EXIT.failed,
        );
      }
      for (const schema of this.schemas) await emptyTables(this.trx, schema);
    }
  }

  private async rowsEntry(name: string, entry: ArchiveEntry): Promise<void> {
    const [, schema, table, chunk] = name.split('/');
    if (!this.schemas.includes(schema)) return;
    if (table === 'sequences.json') {
      await restoreSequences(this.trx!, schema, (await entry.read()).toString('utf8'));
      return;
    }
    if (!chunk) return;
    const rows = await loadRows(this.trx!, schema, table, (await entry.read()).toString('utf8'));
    this.rows += rows;
  }

  private async pgRestore(entry: ArchiveEntry): Promise<void> {
    const tool = findPgTool('pg_restore', this.io.env);
    if (!tool)
      throw new CliError(
        'this archive holds a pg_dump: pg_restore is not on the PATH; install postgresql-client or set PG_RESTORE_PATH',
        69,
      );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-restore-'));
    try {
      const dump = path.join(tmp, 'postgres.dump');
      await entry.toFile(dump);
      this.io.err('database: pg_restore\n');
      await runPgTool(
        tool,
        ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${this.pgDatabase()}`, dump],
        pgEnv(this.target.DATABASE_URL!, this.io.env),
      );
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  private pgDatabase(): string {
    return pgEnv(this.target.DATABASE_URL!, this.io.env).PGDATABASE!;
  }

  private async openDatabaseDone(): Promise<void> {
    if (!this.trx) return;
    await this.trx.commit();
    this.trx = undefined;
    this.io.err(`database: ${this.schemas.length} schemas, ${this.rows} rows\n`);
  }

  async finish(): Promise<void> {
    if (!this.manifest) throw new CliError('the archive is empty', 65);
    if (!this.summary) throw new CliError('the archive is cut short: it ends before its summary', 65);
    if (this.manifest.database.format === 'rows' && this.summary.rows !== undefined) {
      const expected = Object.entries(this.summary.tables)
        .filter(([schema]) => this.schemas.includes(schema))
        .reduce((n, [, t]) => n + t.reduce((m, c) => m + c.rows, 0), 0);
      if (expected !== this.rows) throw new CliError(`the archive is incomplete: ${this.rows} rows read, ${expected} listed`, 65);
    }
    if (this.summary.objects !== this.objects)
      throw new CliError(`the archive is incomplete: ${this.objects} objects read, ${this.summary.objects} listed`, 65);
    this.checkSealingKey();
    await this.openDatabaseDone();
    this.writeFiles();
    this.io.err(`objects: ${this.objects}; files under DATA_DIR: ${this.files.size}\n`);
  }

  /**
   * The archive's secrets (the license CA's private key, organization tokens) are sealed with its
   * SECRETS_ENCRYPTION_KEY or key file: a target configured with another key could not open them.
   */
  private checkSealingKey(): void {
    const archived = this.settings.SECRETS_ENCRYPTION_KEY ?? this.files.get('secrets/encryption.key')?.toString('utf8').trim();
    const configured = this.io.env.SECRETS_ENCRYPTION_KEY;
    if (archived && configured && archived !== configured) {
      throw new CliError(
        "SECRETS_ENCRYPTION_KEY is not the key this archive's secrets (the license CA key, organization tokens) are sealed with: " +
          "set it to the archive's (`backup-info <file> --show-keys` prints it), or unset it to restore the key file under DATA_DIR",
      );
    }
  }

  private writeFiles(): void {
    const files = new Map(this.files);
    // Settings the target does not have become the key files the apps read when they are unset.
    if (this.settings.SECRETS_ENCRYPTION_KEY && !this.io.env.SECRETS_ENCRYPTION_KEY) {
      files.set('secrets/encryption.key', Buffer.from(`${this.settings.SECRETS_ENCRYPTION_KEY}\n`));
    }
    if (this.settings.OBJECT_STORAGE_SIGNING_KEY && !this.io.env.OBJECT_STORAGE_SIGNING_KEY) {
      files.set('object-storage/signing-key', Buffer.from(`${this.settings.OBJECT_STORAGE_SIGNING_KEY}\n`));
    }
    for (const [rel, body] of files) {
      const file = path.join(this.target.DATA_DIR, ...rel.split('/').filter((s) => s && s !== '..'));
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(file, body, { mode: 0o600 });
      this.filesWritten.push(file);
    }
    if (this.settings.LICENSE_CA_CERT && !this.io.env.LICENSE_CA_CERT) {
      this.io.err(
        'note: the archive was made with an imported license CA (LICENSE_CA_CERT, LICENSE_CA_KEY): set both again before starting (`backup-info <file> --show-keys`)\n',
      );
    }
  }

  /** After a failure: nothing of the archive stays (the target was empty, or --force gave it up). */
  async undo(): Promise<void> {
    await this.trx?.rollback().catch(() => undefined);
    this.trx = undefined;
    if (this.touchedDatabase && this.knex === undefined) this.knex = (await this.dbs.open(this.apps[0].database!.schema)).knex;
    if (this.touchedDatabase) {
      for (const { database } of this.apps)
        await this.knex!.raw('drop schema if exists ?? cascade', [database!.schema]).catch(() => undefined);
    }
    for (const key of this.objectsPut) await this.store.storage.delete(key).catch(() => undefined);
    for (const file of this.filesWritten) fs.rmSync(file, { force: true });
  }
}
