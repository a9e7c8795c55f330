import {
  allOf,
  CLUSTERS_CHANGED,
  following,
  keptServiceReads,
  NoticeCache,
  type ClustersChanged,
  type KeptRead,
  type ReadModel,
} from '@platform/bus';
import { clientOrgsV1, clusterSetsV1, clustersV1, featureSetsV1 } from '@platform/proto';
import { backendState, createClients, type CallOptions, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** clusters's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const CLUSTERS_SERVICES = {
  clusters: clustersV1.ClustersServiceService,
  clusterSets: clusterSetsV1.ClusterSetsServiceService,
  featureSets: featureSetsV1.FeatureSetsServiceService,
  clientOrgs: clientOrgsV1.ClientOrgsServiceService,
} as const;

/** clusters' services as another app calls them. */
export interface ClustersClients {
  clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  /** Cluster sets of a hub and their bound namespaces. */
  clusterSets: PromiseClient<typeof clusterSetsV1.ClusterSetsServiceService>;
  /** Feature sets, sync status and auto-update of cluster sets. */
  featureSets: PromiseClient<typeof featureSetsV1.FeatureSetsServiceService>;
  /** Client organizations: their hub, imported clusters and asynchronous cleanup. */
  clientOrgs: PromiseClient<typeof clientOrgsV1.ClientOrgsServiceService>;
}

/** What a reader keeps of the inventory's answers, and how long at most (0 keeps nothing). */
export interface ClustersKeeping {
  ttlMs: number;
  /** Names the caches in the metrics (`<reader>.hubs`, `<reader>.clusters`, `<reader>.owner-clusters`). */
  reader: string;
  /** Whether clusters answers (the reads of CLUSTERS_READS are not served from memory while it does not). */
  available?: () => boolean;
}

/** The calls the inventory's read model answers. */
type ClustersReads = Pick<ClustersClients['clusters'], 'getHub' | 'getClusters' | 'listOwnerClusters'>;

