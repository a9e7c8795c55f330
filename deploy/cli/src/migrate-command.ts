import { ConfigError, DependencyError, startApp } from '@platform/service-kit';
import type { Database } from '@platform/db';
import { APPS } from './apps';
import { pendingMigrations, requireMigrated, withDatabase } from './database';
import { CliError, EXIT, type CliIo } from './io';

/**
 * `migrate`: every app's pending migrations, applied the way the chart's migration Job applies them (each app
 * started with RUN_MIGRATIONS_ONLY=true: its own configuration, schema and migration list, then stopped), one
 * app after the other; then exits. One line per schema on stdout, and only that one (stderr says where, once, and
 * what failed); applying again changes nothing. On the embedded database the platform must be stopped (the CLI
 * holds the DATA_DIR lock meanwhile).
 */
export async function migrate(io: CliIo): Promise<number> {
  await withDatabase(io.env, { create: true, migrated: true }, async (dbs) => {
    io.err(`migrating ${dbs.where}\n`);
    for (const { app, database } of APPS) {
      if (!database || (database.serverOnly && dbs.embedded)) continue;
      const db: Database = await dbs.open(database.schema);
      // A new embedded database comes with every migration applied (a copy of the migrated one): all are new here.
      const pending = db.created ? database.migrations.length : await pendingMigrations(db, database.migrations);
      try {
        // The app's log would go to stdout as JSON; what happened is said below instead.
        const running = await startApp(app, { ...io.env, RUN_MIGRATIONS_ONLY: 'true', GRPC_PORT: '0', LOG_LEVEL: 'silent' });
        await running.stop();
      } catch (err) {
        if (err instanceof ConfigError || err instanceof CliError || err instanceof DependencyError) throw err;
        throw new CliError(`${app.name}: the migrations of schema ${database.schema} failed: ${(err as Error).message.split('\n')[0]}`);
      }
      await requireMigrated(db, database.migrations);
      io.out(
        `${database.schema}: ${pending ? `applied ${pending}` : 'up to date'} (${database.migrations.length} migrations, app ${app.name})\n`,
      );
    }
  });
  return EXIT.ok;
}
