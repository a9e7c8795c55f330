import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { newInstallation, PLATFORM_VERSION, readInstallation, replaceInstallation, type Installation } from '@platform/service-kit';
import { APPS } from '../apps';
import type { Databases } from '../database';
import { CliError, EXIT, type CliIo } from '../io';
import { readArchive, type ArchiveEntry, type Key } from './archive';
import { emptyTables, loadRows, restoreSequences } from './database-rows';
import { BACKUP_FORMAT, type Manifest, type Summary } from './manifest';
import { decodeObject, type ObjectStore } from './objects';
import { findPgTool, pgEnv, runPgTool } from './pg-tools';

/**
 * What a restore does once its target is marked (restore-command.ts): the archive read into the database, the
 * object store and the files under DATA_DIR. It loads every app's code (their migrations), which is why the command
 * marks the target before it loads this module.
 */

/**
 * Reads the archive at `source` into `dbs` and `store`: all of it, or on a failure nothing of it (what it wrote is
 * removed, then the failure thrown). `touched` is called as it drops what the target held (an empty one, or --force).
 * `newInstallation`: the target becomes an installation of its own (a copy beside the original) instead of the archive's.
 */
export async function restoreArchive(
  source: string,
  key: Key,
  into: { dbs: Databases; store: ObjectStore; target: Target; touched: () => void; newInstallation?: boolean },
  io: CliIo,
): Promise<void> {
  const apps = APPS.filter((a) => a.database && !(a.database.serverOnly && into.dbs.embedded));
  const restoring = new Restore(into.dbs, apps, into.store, into.target, into.touched, into.newInstallation === true, io);
  try {
    await readArchive(source, key, (entry) => restoring.entry(entry));
    await restoring.finish();
  } catch (err) {
    await restoring.undo();
    throw err;
  }
}

/** Where the archive goes: the database's server (for pg_restore) and the directory its files are written under. */
export interface Target {
  DATABASE_URL?: string;
  DATA_DIR: string;
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
  private touchedDatabase = false;
  private objectsPut: string[] = [];
  private filesWritten: string[] = [];
  private rows = 0;
  private objects = 0;
  /** The installation the target kept before this restore replaced it (none: it kept none). */
  private replacedInstallation?: { before: Installation | undefined };

  constructor(
    private readonly dbs: Databases,
    private readonly apps: typeof APPS,
    private readonly store: ObjectStore,
    private readonly target: Target,
    private readonly touched: () => void,
    private readonly freshInstallation: boolean,
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
    // Replace what is there (the command let it through only with --force).
    this.touchedDatabase = true;
    this.touched();
    const first = await this.dbs.open(this.apps[0].database!.schema);
    const asArchived = await this.schemasAsArchived(first.knex, manifest);
    for (const { database } of this.apps) {
      if (!asArchived.has(database!.schema)) await first.knex.raw('drop schema if exists ?? cascade', [database!.schema]);
    }
    for (const key of await this.store.keys()) await this.store.storage.delete(key);
    if (manifest.database.format === 'rows') {
      for (const schema of this.schemas) {
        if (asArchived.has(schema)) continue;
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

  /**
   * The schemas of a new embedded database (the restore's staging one, which starts as a copy of the migrated one:
   * restore-command.ts) that already have exactly the migrations the archive's have, in order: kept as they are (their
   * tables are emptied next) rather than dropped and migrated again, which is most of a small restore's time. None on
   * Postgres, whose target may hold what --force replaces.
   */
  private async schemasAsArchived(knex: Knex, manifest: Manifest): Promise<Set<string>> {
    const kept = new Set<string>();
    if (!this.dbs.embedded || manifest.database.format !== 'rows') return kept;
    for (const schema of this.schemas) {
      const archived = manifest.database.schemas[schema].migrations;
      const applied: string[] = await knex
        .withSchema(schema)
        .table('knex_migrations')
        .orderBy('id')
        .pluck('name')
        .catch(() => []);
      if (applied.length > 0 && applied.length === archived.length && applied.every((name, i) => name === archived[i])) kept.add(schema);
    }
    return kept;
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
    await this.writeInstallation();
    this.writeFiles();
    this.io.err(`objects: ${this.objects}; files under DATA_DIR: ${this.files.size}\n`);
  }

  /**
   * The archive's installation, so the restored platform keeps its namespace on NATS and its enrolled clusters are
   * heard; with --new-installation a new one, so a copy beside the original never takes the original's messages.
   */
  private async writeInstallation(): Promise<void> {
    const installation = this.freshInstallation ? newInstallation() : this.manifest!.installation;
    if (!installation) {
      this.io.err('installation: none in the archive (made before archives kept it): the platform keeps or makes its own at start\n');
      return;
    }
    const { knex } = await this.dbs.open(this.apps[0].database!.schema);
    this.replacedInstallation = { before: await readInstallation(knex) };
    await replaceInstallation(knex, installation);
    this.io.err(
      `installation ${installation.id}: namespace ${installation.busNamespace} on NATS (${this.freshInstallation ? 'a new one' : "the archive's"})\n`,
    );
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
    if (this.replacedInstallation) {
      const { knex } = await this.dbs.open(this.apps[0].database!.schema);
      await replaceInstallation(knex, this.replacedInstallation.before).catch(() => undefined);
    }
    for (const key of this.objectsPut) await this.store.storage.delete(key).catch(() => undefined);
    for (const file of this.filesWritten) fs.rmSync(file, { force: true });
  }
}
