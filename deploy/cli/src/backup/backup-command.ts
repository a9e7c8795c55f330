import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { loadConfig, PLATFORM_VERSION, readInstallation } from '@platform/service-kit';
import { APPS } from '../apps';
import { databaseEnv, withDatabase, type Databases } from '../database';
import { CliError, EXIT, type CliIo } from '../io';
import { createArchive, removeStalePartials, type ArchiveWriter } from './archive';
import { applyRetention, archiveName, openDestination, parseS3, type Retention } from './destination';
import { dumpSchemaRows, type TableCount } from './database-rows';
import { KEY_SETTINGS, dataDirFiles, lockOf } from './keys';
import { BACKUP_FORMAT, type Manifest, type Summary } from './manifest';
import { encodeObject, openObjectStore } from './objects';
import { findPgTool, pgEnv, runPgTool } from './pg-tools';

export interface BackupOptions {
  passphraseFile?: string;
  passphraseStdin?: boolean;
  recipient?: string[];
  /** rows (any engine) or pg_dump (DATABASE_URL); default: pg_dump when DATABASE_URL is set and it is installed. */
  format?: string;
  /** A directory or s3://bucket/prefix, the archive named platform-<time>.age there (instead of a file). */
  to?: string;
  /** Retention at `to`, after a backup succeeded: keep the newest N archives ... */
  keep?: string;
  /** ... and none older than this many days. */
  keepDays?: string;
}

const kib = (n: number) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/**
 * `backup <file>`: one encrypted archive of the database (every app schema, one snapshot), the object store and
 * the key material, with a manifest of the version and each schema's migrations. On the embedded database the
 * platform must be stopped (the CLI takes the DATA_DIR lock); with DATABASE_URL it runs beside the platform.
 * `--to` names a directory or bucket instead of a file (the scheduled job's way), with retention there.
 */
export async function backup(file: string | undefined, opts: BackupOptions, io: CliIo): Promise<number> {
  if (opts.to === undefined) {
    if (file === undefined) throw new CliError('name the archive to write, or give --to <directory or s3://bucket/prefix>', 64);
    if (opts.keep !== undefined || opts.keepDays !== undefined) throw new CliError('--keep and --keep-days apply to --to', 64);
    const target = path.resolve(file);
    await removeLeftovers(path.dirname(target), target, io);
    return backupTo(target, opts, io);
  }
  if (file !== undefined) throw new CliError('give either a file or --to, not both', 64);
  const retention: Retention = { keep: count(opts.keep, '--keep'), keepDays: count(opts.keepDays, '--keep-days') };
  const began = new Date();
  const name = archiveName(began);
  const destination = openDestination(opts.to, io.env);
  const s3 = parseS3(opts.to) !== undefined;
  // A bucket's archive is made in a private scratch directory (TMPDIR), then uploaded.
  const scratch = s3 ? fs.mkdtempSync(path.join(os.tmpdir(), 'platform-backup-')) : undefined;
  try {
    if (!s3) await removeLeftovers(destination.where, undefined, io);
    const written = path.join(scratch ?? destination.where, name);
    const code = await backupTo(written, { ...opts, quiet: true }, io);
    const stored = await destination.store(written, name);
    io.err(`stored ${stored}\n`);
    const deleted = await applyRetention(destination, retention, name, began);
    if (deleted.length > 0)
      io.err(`retention: deleted ${deleted.length} older archive(s) from ${destination.where}: ${deleted.join(', ')}\n`);
    io.out(`${stored}\n`);
    return code;
  } finally {
    destination.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A backup killed before it finished left its partial file: the next backup of the same destination (a directory, or
 * the same file name) removes it, saying so.
 */
async function removeLeftovers(dir: string, file: string | undefined, io: CliIo): Promise<void> {
  const stale = await removeStalePartials(dir, file);
  if (stale.length > 0) io.err(`removed ${stale.length} unfinished archive(s) an interrupted backup left in ${dir}: ${stale.join(', ')}\n`);
}

/** A count given on the command line: a whole number of at least 1. */
function count(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value)) throw new CliError(`${option} ${value}: a whole number of at least 1`, 64);
  return Number(value);
}

