import { announcingWrites, defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { BackendsStore } from './backends-store';
import { metricsproxyEnv } from './config';
import { Registrations } from './registrations';
import { registrationsChangedNotice } from './registrations-changed';
import { METRICSPROXY_READS, metricsproxyService } from './service';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'metricsproxy', migrations };

/** Starts the metricsproxy service: per-cluster metrics backends registered as dashboard datasources */
export const metricsproxyApp = defineApp({
  name: 'metricsproxy',
  env: metricsproxyEnv,
  database: DATABASE,
  start: (config) =>
    startService(
      {
        name: 'metricsproxy',
        protoPackage: 'metricsproxy',
        database: DATABASE,
        // Only sends notices: the gateways keep what LookupBackend answered until a write's notice names it.
        bus: 'notices',
        grpc: (svc) => {
          const registrations = new Registrations(BackendsStore.create(svc.db!), config, svc.log);
          registrations.warnUnconfigured();
          // Every write announces itself, by method (its registration named from its request).
          return [announcingWrites(metricsproxyService(registrations), METRICSPROXY_READS, registrationsChangedNotice(svc.bus!, svc.log))];
        },
      },
      config,
    ),
});
