import { NotAllowedError } from '@platform/errors';
import { clustersV1 } from '@platform/proto';
import { chunks, createClient, type PromiseClient } from '@platform/service-kit';

/** A cluster of the inventory, as contracts need it. */
export type InventoryCluster = Pick<
  clustersV1.Cluster,
  'uid' | 'name' | 'displayName' | 'provider' | 'kubernetesVersion' | 'nodeCount' | 'statusJson' | 'hubUid' | 'ownerType' | 'ownerId'
>;

/** The cluster inventory (the clusters service): whether a cluster is imported, and an owner's clusters. */
export interface Inventory {
  /** The cluster with this UID, hub or managed; undefined when the inventory has none. */
  cluster(uid: string): Promise<InventoryCluster | undefined>;
  /** The clusters with these UIDs that the inventory has, by UID, in one question however many there are. */
  clustersByUid(uids: string[]): Promise<Map<string, InventoryCluster>>;
  /** Every cluster of an owner: its hubs and their managed clusters. */
  clustersOf(ownerType: string, ownerId: number): Promise<InventoryCluster[]>;
}

type ClustersClient = Pick<PromiseClient<typeof clustersV1.ClustersServiceService>, 'getClusters' | 'listOwnerClusters'>;

/** As many UIDs as the clusters service answers in one call. */
const UIDS_PER_CALL = 1000;

/** The inventory behind the clusters service's RPCs. */
export function clustersInventory(client: ClustersClient): Inventory {
  return {
    // By UID as a list is asked, so a reader keeping the inventory (keptClusters) answers both from what it keeps.
    async cluster(uid) {
      return (await client.getClusters({ uids: [uid] })).clusters[0];
    },
    async clustersByUid(uids) {
      const wanted = [...new Set(uids)];
      const answers = await Promise.all(chunks(wanted, UIDS_PER_CALL).map((uids) => client.getClusters({ uids })));
      return new Map(answers.flatMap((a) => a.clusters.map((c) => [c.uid, c] as const)));
    },
    async clustersOf(ownerType, ownerId) {
      return (await client.listOwnerClusters({ ownerType, ownerId })).clusters;
    },
  };
}

/**
 * Whether the inventory's cluster is this account's own (enrolled by it, or a spoke of its hub). Users and
 * organizations share one id space, so the account id alone names the owner.
 */
export function ownedBy(inv: InventoryCluster | undefined, ownerId: number): inv is InventoryCluster {
  return !!inv && Number(inv.ownerId) === Number(ownerId);
}

/**
 * Whether the cluster is enrolled by another account. Only its owner's contracts may bind it, be licensed for it or
 * count its usage: a contract's owner stands in as the owner of a cluster only when no account has enrolled it.
 */
export function enrolledElsewhere(inv: InventoryCluster | undefined, ownerId: number): boolean {
  return !!inv && !ownedBy(inv, ownerId);
}

/**
 * The refusal for a cluster another account enrolled. It names neither that account nor anything of its
 * cluster, so a caller learns no more than that the UUID it already had is not its to use.
 */
export function notThisAccountsCluster(uid: string): NotAllowedError {
  return new NotAllowedError(`cluster ${uid} is enrolled by another account; only that account's contracts may bind or license it`);
}

/** The clusters service client contracts ask. */
export function clustersClient(address: string): PromiseClient<typeof clustersV1.ClustersServiceService> {
  return createClient(clustersV1.ClustersServiceService, address, { name: 'clusters', deadlineMs: 5_000 });
}

/**
 * Asks the inventory once per UID for as long as it is kept (one call of the service); the UIDs of `prefetch`
 * are asked together in one call, for an answer about many clusters (a list of contracts).
 */
export function memoInventory(inventory: Inventory, prefetch: string[] = []): Inventory {
  const clusters = new Map<string, Promise<InventoryCluster | undefined>>();
  if (prefetch.length > 0) {
    const batch = inventory.clustersByUid(prefetch);
    for (const uid of new Set(prefetch))
      clusters.set(
        uid,
        batch.then((found) => found.get(uid)),
      );
  }
  return {
    cluster(uid) {
      let found = clusters.get(uid);
      if (!found) clusters.set(uid, (found = inventory.cluster(uid)));
      return found;
    },
    clustersByUid: (uids) => inventory.clustersByUid(uids),
    clustersOf: (ownerType, ownerId) => inventory.clustersOf(ownerType, ownerId),
  };
}
