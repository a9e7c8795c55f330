import { clustersV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the clusters service: managed clusters, cluster sets, feature sets and namespace bindings */
export function startClusters(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'clusters',
      protoPackage: 'clusters',
      database: { schema: 'clusters', migrations },
      grpc: () => [bindService(clustersV1.ClustersServiceService, { getVersion: async () => versionOf('clusters') })],
    },
    config,
  );
}
