import { metricsproxyV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the metricsproxy service: per-cluster metrics backends registered as dashboard datasources */
export function startMetricsproxy(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'metricsproxy',
      protoPackage: 'metricsproxy',
      database: { schema: 'metricsproxy', migrations },
      grpc: () => [bindService(metricsproxyV1.MetricsproxyServiceService, { getVersion: async () => versionOf('metricsproxy') })],
    },
    config,
  );
}
