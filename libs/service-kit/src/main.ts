import { ConfigError, loadConfig, type ConfigOf, type EnvShape } from './config';
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

/** Validates `env` for the app and starts it. */
export function startApp<S extends EnvShape>(app: AppDefinition<S>, env: NodeJS.ProcessEnv): Promise<RunningService> {
  return app.start(loadConfig(app.env, env));
}

/**
 * Entry point of every app's main.ts: reads config (a bad value stops the process with exit code 78 and
 * the variable named), starts the app, and stops it gracefully on SIGTERM/SIGINT.
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
  app.start(config).then(
    (running) => stopOnSignal(running.stop, log),
    (err) => {
      log.fatal({ err }, 'start failed');
      process.exit(1);
    },
  );
}
