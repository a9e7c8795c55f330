import { connectBus } from '@platform/bus';
import { runSimulator } from './cli';

/** Entry point of `npm run simulate -- <flags>` (through simulate.mjs). */
runSimulator(process.argv.slice(2), {
  env: process.env,
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  connect: (url, namespace) => connectBus(url, 'simulator', { namespace }),
  untilStopped: () =>
    new Promise((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }),
}).then((code) => {
  process.exitCode = code;
  // A NATS connection or timer that lingers must not hold the process.
  setTimeout(() => process.exit(code), 2_000).unref();
});