async function backupTo(target: string, opts: BackupOptions & { quiet?: boolean }, io: CliIo): Promise<number> {
  if (fs.existsSync(target)) throw new CliError(`${target} exists: choose a new file name (a backup never replaces one)`);
  if (!fs.existsSync(path.dirname(target))) throw new CliError(`${path.dirname(target)} does not exist`);
  if (opts.format && !['rows', 'pg_dump'].includes(opts.format)) throw new CliError(`--format ${opts.format}: rows or pg_dump`, 64);
  const lock = await lockOf(opts, io);
  const { DATABASE_URL, DATA_DIR } = loadConfig(databaseEnv, io.env);
  const pgDump = DATABASE_URL && opts.format !== 'rows' ? findPgTool('pg_dump', io.env) : undefined;
  if (opts.format === 'pg_dump' && !DATABASE_URL)
    throw new CliError('--format pg_dump needs DATABASE_URL (the embedded database has no pg_dump)', 64);
  if (opts.format === 'pg_dump' && !pgDump) {
    throw new CliError('--format pg_dump: pg_dump is not on the PATH; install postgresql-client or set PG_DUMP_PATH', EXIT.unavailable);
  }

  await withEmbeddedExplained(() =>
    withDatabase(io.env, { create: false }, async (dbs) => {
      const archive = await createArchive(target, lock);
      try {
        io.err(`backing up ${dbs.where} to ${target}\n`);
        const summary = await writeArchive(archive, dbs, { DATABASE_URL, DATA_DIR, target, pgDump: pgDump ?? undefined }, io);
        await archive.close();
        io.err(
          `done: ${summary.schemas} schemas, ${summary.rows ?? 'pg_dump'} rows, ${summary.objects} objects (${kib(summary.objectBytes)}), ` +
            `${summary.files} key and state files; ${kib(fs.statSync(target).size)} encrypted\n`,
        );
        if (!opts.quiet) io.out(`${target}\n`);
      } catch (err) {
        await archive.abort();
        throw err;
      }
    }),
  );
  return EXIT.ok;
}

/** The CLI's refusal on a running embedded platform, with the reason a backup cannot be taken beside it. */
async function withEmbeddedExplained<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CliError && err.exitCode === EXIT.inUse) {
      throw new CliError(
        `${err.message.replace(/: stop the platform first.*$/, '')}: a backup of the embedded database needs the platform stopped, because ` +
          'only the process that holds it may open it and a copy of its files taken while it writes is not consistent; stop it, ' +
          'run backup, start it again (or run on Postgres, DATABASE_URL, to back up while it serves)',
        EXIT.inUse,
      );
    }
    throw err;
  }
}

interface Where {
  DATABASE_URL?: string;
  DATA_DIR: string;
  target: string;
  pgDump?: { path: string; major: number };
}

