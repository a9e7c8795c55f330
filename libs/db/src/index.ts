export { openDatabase, type Database, type OpenDatabaseOptions } from './database';
export { StaticMigrationSource, type Migration } from './migration';
