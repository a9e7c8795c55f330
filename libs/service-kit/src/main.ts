import type { Migration } from '@platform/db';
import { keepServingOnBusFailures } from './bus-readiness';
import { loadConfig, type ConfigOf, type EnvShape } from './config';
import { lockDataDir } from './data-dir-lock';
import { createLogger } from './logger';
import { startWithOperations } from './operations';
import { stopOnSignal, type RunningService } from './service';
import { describeStartError } from './start-errors';

/** An app as its main.ts, the launcher and the tests see it: its settings and how to start it. */
export interface AppDefinition<S extends EnvShape = EnvShape> {
  name: string;
  /** Environment variables it reads, with their validation. */
  env: S;
  /**
   * The schema it keeps its data in and the migrations that make it, as its start opens them: the launcher and the
   * admin CLI read every app's here. `serverOnly`: only on a Postgres server, never on the embedded database.
   */
  database?: AppDatabase;
  start(config: ConfigOf<S>): Promise<RunningService>;
}

/** An app's schema and its migrations. */
export interface AppDatabase {
  schema: string;
  migrations: Migration[];
  serverOnly?: boolean;
}

/** The databases of `apps` that the embedded database holds (every one but those only on a Postgres server). */
export function embeddedDatabases(apps: readonly { database?: AppDatabase }[]): AppDatabase[] {
  return apps.flatMap(({ database }) => (database && !database.serverOnly ? [database] : []));
}

/** Defines an app (keeps env and start's config type in step). */
export function defineApp<S extends EnvShape>(app: AppDefinition<S>): AppDefinition<S> {
  return app;
}

/** Validates `env` for the app and starts it (see `startConfigured`). */
export function startApp<S extends EnvShape>(app: AppDefinition<S>, env: NodeJS.ProcessEnv): Promise<RunningService> {
  return startConfigured(app, loadConfig(app.env, env));
}

/**
 * Starts the app. On the embedded database (no DATABASE_URL) it first takes the lock on DATA_DIR, before
 * anything under it is opened, and gives it back when the app stops; a DATA_DIR that another process holds
 * stops the start with `DataDirInUseError`, a `ConfigError`.
 */
async function startConfigured<S extends EnvShape>(app: AppDefinition<S>, config: ConfigOf<S>): Promise<RunningService> {
  const { DATABASE_URL, DATA_DIR } = config as { DATABASE_URL?: string; DATA_DIR?: string };
  const lock = !DATABASE_URL && DATA_DIR !== undefined ? lockDataDir(DATA_DIR) : undefined;
  let running: RunningService;
  try {
    running = await app.start(config);
  } catch (err) {
    lock?.release();
    throw err;
  }
  return {
    ...running,
    async stop() {
      await running.stop();
      lock?.release();
    },
  };
}

/**
 * Entry point of every app's main.ts: reads config, serves metrics on METRICS_PORT, starts the app, and
 * stops it gracefully on SIGTERM/SIGINT. What stops a start is one line on stderr, without a stack, and the
 * exit code of start-errors.ts: 78 for a bad or incomplete setting, a port in use or a DATA_DIR held by
 * another process (naming it), 69 for a dependency that cannot be used (NATS_URL, DATABASE_URL). Any other
 * start failure is a fault of ours: logged with its stack, exit code 1.
 * With RUN_MIGRATIONS_ONLY=true it applies the app's migrations and exits with code 0 instead of serving (the
 * chart's migration Job runs every app so: `entrypoint.sh migrate`).
 */
export function runMain<S extends EnvShape>(app: AppDefinition<S>): void {
  const log = createLogger(app.name);
  keepServingOnBusFailures(log);
  const failed = (err: unknown): never => {
    const known = describeStartError(err);
    if (known) {
      process.stderr.write(`${app.name}: ${known.line}\n`);
      process.exit(known.exitCode);
    }
    log.fatal({ err }, 'start failed');
    process.exit(1);
  };
  let config: ConfigOf<S>;
  try {
    config = loadConfig(app.env);
  } catch (err) {
    return failed(err);
  }
  // A migration run serves nothing, metrics included.
  const { METRICS_PORT, RUN_MIGRATIONS_ONLY } = config as { METRICS_PORT?: number; RUN_MIGRATIONS_ONLY?: boolean };
  startWithOperations(() => startConfigured(app, config), { METRICS_PORT: RUN_MIGRATIONS_ONLY ? undefined : METRICS_PORT }, log).then(
    async (running) => {
      if (!running.migrationsOnly) return stopOnSignal(running.stop, log, running.drain);
      await running.stop(); // gives back the DATA_DIR lock of the embedded database
      process.exit(0);
    },
    failed,
  );
}
