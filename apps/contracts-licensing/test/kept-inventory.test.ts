import { CLUSTERS_CHANGED, InProcessBus, type Bus, type ClustersChanged } from '@platform/bus';
import { keptClusters } from '@platform/clusters-client';
import type { clustersV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { clustersInventory, type InventoryCluster } from '../src/contracts/inventory';

// contracts-licensing reads the inventory through clusters' own read model (keptClusters): what it asked is kept until
// clusters' notice names it.

const HUB = '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4';
const SPOKE = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
const OTHER = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';

const cluster = (uid: string, nodeCount = 3): InventoryCluster => ({
  uid,
  name: `c-${uid.slice(0, 4)}`,
  displayName: '',
  provider: 'aws',
  kubernetesVersion: 'v1.30.4',
  nodeCount,
  statusJson: '{}',
  hubUid: uid === HUB ? '' : HUB,
  ownerType: 'organization',
  ownerId: 7,
});

/** The clusters service as contracts see it: what it holds, and every question it was asked. */
function inventory() {
  const held = new Map<string, InventoryCluster>();
  const asked: string[] = [];
  const service = {
    getHub: async () => {
      throw new Error('not asked');
    },
    getClusters: async (req: clustersV1.GetClustersRequest) => (
      asked.push(`clusters ${req.uids.join(',')}`),
      { clusters: req.uids.flatMap((u) => held.get(u.toLowerCase()) ?? []) } as clustersV1.ListClustersResponse
    ),
    listOwnerClusters: async (req: clustersV1.ListHubsRequest) => (
      asked.push(`owner ${req.ownerType}:${req.ownerId}`),
      {
        clusters: [...held.values()].filter((c) => c.ownerType === req.ownerType && c.ownerId === req.ownerId),
      } as clustersV1.ListClustersResponse
    ),
  };
  return { held, asked, service };
}

/** The inventory as contracts-licensing reads it, following `bus` (none: not following, as before its start). */
async function keptOf(inv: ReturnType<typeof inventory>, bus: Bus | undefined, ttlMs = 60_000) {
  const kept = keptClusters(inv.service as never, { reader: 'test', ttlMs });
  const stop = bus ? await kept.readModel.follow(bus) : async () => {};
  return { kept: clustersInventory(kept.client as never), stop };
}

describe('the inventory as contracts-licensing keeps it', () => {
  it('asks clusters once per cluster, by UID in any case, and in one call only for the clusters it does not keep', async () => {
    const inv = inventory();
    inv.held.set(HUB, cluster(HUB));
    inv.held.set(SPOKE, cluster(SPOKE));
    const { kept, stop } = await keptOf(inv, new InProcessBus());
    expect((await kept.cluster(HUB))?.uid).toBe(HUB);
    expect((await kept.cluster(HUB.toUpperCase()))?.uid).toBe(HUB);
    const both = await kept.clustersByUid([HUB, SPOKE.toUpperCase(), OTHER]);
    expect([...both.keys()].sort()).toEqual([HUB, SPOKE].sort());
    expect(await kept.clustersByUid([SPOKE, HUB])).toEqual(both);
    expect(inv.asked).toEqual([`clusters ${HUB}`, `clusters ${SPOKE},${OTHER}`]);
    await stop();
  });

  it('keeps no miss: a cluster enrolled after a lookup found none is found by the next one', async () => {
    const inv = inventory();
    const { kept, stop } = await keptOf(inv, new InProcessBus());
    expect(await kept.cluster(OTHER)).toBeUndefined();
    expect((await kept.clustersByUid([OTHER])).size).toBe(0);
    inv.held.set(OTHER, cluster(OTHER));
    expect((await kept.cluster(OTHER))?.uid).toBe(OTHER);
    expect((await kept.clustersByUid([OTHER])).size).toBe(1);
    await stop();
  });

  it("answers afresh after clusters' notice, even one still on its way: the clusters it names, and the lists of the owners it names", async () => {
    const bus = new LaterBus();
    const inv = inventory();
    inv.held.set(HUB, cluster(HUB));
    const { kept, stop } = await keptOf(inv, bus);
    await kept.cluster(HUB);
    expect((await kept.clustersOf('organization', 7)).map((c) => c.uid)).toEqual([HUB]);

    // A report changed the hub and brought a spoke.
    inv.held.set(HUB, cluster(HUB, 9));
    inv.held.set(SPOKE, cluster(SPOKE));
    await bus.notify(CLUSTERS_CHANGED, { uids: [HUB, SPOKE], owners: ['organization:7'] } satisfies ClustersChanged);
    expect((await kept.cluster(HUB))?.nodeCount).toBe(9);
    expect((await kept.clustersOf('organization', 7)).map((c) => c.uid)).toEqual([HUB, SPOKE]);

    // Another owner's notice, naming none of these clusters, leaves them kept.
    await bus.notify(CLUSTERS_CHANGED, { uids: [OTHER], owners: ['organization:8'] } satisfies ClustersChanged);
    const before = inv.asked.length;
    await kept.cluster(HUB);
    await kept.clustersOf('organization', 7);
    expect(inv.asked.length).toBe(before);
    await stop();
  });

  it('keeps nothing before it follows the bus, or with a lifetime of 0', async () => {
    const inv = inventory();
    inv.held.set(HUB, cluster(HUB));
    const { kept: unfollowed } = await keptOf(inv, undefined);
    await unfollowed.cluster(HUB);
    await unfollowed.cluster(HUB);
    const { kept: off, stop } = await keptOf(inv, new InProcessBus(), 0);
    await off.clustersByUid([HUB]);
    await off.clustersByUid([HUB]);
    expect(inv.asked).toHaveLength(4);
    await stop();
  });
});
