import * as net from 'node:net';
import { createLogger, describeStartError, keepServingOnBusFailures, loadConfig, portError, portVar, serviceEnv } from '@platform/service-kit';
import { serveMetrics, stopTracing, type MetricsServer } from '@platform/telemetry';
import { startDemoSeed } from './demo-seed';
import { whenParentGone } from './parent-watch';
import { AppStartError, startPlatform, type LocalPlatform } from './platform';

/**
 * `npm start`: the whole platform in one process, embedded defaults, stopped cleanly by Ctrl-C (SIGINT),
 * SIGTERM, or when the process that started it is gone (`kill -9` of `npm start`).
 */
async function main(): Promise<void> {
  const progress = (msg: string) => process.stderr.write(`[platform] ${msg}\n`);
  const started = Date.now();
  keepServingOnBusFailures(createLogger('platform'));
  // Until the platform is up, stopping is exiting at once, saying why (a signal's default action would
  // kill the process without a word): 130 for Ctrl-C, 143 for SIGTERM, as a shell reports a signal.
  let stop: (why: string) => void = (why) => {
    progress(`${why} during start-up: exiting`);
    process.exit(why === 'SIGINT' ? 130 : why === 'SIGTERM' ? 143 : 1);
  };
  // Nobody is left to wait for a clean stop, and a server answering after its launcher is gone is what must not be:
  // under load the gateway's drain alone took 10 s. So the clean stop gets half a second, then the process ends as a
  // crash would, which the data survives (the outbox completes cut changes, the next start takes over the DATA_DIR
  // lock of a dead process).
  whenParentGone((parent) => stop(`the process that started it (pid ${parent}) is gone`));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A port in use is found before anything is migrated or a password generated, not after.
  const { HTTP_PORT } = loadConfig({ HTTP_PORT: portVar.default(8080) }, process.env);
  if (HTTP_PORT !== 0) await assertPortFree(HTTP_PORT, 'HTTP_PORT');
  // Metrics are on /metrics of HTTP_PORT; a metrics port of its own only when METRICS_PORT is set.
  let metrics: MetricsServer | undefined;
  if (process.env.METRICS_PORT) {
    const { METRICS_PORT } = loadConfig({ METRICS_PORT: serviceEnv.METRICS_PORT }, process.env);
    metrics = await serveMetrics(METRICS_PORT).catch((err) => {
      throw portError(err, 'METRICS_PORT', METRICS_PORT);
    });
  }
  const platform = await startPlatform(process.env, progress).catch(async (err) => {
    await metrics?.close();
    throw err;
  });
  progress(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s (pid ${process.pid})`);
  process.stdout.write(`\nPlatform is up at ${platform.url}  (API: ${platform.url}api/v1/version)\n${grpcAddresses(platform)}\n`);
  // DEMO_SEED_MANIFEST: demo data through the API and the in-process simulator, in the background (a failure is
  // logged and the platform keeps serving).
  const demo = startDemoSeed(process.env, platform, progress);
  let stopping = false;
  stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    progress(`${why}: stopping`);
    Promise.resolve(demo?.stop())
      .then(() => platform.stop())
      .then(() => metrics?.close())
      .then(() => stopTracing())
      .then(
        () => {
          progress('stopped');
          process.exit(0);
        },
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
}

/** The apps whose gRPC services other teams call (docs/grpc.md); the others' methods are internal. */
const PUBLIC_GRPC = ['authz', 'orgs-teams', 'contracts-licensing'];

/**
 * Where each app answers gRPC, on loopback: the public ones (a service account's token) first, then the internal
 * ones, printed once ready so nobody has to find them in the JSON logs (GRPC_PORT_BASE fixes them).
 */
function grpcAddresses(platform: LocalPlatform): string {
  const at = (names: string[]) => names.map((name) => `${name} 127.0.0.1:${platform.apps.get(name)!.grpcPort}`).join(', ');
  const internal = [...platform.apps.keys()].filter((name) => !PUBLIC_GRPC.includes(name));
  return `gRPC for service accounts (docs/grpc.md): ${at(PUBLIC_GRPC)}\ngRPC internal to the platform: ${at(internal)}\n`;
}

/** Fails with the start error for a port in use when `port` cannot be listened on now (as the gateway will). */
function assertPortFree(port: number, setting: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(portError(err, setting, port)));
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

/**
 * A start that failed: one line naming the app that failed (the others were stopped) and what to do, with
 * the exit code the app would have had on its own (78 configuration, 69 a dependency); a fault of ours is
 * printed with its stack and exits 1.
 */
main().catch((err) => {
  const app = err instanceof AppStartError ? err.app : undefined;
  const cause = err instanceof AppStartError ? err.cause : err;
  const known = describeStartError(cause);
  const prefix = app ? `platform: ${app} failed to start: ` : 'platform: ';
  if (known) process.stderr.write(`${prefix}${known.line}\n`);
  else {
    process.stderr.write(`${prefix}${(cause as Error)?.message ?? cause}\n`);
    console.error(cause);
  }
  process.exit(known?.exitCode ?? 1);
});
