import { clustersV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';

/** The ClustersService binding: one line per RPC of proto/platform/clusters/v1/, handing it to its feature. */
export function clustersService(): ServiceBinding<typeof clustersV1.ClustersServiceService> {
  return bindService(clustersV1.ClustersServiceService, {
    getVersion: async () => versionOf('clusters'),
  });
}
