import { defineApp, serviceEnv, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { clustersService } from './service';

/** Starts the clusters service: managed clusters, cluster sets, feature sets and namespace bindings */
export const clustersApp = defineApp({
  name: 'clusters',
  env: serviceEnv,
  start: (config) =>
    startService(
      {
        name: 'clusters',
        protoPackage: 'clusters',
        database: { schema: 'clusters', migrations },
        // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
        bus: true,
        grpc: () => [clustersService()],
      },
      config,
    ),
});
