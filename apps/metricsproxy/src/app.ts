import { defineApp, serviceEnv, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { metricsproxyService } from './service';

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
        grpc: () => [metricsproxyService()],
      },
      config,
    ),
});