async function writeArchive(archive: ArchiveWriter, dbs: Databases, where: Where, io: CliIo): Promise<Summary> {
  const apps = APPS.filter((a) => a.database && !(a.database.serverOnly && dbs.embedded));
  const first = await dbs.open(apps[0].database!.schema);
  const knex = first.knex;
  const existing = new Set<string>(
    (await knex('information_schema.schemata').select('schema_name')).map((r: { schema_name: string }) => r.schema_name),
  );
  const owned = apps.filter((a) => existing.has(a.database!.schema));
  const format = where.pgDump ? 'pg_dump' : 'rows';
  const summary: Summary = {
    schemas: owned.length,
    tables: {},
    rows: format === 'rows' ? 0 : undefined,
    objects: 0,
    objectBytes: 0,
    files: 0,
  };

  const manifestFor = async (q: Knex | Knex.Transaction): Promise<Manifest> => {
    const schemas: Manifest['database']['schemas'] = {};
    for (const { app, database } of owned) {
      const applied = await migrationsOf(q, database!.schema);
      // Applied in the order the app lists them; a name the code does not know yet goes last (a newer version's).
      const known = database!.migrations.map((m) => m.name).filter((n) => applied.has(n));
      const unknown = [...applied].filter((n) => !known.includes(n)).sort();
      schemas[database!.schema] = { app: app.name, migrations: [...known, ...unknown] };
    }
    const settings = KEY_SETTINGS.filter((k) => io.env[k]);
    return {
      format: BACKUP_FORMAT,
      platformVersion: PLATFORM_VERSION,
      createdAt: new Date().toISOString(),
      host: os.hostname(),
      database: { engine: dbs.embedded ? 'embedded' : 'postgres', format, schemas },
      objects: { from: io.env.OBJECT_STORAGE_URL ? 's3' : 'files' },
      keys: { settings, files: dataDirFiles(where.DATA_DIR, where.target) },
      installation: await readInstallation(q),
    };
  };

  const writeKeys = async (manifest: Manifest) => {
    const settings: Record<string, string> = {};
    for (const k of manifest.keys.settings) settings[k] = io.env[k]!;
    await archive.add('keys/settings.json', Buffer.from(JSON.stringify(settings)));
    for (const rel of manifest.keys.files) {
      await archive.add(`datadir/${rel}`, fs.readFileSync(path.join(where.DATA_DIR, rel)));
      summary.files += 1;
    }
    io.err(
      `keys: ${manifest.keys.files.length} file(s) under DATA_DIR${settings ? `, ${manifest.keys.settings.length} setting(s)` : ''}\n`,
    );
  };

  if (format === 'rows') {
    // One snapshot of every schema: what a running platform commits meanwhile is all in the archive or all out.
    await knex.transaction(
      async (trx) => {
        const manifest = await manifestFor(trx);
        await archive.add('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
        await writeKeys(manifest);
        for (const { database } of owned) {
          const schema = database!.schema;
          const counts: TableCount[] = await dumpSchemaRows(trx, schema, archive, () => undefined);
          summary.tables[schema] = counts;
          const rows = counts.reduce((n, c) => n + c.rows, 0);
          summary.rows! += rows;
          io.err(`database: ${schema}: ${counts.length} tables, ${rows} rows (${kib(archive.written())} written)\n`);
        }
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  } else {
    const manifest = await manifestFor(knex);
    await archive.add('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
    await writeKeys(manifest);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-backup-'));
    try {
      const dump = path.join(tmp, 'postgres.dump');
      io.err(`database: pg_dump of ${owned.map((a) => a.database!.schema).join(', ')}\n`);
      await runPgTool(
        where.pgDump!,
        ['--format=custom', '--no-owner', '--no-privileges', `--file=${dump}`, ...owned.map((a) => `--schema=${a.database!.schema}`)],
        pgEnv(where.DATABASE_URL!, io.env),
      );
      await archive.addFile('database/postgres.dump', dump);
      io.err(`database: ${kib(fs.statSync(dump).size)} dumped (${kib(archive.written())} written)\n`);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  // After the database: every object its rows name was stored before the row was committed, so it is here.
  const store = openObjectStore(io.env, where.DATA_DIR);
  try {
    const keys = await store.keys();
    io.err(`objects: ${keys.length} in ${store.where}\n`);
    for (const key of keys) {
      const object = await store.storage.get(key);
      if (!object) continue; // deleted meanwhile
      await archive.add(`objects/${key}`, encodeObject(object.contentType, object.body));
      summary.objects += 1;
      summary.objectBytes += object.body.length;
      if (summary.objects % 100 === 0) io.err(`objects: ${summary.objects}/${keys.length} (${kib(archive.written())} written)\n`);
    }
  } finally {
    store.close();
  }
  await archive.add('summary.json', Buffer.from(JSON.stringify(summary, null, 2)));
  return summary;
}

/** The migrations applied to a schema, read through `q` (inside the snapshot: the embedded engine runs one transaction at a time). */
async function migrationsOf(q: Knex | Knex.Transaction, schema: string): Promise<Set<string>> {
  const table = await q('information_schema.tables').where({ table_schema: schema, table_name: 'knex_migrations' }).first();
  return new Set<string>(table ? await q.withSchema(schema).table('knex_migrations').pluck('name') : []);
}
