import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { migratedDatabaseCache } from '@platform/db';
import { embeddedDatabases } from '@platform/service-kit';
import { APPS } from '../src/apps';
import { cli } from './helpers';

/** What a migrated embedded database is made of: every app's migrations and the PGlite build (the kept one's key). */
function templateHash(): string {
  const schemas = embeddedDatabases(APPS);
  return path.basename(migratedDatabaseCache(schemas)!).replace('platform-pglite-migrated-', '');
}

let made: string | undefined;

/**
 * A DATA_DIR whose embedded database has every schema migrated, made once per migration set by `migrate` (PGlite's
 * initdb and every migration: seconds, where copying it takes well under one) and kept in the temporary directory
 * for the files that need a migrated DATA_DIR to work on, not one that proves migrating (cli-embedded.e2e.test.ts does).
 * Files in parallel workers may build it at the same time: each builds in a directory of its own and renames it
 * into place, so a half-built one is never found.
 */
async function template(): Promise<string> {
  if (made) return made;
  const dir = path.join(os.tmpdir(), `platform-cli-migrated-datadir-${templateHash()}`);
  if (!fs.existsSync(dir)) {
    const building = fs.mkdtempSync(`${dir}.building-`);
    try {
      const run = await cli(['migrate'], { DATA_DIR: building, LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none' });
      if (run.code !== 0) throw new Error(`migrate for the DATA_DIR template failed: ${run.err}`);
      try {
        fs.renameSync(building, dir);
      } catch (err) {
        // Another worker's build got there first: use that one.
        if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
      }
    } finally {
      fs.rmSync(building, { recursive: true, force: true });
    }
  }
  made = dir;
  return dir;
}

/**
 * Fills the empty directory `dataDir` with a copy of the migrated template: a DATA_DIR as `migrate` leaves it (its
 * database only; the lock records of the build are not copied).
 */
export async function migratedDataDir(dataDir: string): Promise<void> {
  const from = await template();
  fs.cpSync(from, dataDir, { recursive: true, filter: (src) => path.relative(from, src) !== 'lock' });
}
