import { ConfigError } from '@platform/service-kit';
import { startPlatform } from './platform';

/**
 * `npm start`: the whole platform in one process, embedded defaults, stopped cleanly by Ctrl-C (SIGINT),
 * SIGTERM, or when the process that started it is gone (`kill -9` of `npm start`).
 */
async function main(): Promise<void> {
  const progress = (msg: string) => process.stderr.write(`[platform] ${msg}\n`);
  const started = Date.now();
  // Until the platform is up, stopping is exiting at once (as Ctrl-C does then).
  let stop: (why: string) => void = (why) => {
    progress(`${why}: exiting`);
    process.exit(1);
  };
  whenParentGone((parent) => stop(`the process that started it (pid ${parent}) is gone`));
  const platform = await startPlatform(process.env, progress);
  progress(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s (pid ${process.pid})`);
  process.stdout.write(`\nPlatform is up at ${platform.url}  (API: ${platform.url}api/v1/version)\n\n`);
  let stopping = false;
  stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    progress(`${why}: stopping`);
    platform.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Calls `onGone` once this process gets another parent, which happens when its parent dies (it is then
 * re-parented to init or a subreaper). A server left behind by a killed `npm start` would otherwise keep
 * serving, holding DATA_DIR and the port. A process started by init itself has nothing to watch.
 */
function whenParentGone(onGone: (parent: number) => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, 250);
  timer.unref();
}

main().catch((err) => {
  if (err instanceof ConfigError) process.stderr.write(`platform: ${err.message}\n`);
  else console.error(err);
  process.exit(err instanceof ConfigError ? 78 : 1);
});
