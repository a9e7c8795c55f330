import { NotFoundError } from '@platform/errors';
import { clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';

/** A cluster of the inventory, as contracts need it. */
export type InventoryCluster = Pick<
  clustersV1.Cluster,
  'uid' | 'name' | 'displayName' | 'provider' | 'kubernetesVersion' | 'nodeCount' | 'statusJson' | 'hubUid' | 'ownerType' | 'ownerId'
>;

/** The cluster inventory (the clusters service): whether a cluster is imported, and an owner's clusters. */
export interface Inventory {
  /** The cluster with this UID, hub or managed; undefined when the inventory has none. */
  cluster(uid: string): Promise<InventoryCluster | undefined>;
  /** Every cluster of an owner: its hubs and their managed clusters. */
  clustersOf(ownerType: string, ownerId: number): Promise<InventoryCluster[]>;
}

type ClustersClient = Pick<PromiseClient<typeof clustersV1.ClustersServiceService>, 'getCluster' | 'listHubs' | 'listSpokes'>;

/** The inventory behind the clusters service's RPCs. */
export function clustersInventory(client: ClustersClient): Inventory {
  return {
    async cluster(uid) {
      try {
        return await client.getCluster({ uid });
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    async clustersOf(ownerType, ownerId) {
      const { clusters: hubs } = await client.listHubs({ ownerType, ownerId });
      const spokes = await Promise.all(hubs.map((h) => client.listSpokes({ hubUid: h.uid }).then((r) => r.clusters)));
      return [...hubs, ...spokes.flat()];
    },
  };
}

/** The clusters service client contracts ask. */
export function clustersClient(address: string): PromiseClient<typeof clustersV1.ClustersServiceService> {
  return createClient(clustersV1.ClustersServiceService, address, { name: 'clusters', deadlineMs: 5_000 });
}

/** Asks the inventory once per UID for as long as it is kept (one call of the service). */
export function memoInventory(inventory: Inventory): Inventory {
  const clusters = new Map<string, Promise<InventoryCluster | undefined>>();
  return {
    cluster(uid) {
      let found = clusters.get(uid);
      if (!found) clusters.set(uid, (found = inventory.cluster(uid)));
      return found;
    },
    clustersOf: (ownerType, ownerId) => inventory.clustersOf(ownerType, ownerId),
  };
}