/** clusters' clients, answering from what the reader keeps of the inventory when `keep` is given (see keptClusters). */
export function clustersClients(
  address: string,
  opts: ClientOptions,
  keep?: ClustersKeeping,
): { clients: ClustersClients; readModel: ReadModel } {
  const clients: ClustersClients = createClients(CLUSTERS_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  const kept = keptClusters(clients.clusters, keep);
  const reads = keptClustersReads({ ...clients, clusters: kept.client }, { ...keep, available: () => backendState(opts.name).available });
  return { clients: reads.clients, readModel: allOf([kept.readModel, reads.readModel]) };
}

/** What every other kept answer of clusters shows: its own tables only, every change of which is announced. */
const CLUSTERS_ANSWER: KeptRead = { stale: [CLUSTERS_CHANGED] };

/**
 * The other reads of clusters a reader keeps, by service, dropped by any `clusters.changed`: clusters announces every
 * write method (announcingWrites), every report applied, and every background pass or outbox effect that wrote (client
 * organizations cleaned up, user connections reconciled). None of these answers asks another service or the clock.
 */
export const CLUSTERS_READS = {
  clusters: {
    checkNewHub: CLUSTERS_ANSWER,
    listHubs: CLUSTERS_ANSWER,
    getCluster: CLUSTERS_ANSWER,
    listSpokes: CLUSTERS_ANSWER,
    getSpoke: CLUSTERS_ANSWER,
    listNamespaces: CLUSTERS_ANSWER,
  },
  clusterSets: {
    listClusterSets: CLUSTERS_ANSWER,
    listMembers: CLUSTERS_ANSWER,
    listAddable: CLUSTERS_ANSWER,
    listManagedClusters: CLUSTERS_ANSWER,
    listSetNames: CLUSTERS_ANSWER,
    authInfo: CLUSTERS_ANSWER,
    boundNamespaces: CLUSTERS_ANSWER,
  },
  featureSets: { listFeatureSets: CLUSTERS_ANSWER, syncStatus: CLUSTERS_ANSWER, autoUpdateCheck: CLUSTERS_ANSWER },
  clientOrgs: { getClientOrg: CLUSTERS_ANSWER, listClientOrgs: CLUSTERS_ANSWER, status: CLUSTERS_ANSWER },
} satisfies { [S in keyof ClustersClients]?: { [M in keyof ClustersClients[S]]?: KeptRead } };

/** The clients with the reads of CLUSTERS_READS kept, one cache per service. */
export function keptClustersReads<C extends { [S in keyof typeof CLUSTERS_READS]: object }>(
  clients: C,
  keep: ClustersKeeping,
): { clients: C; readModel: ReadModel } {
  return keptServiceReads(clients, CLUSTERS_READS as never, {
    name: `${keep.reader}.clusters`,
    ttlMs: keep.ttlMs,
    available: keep.available,
  });
}

const clusterTag = (uid: string) => `cluster:${uid.toLowerCase()}`;

/**
 * The inventory's read model, as clusters defines it for the apps that read it: hubs by owner and name (GetHub),
 * clusters by UID (GetClusters: the kept ones answered here, only the others asked) and the clusters of an owner
 * (ListOwnerClusters). Its rule, written here by clusters: the inventory changes only through clusters, which after
 * every change (a report applied, a hub recorded or taken back) sends `clusters.changed` naming the clusters changed
 * or gone and the owners whose set of clusters may have changed; those are dropped, and everything for a notice
 * naming `all` (a write of clusters that cannot say what it changed). Misses are not kept (a new hub or cluster is
 * found at once). Each answer is served only after the reader's bus has caught up with the notices sent before the
 * request arrived (`CallOptions.arrivedAt`); nothing is kept while the bus is away.
 */
export function keptClusters<C extends ClustersReads>(client: C, keep: ClustersKeeping): { client: C; readModel: ReadModel } {
  const hubs = new NoticeCache<clustersV1.Cluster>({ name: `${keep.reader}.hubs`, ttlMs: keep.ttlMs, maxEntries: 10_000 });
  const byUid = new NoticeCache<clustersV1.Cluster>({ name: `${keep.reader}.clusters`, ttlMs: keep.ttlMs, maxEntries: 10_000 });
  const ofOwner = new NoticeCache<clustersV1.ListClustersResponse>({
    name: `${keep.reader}.owner-clusters`,
    ttlMs: keep.ttlMs,
    maxEntries: 1_000,
  });
  const stale = (n: unknown) => {
    const { uids = [], owners = [], all } = n as Partial<ClustersChanged>;
    if (all) return 'all' as const;
    return [...uids.map(clusterTag), ...owners.map((owner) => `owner:${owner}`)];
  };
  const rules = [{ subject: CLUSTERS_CHANGED, stale }];
  const kept: C = {
    ...client,
    getHub: (req: clustersV1.GetHubRequest, opts?: CallOptions) =>
      hubs.through(
        `${req.ownerType}:${req.ownerId}|${req.name}`,
        () => client.getHub(req, opts),
        { tags: (hub) => [clusterTag(hub.uid)] },
        opts?.arrivedAt,
      ),
    getClusters: async (req: clustersV1.GetClustersRequest, opts?: CallOptions) => {
      const found = await byUid.throughMany(
        req.uids.map((uid) => uid.toLowerCase()),
        async (missing) => new Map((await client.getClusters({ uids: missing }, opts)).clusters.map((c) => [c.uid.toLowerCase(), c])),
        { tags: (cluster) => [clusterTag(cluster.uid)] },
        opts?.arrivedAt,
      );
      // In the order asked, as clusters answers; UIDs of no cluster left out.
      return { clusters: req.uids.flatMap((uid) => found.get(uid.toLowerCase()) ?? []) } as clustersV1.ListClustersResponse;
    },
    listOwnerClusters: (req: clustersV1.ListHubsRequest, opts?: CallOptions) => {
      const owner = `${req.ownerType}:${req.ownerId}`;
      return ofOwner.through(
        owner,
        () => client.listOwnerClusters(req, opts),
        { tags: (answer) => [`owner:${owner}`, ...answer.clusters.map((c) => clusterTag(c.uid))] },
        opts?.arrivedAt,
      );
    },
  };
  return {
    client: kept,
    readModel: allOf([hubs, byUid, ofOwner].map((cache) => following(cache, rules))),
  };
}

/**
 * Every read of clusters a reader keeps (the gateway's `kept.clusters`, KeptDoor): hubs, clusters by UID and an owner's
 * clusters of the inventory's read model (keptClusters), and the other reads of CLUSTERS_READS.
 */
export const CLUSTERS_KEPT = {
  clusters: {
    /** A hub by owner and name, kept until a notice names it. */
    getHub: 'hub',
    /** Clusters by UID, the kept ones answered here and only the others asked. */
    getClusters: 'clusters by UID',
    /** An owner's clusters, kept until a notice names the owner or one of them. */
    listOwnerClusters: "owner's clusters",
    ...CLUSTERS_READS.clusters,
  },
  clusterSets: CLUSTERS_READS.clusterSets,
  featureSets: CLUSTERS_READS.featureSets,
  clientOrgs: CLUSTERS_READS.clientOrgs,
} as const;
