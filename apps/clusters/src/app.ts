import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { clustersEnv, type ClustersConfig } from './config';
import { Clusters } from './inventory/clusters';
import { Relationships, TUPLES_EFFECT } from './inventory/tuples';
import { clustersService } from './service';

/** Starts the clusters service: the cluster inventory (hubs, managed clusters, namespaces, installed features). */
export const clustersApp = defineApp({ name: 'clusters', env: clustersEnv, start: startClusters });

function startClusters(config: ClustersConfig) {
  const relationships = new Relationships(config.AUTHZ_GRPC_ADDR);
  return startService(
    {
      name: 'clusters',
      protoPackage: 'clusters',
      database: { schema: 'clusters', migrations },
      // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
      bus: true,
      grpc: ({ db, outbox }) => {
        const clusters = new Clusters(db!, outbox({ [TUPLES_EFFECT]: relationships.effect() }));
        return [clustersService(clusters)];
      },
      onStop: async () => relationships.close(),
    },
    config,
  );
}
