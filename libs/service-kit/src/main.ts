import { ConfigError, loadConfig, type ConfigOf, type EnvShape } from './config';
import { lockDataDir } from './data-dir-lock';
import { DependencyError, EXIT_DEPENDENCY_UNAVAILABLE } from './dependency-error';
import { createLogger } from './logger';
import { stopOnSignal, type RunningService } from './service';

/** An app as its main.ts, the launcher and the tests see it: its settings and how to start it. */
export interface AppDefinition<S extends EnvShape = EnvShape> {
  name: string;
  /** Environment variables it reads, with their validation. */
  env: S;
  start(config: ConfigOf<S>): Promise<RunningService>;
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
 * Entry point of every app's main.ts: reads config (a bad value stops the process with exit code 78 and
 * the variable named; so does a DATA_DIR in use by another process, naming it), starts the app, and stops it
 * gracefully on SIGTERM/SIGINT. A dependency that cannot be used at start (NATS) stops it with exit code 69
 * and one line naming its variable, without a stack; any other start failure with exit code 1, logged.
 * With RUN_MIGRATIONS_ONLY=true it applies the app's migrations and exits with code 0 instead of serving (the
 * chart's migration Job runs every app so: `entrypoint.sh migrate`).
 */
export function runMain<S extends EnvShape>(app: AppDefinition<S>): void {
  const log = createLogger(app.name);
  let config: ConfigOf<S>;
  try {
    config = loadConfig(app.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${app.name}: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  startConfigured(app, config).then(
    async (running) => {
      if (!running.migrationsOnly) return stopOnSignal(running.stop, log);
      await running.stop(); // gives back the DATA_DIR lock of the embedded database
      process.exit(0);
    },
    (err) => {
      if (err instanceof ConfigError) {
        // DATA_DIR in use by another process.
        process.stderr.write(`${app.name}: ${err.message}\n`);
        process.exit(78);
      }
      if (err instanceof DependencyError) {
        // NATS that cannot be used: one line naming NATS_URL, no stack.
        process.stderr.write(`${app.name}: ${err.message}\n`);
        process.exit(EXIT_DEPENDENCY_UNAVAILABLE);
      }
      log.fatal({ err }, 'start failed');
      process.exit(1);
    },
  );
}
