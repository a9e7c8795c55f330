import { clusterSetsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { ClusterSets } from './cluster-sets';

/** The ClusterSetsService methods that change nothing; every other one is a write, announced (clusters-changed.ts). */
export const CLUSTER_SETS_READS: readonly (keyof typeof clusterSetsV1.ClusterSetsServiceService)[] = [
  'listClusterSets',
  'listMembers',
  'listAddable',
  'listManagedClusters',
  'listSetNames',
  'authInfo',
  'boundNamespaces',
];

/** The ClusterSetsService binding: one line per RPC of proto/platformadmin/clusters/v1/cluster_sets.proto. */
export function clusterSetsService(sets: ClusterSets): ServiceBinding<typeof clusterSetsV1.ClusterSetsServiceService> {
  return bindService(clusterSetsV1.ClusterSetsServiceService, {
    listClusterSets: async (req) => ({ sets: await sets.list(req.hubUid) }),
    createClusterSet: (req) => sets.create(req),
    deleteClusterSet: (req) => sets.delete(req.hubUid, req.name),
    addClusters: (req) => sets.add(req),
    removeClusters: (req) => sets.remove(req),
    listMembers: async (req) => ({ clusters: await sets.members(req.hubUid, req.name) }),
    listAddable: async (req) => ({ names: await sets.addableNames(req.hubUid, req.name) }),
    listManagedClusters: async (req) => ({ clusters: await sets.managedClusters(req.hubUid) }),
    listSetNames: async (req) => ({ names: await sets.setNames(req.hubUid, req.clientOrgOnly) }),
    authInfo: async (req) => ({ json: JSON.stringify(await sets.authInfo(req.hubUid, req.name)) }),
    boundNamespaces: async (req) => ({ json: JSON.stringify(await sets.boundNamespaces(req.hubUid)) }),
    bindNamespace: async (req) => ({ json: JSON.stringify(await sets.bind(req, true)) }),
    unbindNamespace: async (req) => ({ json: JSON.stringify(await sets.bind(req, false)) }),
  });
}
