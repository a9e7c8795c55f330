import { clustersV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { Clusters } from './inventory/clusters';
import type { HubEnrolment } from './inventory/enrolment';

/** The ClustersService methods that change nothing; every other one is a write, announced (clusters-changed.ts). */
export const CLUSTERS_READS: readonly (keyof typeof clustersV1.ClustersServiceService)[] = [
  'getVersion',
  'checkNewHub',
  'listHubs',
  'listOwnerClusters',
  'getHub',
  'getCluster',
  'getClusters',
  'listSpokes',
  'getSpoke',
  'listNamespaces',
];

/** The ClustersService binding: one line per RPC of proto/platformadmin/clusters/v1/, handing it to its feature. */
export function clustersService(clusters: Clusters, enrolment: HubEnrolment): ServiceBinding<typeof clustersV1.ClustersServiceService> {
  return bindService(clustersV1.ClustersServiceService, {
    getVersion: async () => versionOf('clusters'),
    createHub: (req, ctx) => clusters.createHub(req, ctx),
    enrollHub: (req, ctx) => enrolment.enroll(req, ctx),
    checkNewHub: async (req) => {
      await clusters.checkNewHub(req);
      return {};
    },
    listHubs: async (req) => ({ clusters: await clusters.listHubs(req.ownerType, req.ownerId) }),
    listOwnerClusters: async (req) => ({ clusters: await clusters.listOwnerClusters(req.ownerType, req.ownerId) }),
    getHub: (req) => clusters.getHub(req.ownerType, req.ownerId, req.name),
    getCluster: (req) => clusters.getCluster(req.uid),
    getClusters: async (req) => ({ clusters: await clusters.getClusters(req.uids) }),
    listSpokes: async (req) => ({ clusters: await clusters.listSpokes(req.hubUid) }),
    getSpoke: (req) => clusters.getSpoke(req.hubUid, req.name),
    listNamespaces: async (req) => ({ namespaces: await clusters.listNamespaces(req.clusterUid) }),
    setUserConnection: (req) => clusters.setUserConnection(req),
  });
}
