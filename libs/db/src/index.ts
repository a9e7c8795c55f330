export {
  hasEmbeddedDatabase,
  openDatabase,
  type Database,
  type MigrateOptions,
  type OpenDatabaseOptions,
  type RollbackOptions,
} from './database';
export { isUniqueViolation } from './errors';
export { preparedRows } from './prepared';
export { KEPT_STATEMENTS, openPGliteWorker, type PGliteLike, type PGliteWorker, type PGliteWorkerOptions } from './pglite-worker';
export { StaticMigrationSource, type Migration } from './migration';
export { keptMigratedDatabase, migratedDatabaseCache, type SchemaMigrations } from './migrated-database';
export { unixSeconds } from './time';
export { announcingBackgroundWrites, writesDuring } from './writes-during';
export { statementWrite, statementWrites } from './statement-write';
export { LeaseQueue, backoffMs, type Backoff, type HeldRow, type LeaseQueueOptions } from './lease-queue';
export {
  Outbox,
  outboxMigration,
  type EffectHandler,
  type EffectContext,
  type AppliedAs,
  type StageEffect,
  type OutboxOptions,
  type RunOptions,
  StatementColumn,
  type EffectInStatement,
  type EntryInStatement,
} from './outbox';
export { pageOf, pageOfList, pageOfQuery, type Page, type PageLimits, type PageRequest, type Paged, type WholeListLimits } from './paging';
