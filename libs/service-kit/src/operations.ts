import { serveMetrics, stopTracing } from '@platform/telemetry';
import type { Logger } from './logger';
import type { RunningService } from './service';
import { portError } from './start-errors';

/**
 * An app run as its own process (runMain) with its operational surface: Prometheus metrics on METRICS_PORT
 * (opened first, so a port in use stops the start before any work), and on stop the spans still buffered
 * are sent. The one-process launcher does not come here: it serves the shared registry once itself.
 */
export async function startWithOperations(
  start: () => Promise<RunningService>,
  config: { METRICS_PORT?: number },
  log: Logger,
): Promise<RunningService> {
  const metrics =
    config.METRICS_PORT === undefined
      ? undefined
      : await serveMetrics(config.METRICS_PORT).catch((err) => {
          throw portError(err, 'METRICS_PORT', config.METRICS_PORT!);
        });
  let running: RunningService;
  try {
    running = await start();
  } catch (err) {
    await metrics?.close();
    throw err;
  }
  if (metrics) log.info({ metricsPort: metrics.port }, 'metrics served at /metrics');
  return {
    ...running,
    async stop() {
      await running.stop();
      await metrics?.close();
      await stopTracing();
    },
  };
}
