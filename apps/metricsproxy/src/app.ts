import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { BackendsStore } from './backends-store';
import { metricsproxyEnv } from './config';
import { Registrations } from './registrations';
import { metricsproxyService } from './service';

/** Starts the metricsproxy service: per-cluster metrics backends registered as dashboard datasources */
export const metricsproxyApp = defineApp({
  name: 'metricsproxy',
  env: metricsproxyEnv,
  start: (config) =>
    startService(
      {
        name: 'metricsproxy',
        protoPackage: 'metricsproxy',
        database: { schema: 'metricsproxy', migrations },
        grpc: (svc) => {
          const registrations = new Registrations(BackendsStore.create(svc.db!), config, svc.log);
          registrations.warnUnconfigured();
          return [metricsproxyService(registrations)];
        },
      },
      config,
    ),
});
