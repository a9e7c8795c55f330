import { ConfigError } from './config';
import { createLogger } from './logger';
import { stopOnSignal, type RunningService } from './service';

/**
 * Entry point shared by every app's main.ts: builds config (a bad value stops the process with the
 * variable named), starts the app, and stops it gracefully on SIGTERM/SIGINT.
 */
export function runMain<C>(name: string, loadConfig: () => C, start: (config: C) => Promise<RunningService>): void {
  const log = createLogger(name);
  let config: C;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  start(config).then(
    (running) => stopOnSignal(running.stop, log),
    (err) => {
      log.fatal({ err }, 'start failed');
      process.exit(1);
    },
  );
}
