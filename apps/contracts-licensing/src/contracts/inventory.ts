import { CLUSTERS_CHANGED, NoticeCache, type Bus, type ClustersChanged } from '@platform/bus';
import { NotAllowedError, NotFoundError } from '@platform/errors';
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

type ClustersClient = Pick<PromiseClient<typeof clustersV1.ClustersServiceService>, 'getCluster' | 'getClusters' | 'listOwnerClusters'>;

/** As many UIDs as the clusters service answers in one call. */
const UIDS_PER_CALL = 1000;

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
 * The inventory's answers kept here, so a contract read is one call (to this app), not one more to clusters for the
 * clusters it shows. Two NoticeCaches (libs/bus): clusters by UID, and each owner's clusters; clusters' notice of
 * changed clusters (`clusters.changed`, sent once a change or an applied report has committed) evicts the clusters it
 * names and the lists of the owners it names, a fence passes before a kept answer is used, and nothing is kept
 * while the bus is away. A cluster the inventory does not have is not kept: one enrolled since is found at once.
 */
export class KeptInventory implements Inventory {
  private readonly clusters: NoticeCache<InventoryCluster | undefined>;
  private readonly owners: NoticeCache<InventoryCluster[]>;

  constructor(
    private readonly inventory: Inventory,
    ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.clusters = new NoticeCache({ name: 'contracts.inventory-clusters', ttlMs, maxEntries });
    this.owners = new NoticeCache({ name: 'contracts.inventory-owners', ttlMs, maxEntries: Math.ceil(maxEntries / 10) });
  }

  /** Evicts on clusters' notices and follows the bus connection; until then nothing is kept. Answers how to stop. */
  async follow(bus: Bus): Promise<() => Promise<void>> {
    const stops = [
      await this.clusters.follow(bus, [{ subject: CLUSTERS_CHANGED, stale: (n) => ((n as ClustersChanged).uids ?? []).map(clusterTag) }]),
      await this.owners.follow(bus, [
        {
          subject: CLUSTERS_CHANGED,
          stale: (n) => [...((n as ClustersChanged).uids ?? []).map(clusterTag), ...((n as ClustersChanged).owners ?? []).map(ownerTag)],
        },
      ]),
    ];
    return async () => {
      for (const stop of stops) await stop();
    };
  }

  cluster(uid: string): Promise<InventoryCluster | undefined> {
    return this.clusters.through(uid.toLowerCase(), () => this.inventory.cluster(uid), {
      keep: (found) => found !== undefined,
      tags: (found) => [clusterTag(found!.uid)],
    });
  }

  async clustersByUid(uids: string[]): Promise<Map<string, InventoryCluster>> {
    const found = await this.clusters.throughMany(
      uids.map((u) => u.toLowerCase()),
      (missing) => this.inventory.clustersByUid(missing),
      { tags: (cluster) => [clusterTag(cluster!.uid)] },
    );
    return found as Map<string, InventoryCluster>;
  }

  clustersOf(ownerType: string, ownerId: number): Promise<InventoryCluster[]> {
    return this.owners.through(`${ownerType}:${ownerId}`, () => this.inventory.clustersOf(ownerType, ownerId), {
      tags: (list) => [ownerTag(`${ownerType}:${ownerId}`), ...list.map((c) => clusterTag(c.uid))],
    });
  }
}

const clusterTag = (uid: string) => `cluster:${uid.toLowerCase()}`;
const ownerTag = (owner: string) => `owner:${owner}`;

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
