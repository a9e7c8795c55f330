import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import {
  readRestoreMarkerFile,
  RESTORE_MARKER_FILE,
  RESTORE_MARKER_SCHEMA,
  RESTORE_MARKER_TABLE,
  unfinishedRestoreLine,
  type RestoreMarker,
} from '@platform/service-kit';
import { CliError, EXIT } from '../io';

/**
 * The marker a restore writes first and removes last (docs/backup.md): the file DATA_DIR/RESTORE-UNFINISHED.json
 * on the embedded database, the row of platform_restore.unfinished on Postgres. Every command of the CLI but the
 * restore itself, and every app at start, refuse a marked target (exit 78), naming the interrupted restore and
 * `restore <archive> --resume`.
 */

const TABLE = `${RESTORE_MARKER_SCHEMA}.${RESTORE_MARKER_TABLE}`;

/** The marker this process writes for `archive`. */
export function newMarker(archive: string): RestoreMarker {
  return { archive, started: new Date().toISOString(), host: os.hostname(), pid: process.pid };
}

/** The CLI's refusal of a marked target: one line, exit 78, as an app's start. */
export function unfinishedError(where: string, marker: RestoreMarker): CliError {
  return new CliError(unfinishedRestoreLine(where, marker), EXIT.config);
}

/** Where a marker is, for messages. */
export const markerWhere = (target: { DATABASE_URL?: string; DATA_DIR: string }) =>
  target.DATABASE_URL ? 'the database of DATABASE_URL' : `DATA_DIR ${path.resolve(target.DATA_DIR)}`;

/** The marker of the configured target, if any (Postgres: one connection of its own). */
export async function readMarker(target: { DATABASE_URL?: string; DATA_DIR: string }): Promise<RestoreMarker | undefined> {
  if (!target.DATABASE_URL) return readRestoreMarkerFile(target.DATA_DIR);
  return withClient(target.DATABASE_URL, async (client) => {
    const { rows } = await client.query<{ t: string | null }>('select to_regclass($1)::text as t', [TABLE]);
    if (!rows[0]?.t) return undefined;
    const found = await client.query<{ marker: string }>(`select marker from ${TABLE} limit 1`);
    return found.rows[0] ? (JSON.parse(found.rows[0].marker) as RestoreMarker) : undefined;
  });
}

/** Refuses (exit 78) a target an interrupted restore left: what every command but `restore` does first. */
export async function refuseUnfinished(target: { DATABASE_URL?: string; DATA_DIR: string }): Promise<void> {
  const marker = await readMarker(target);
  if (marker) throw unfinishedError(markerWhere(target), marker);
}

/** Writes the marker file into `dataDir`, synced (the file and the directory) before anything else is written. */
export function writeMarkerFile(dataDir: string, marker: RestoreMarker): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, RESTORE_MARKER_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(marker)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDir(dataDir);
}

/** Removes the marker file, synced: the last step of a restore. */
export function removeMarkerFile(dataDir: string): void {
  fs.rmSync(path.join(dataDir, RESTORE_MARKER_FILE), { force: true });
  syncDir(dataDir);
}

/** Writes the marker row (committed before anything else is written), replacing an older one. */
export async function writeMarkerRow(url: string, marker: RestoreMarker): Promise<void> {
  await withClient(url, async (client) => {
    await client.query('begin');
    await client.query(`create schema if not exists ${RESTORE_MARKER_SCHEMA}`);
    await client.query(`create table if not exists ${TABLE} (marker text not null)`);
    await client.query(`delete from ${TABLE}`);
    await client.query(`insert into ${TABLE} (marker) values ($1)`, [JSON.stringify(marker)]);
    await client.query('commit');
  });
}

/** Removes the marker (and its schema): the last step of a restore. */
export async function removeMarkerRow(url: string): Promise<void> {
  await withClient(url, (client) => client.query(`drop schema if exists ${RESTORE_MARKER_SCHEMA} cascade`));
}

/** fsync of a directory, so a rename or removal in it is on disk. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Not every file system lets a directory be synced; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** `fn` on a connection of its own to `url` (no pool, nothing loaded beyond `pg`), closed after. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
