import { ConfigError } from '@platform/service-kit';
import { startPlatform } from './platform';

/** `npm start`: the whole platform in one process, embedded defaults, stopped cleanly by Ctrl-C. */
async function main(): Promise<void> {
  const progress = (msg: string) => process.stderr.write(`[platform] ${msg}\n`);
  const started = Date.now();
  const platform = await startPlatform(process.env, progress);
  progress(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  process.stdout.write(`\nPlatform is up at ${platform.url}  (API: ${platform.url}api/v1/version)\n\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    progress(`${signal}: stopping`);
    platform.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  if (err instanceof ConfigError) process.stderr.write(`platform: ${err.message}\n`);
  else console.error(err);
  process.exit(err instanceof ConfigError ? 78 : 1);
});
