import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database } from '@platform/db';
import { ConfigError } from './config';

/**
 * A restore that did not finish (killed, crashed, the machine gone) leaves its target marked, and nothing starts on
 * a marked target: a start would migrate the empty schemas and make a brand-new platform (a new license CA, no
 * organizations), silently. `cli restore` writes the marker before anything else and removes it last
 * (docs/backup.md): on the embedded database a file in DATA_DIR, written and synced first; on Postgres a row of
 * `platform_restore.unfinished`, committed first.
 */

/** The marker file in DATA_DIR (embedded database). */
export const RESTORE_MARKER_FILE = 'RESTORE-UNFINISHED.json';
/** The schema and table of the marker on Postgres (no app owns it, so the restore's drops of app schemas keep it). */
export const RESTORE_MARKER_SCHEMA = 'platform_restore';
export const RESTORE_MARKER_TABLE = 'unfinished';

/** What a marker says about the restore that wrote it. */
export interface RestoreMarker {
  /** The archive as given to `cli restore` (a file or s3:// address). */
  archive: string;
  /** When it began (ISO 8601). */
  started: string;
  host: string;
  pid: number;
}

/** A start (an app, the launcher or the CLI) on a target an interrupted restore left: exit 78, one line. */
export class UnfinishedRestoreError extends ConfigError {
  constructor(
    readonly where: string,
    readonly marker: RestoreMarker,
  ) {
    const message = unfinishedRestoreLine(where, marker);
    super([message]);
    this.name = 'UnfinishedRestoreError';
    this.message = message;
  }
}

/** The one line naming the interrupted restore and the command that finishes it. */
export function unfinishedRestoreLine(where: string, m: RestoreMarker): string {
  return (
    `${where} holds an unfinished restore: \`restore ${m.archive}\` (started ${m.started}, pid ${m.pid} on ${m.host}) did not ` +
    `finish, so its data is incomplete and nothing may start on it; run \`cli restore ${m.archive} --resume\` (with the same ` +
    `passphrase or identity) to restore it again from the start, or \`cli restore <another archive> --resume\` (docs/backup.md)`
  );
}

/** The marker file of `dataDir`, if any. A file cut short still marks the target. */
export function readRestoreMarkerFile(dataDir: string): RestoreMarker | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, RESTORE_MARKER_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseMarker(text);
}

/** The marker row of a Postgres database, if any. */
export async function readRestoreMarkerRow(db: Pick<Database, 'knex'>): Promise<RestoreMarker | undefined> {
  const table = `${RESTORE_MARKER_SCHEMA}.${RESTORE_MARKER_TABLE}`;
  const { rows } = await db.knex.raw<{ rows: { t: string | null }[] }>('select to_regclass(?)::text as t', [table]);
  if (!rows[0]?.t) return undefined;
  const found = await db.knex.raw<{ rows: { marker: string }[] }>(`select marker from ${table} limit 1`);
  return found.rows[0] ? parseMarker(found.rows[0].marker) : undefined;
}

function parseMarker(text: string): RestoreMarker {
  try {
    const m = JSON.parse(text) as Partial<RestoreMarker>;
    return { archive: m.archive ?? '<the archive>', started: m.started ?? '?', host: m.host ?? '?', pid: m.pid ?? 0 };
  } catch {
    return { archive: '<the archive>', started: '?', host: '?', pid: 0 };
  }
}

/**
 * Refuses to start on a target an interrupted restore left (UnfinishedRestoreError, exit 78). Call with the
 * configuration before the database is opened (the embedded one: the marker file, so a new DATA_DIR gets no empty
 * database), and again with the opened database (Postgres: the marker row).
 */
export async function refuseUnfinishedRestore(config: { DATABASE_URL?: string; DATA_DIR: string }, db?: Pick<Database, 'knex'>): Promise<void> {
  if (!config.DATABASE_URL) {
    const marker = readRestoreMarkerFile(config.DATA_DIR);
    if (marker) throw new UnfinishedRestoreError(`DATA_DIR ${path.resolve(config.DATA_DIR)}`, marker);
    return;
  }
  if (!db) return;
  const marker = await readRestoreMarkerRow(db);
  if (marker) throw new UnfinishedRestoreError(`the database of DATABASE_URL`, marker);
}
