import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openDatabase, type Database } from './database';
import type { Migration } from './migration';
import { freshDatabaseCache } from './pglite-worker';

/** A schema and the migrations that make it, as an app owns them. */
export interface SchemaMigrations {
  schema: string;
  migrations: Migration[];
}

/**
 * Where this user's embedded database with `schemas` migrated is kept, beside the fresh one (freshDatabaseCache) and
 * keyed like it by PGlite's version and user, and by what the migrations are: every schema's name and each migration's
 * name and code (its functions' text). Undefined where the fresh one is not kept.
 */
export function migratedDatabaseCache(schemas: SchemaMigrations[]): string | undefined {
  const fresh = freshDatabaseCache();
  if (!fresh) return undefined;
  const hash = createHash('sha256');
  for (const { schema, migrations } of schemas) {
    hash.update(`${schema}\0`);
    for (const m of migrations) hash.update(`${m.name}\0${m.up.toString()}\0${m.down.toString()}\0`);
  }
  return fresh.replace('platform-pglite-fresh-', `platform-pglite-migrated-${hash.digest('hex').slice(0, 16)}-`);
}

/**
 * The embedded database with every one of `schemas` migrated, kept to copy into an empty data directory
 * (`openDatabase`'s `migratedDatabase`): a new database then costs a copy instead of every migration. Made here the
 * first time, from a copy of the fresh one, in a directory of its own that is renamed into place once closed, so a
 * half-made one is never found and two processes making it at once each use whichever was renamed first. Undefined
 * when it cannot be kept (no user ids here, or making it failed): the caller's new database is made as before. Whether
 * one found there may be trusted is the worker's to check when it copies it (pglite-worker.ts).
 */
export async function keptMigratedDatabase(schemas: SchemaMigrations[]): Promise<string | undefined> {
  const kept = migratedDatabaseCache(schemas);
  if (!kept) return undefined;
  if (fs.existsSync(kept)) return kept;
  let making: string;
  try {
    making = fs.mkdtempSync(`${kept}.making-`);
  } catch {
    return undefined; // a temporary directory we cannot write to
  }
  try {
    // Only this user may write to it, or the worker would refuse to copy it.
    fs.mkdirSync(path.join(making, 'postgres'), { mode: 0o700 });
    const opened: Database[] = [];
    try {
      for (const { schema, migrations } of schemas) {
        const db = await openDatabase({ dataDir: making, schema });
        opened.push(db);
        await db.migrate(migrations);
      }
    } finally {
      for (const db of opened) await db.close();
    }
    fs.renameSync(path.join(making, 'postgres'), kept);
  } catch {
    // Another process renamed its own into place first (then that one is used), or it could not be made.
  } finally {
    fs.rmSync(making, { recursive: true, force: true });
  }
  return fs.existsSync(kept) ? kept : undefined;
}
