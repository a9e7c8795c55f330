import { metricsproxyV1 } from '@platform/proto';
import { bindService, defineApp, serviceEnv, startService, versionOf } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the metricsproxy service: per-cluster metrics backends registered as dashboard datasources */
export const metricsproxyApp = defineApp({
  name: 'metricsproxy',
  env: serviceEnv,
  start: (config) =>
    startService(
      {
        name: 'metricsproxy',
        protoPackage: 'metricsproxy',
        database: { schema: 'metricsproxy', migrations },
        grpc: () => [bindService(metricsproxyV1.MetricsproxyServiceService, { getVersion: async () => versionOf('metricsproxy') })],
      },
      config,
    ),
});
