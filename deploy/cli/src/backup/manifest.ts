import type { Installation } from '@platform/service-kit';
import type { TableCount } from './database-rows';

/** Names the archive layout; a restore refuses another. */
export const BACKUP_FORMAT = 'platform-backup/1';

/** The archive's first entry, `manifest.json`: what made it and what it holds (no secret). */
export interface Manifest {
  format: string;
  platformVersion: string;
  createdAt: string;
  host: string;
  database: {
    engine: 'embedded' | 'postgres';
    /** rows: JSON lines per table (restores into either engine); pg_dump: the custom format (into Postgres). */
    format: 'rows' | 'pg_dump';
    /** Each schema: the app that owns it and its applied migrations, oldest first. */
    schemas: Record<string, { app: string; migrations: string[] }>;
  };
  objects: { from: 'files' | 's3' };
  /** The settings (names only) and the files under DATA_DIR the archive keeps. */
  keys: { settings: string[]; files: string[] };
  /**
   * The installation's id and its namespace on NATS, which its enrolled clusters publish in; absent in an archive of a
   * platform that never started on NATS, or made before archives kept it.
   */
  installation?: Installation;
}

/** The last entry, `summary.json`: what was written, so a restore knows it read all of it. */
export interface Summary {
  schemas: number;
  tables: Record<string, TableCount[]>;
  rows?: number;
  objects: number;
  objectBytes: number;
  files: number;
}
