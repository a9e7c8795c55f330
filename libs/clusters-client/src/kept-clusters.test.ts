import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { NotFoundError } from '@platform/errors';
import { clustersV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptClusters } from './clients';

// The inventory's read model, as its readers keep it: one call for what was asked before, the very next request after
// clusters' notice asks again (even while the notice is on its way), another cluster's notice leaves it kept, no miss kept.

const EAST = '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4';
const EAST_AGAIN = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const WEST = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
const cluster = (uid: string, name: string) =>
  clustersV1.Cluster.fromPartial({ id: 40, uid, name, ownerType: 'organization', ownerId: 7, statusJson: '{"phase":"Ready"}' });

/** The clusters app as its readers see it: the clusters it holds, and what it was asked. */
function inventory() {
  const hubs = new Map<string, clustersV1.Cluster>();
  const byUid = new Map<string, clustersV1.Cluster>();
  const asked: string[] = [];
  return {
    hubs,
    byUid,
    asked,
    getHub: async (q: clustersV1.GetHubRequest) => {
      asked.push(`hub ${q.ownerType}:${q.ownerId}|${q.name}`);
      const found = hubs.get(q.name);
      if (!found) throw new NotFoundError(`cluster "${q.name}" not found`);
      return found;
    },
    getClusters: async (q: clustersV1.GetClustersRequest) => {
      asked.push(`clusters ${q.uids.join(',')}`);
      return clustersV1.ListClustersResponse.fromPartial({ clusters: q.uids.flatMap((uid) => byUid.get(uid) ?? []) });
    },
    listOwnerClusters: async (q: clustersV1.ListHubsRequest) => {
      asked.push(`owner ${q.ownerType}:${q.ownerId}`);
      return clustersV1.ListClustersResponse.fromPartial({ clusters: [...byUid.values()] });
    },
  };
}

async function setUp() {
  const inv = inventory();
  const { client, readModel } = keptClusters(inv, { reader: 'test', ttlMs: 60_000 });
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  const changed = (n: ClustersChanged) => bus.notify(CLUSTERS_CHANGED, n);
  return { inv, client, stop, changed };
}

const hubOf = (name: string) => ({ ownerType: 'organization', ownerId: 7, name });

describe("the inventory's read model", () => {
  it("answers an owner's hub asked again from what it kept, and asks again at once after clusters' notice naming it", async () => {
    const { inv, client, stop, changed } = await setUp();
    inv.hubs.set('east', cluster(EAST, 'east'));
    expect((await client.getHub(hubOf('east'))).uid).toBe(EAST);
    expect((await client.getHub(hubOf('east'))).uid).toBe(EAST);
    expect(inv.asked).toEqual(['hub organization:7|east']);
    // Taken back and another of the same name recorded; the notice is still on its way when the next request comes.
    inv.hubs.set('east', cluster(EAST_AGAIN, 'east'));
    await changed({ uids: [EAST], owners: ['organization:7'] });
    expect((await client.getHub(hubOf('east'))).uid).toBe(EAST_AGAIN);
    // Another cluster's notice leaves it kept.
    await changed({ uids: [WEST], owners: ['organization:7'] });
    await client.getHub(hubOf('east'));
    expect(inv.asked).toHaveLength(2);
    await stop();
  });

  it('keeps no miss: a hub made after a 404 is found by the very next request', async () => {
    const { inv, client, stop } = await setUp();
    await expect(client.getHub(hubOf('west'))).rejects.toBeInstanceOf(NotFoundError);
    inv.hubs.set('west', cluster(WEST, 'west'));
    expect((await client.getHub(hubOf('west'))).uid).toBe(WEST);
    await stop();
  });

  it('asks only for the clusters it has not kept, answers in the order asked, and drops those a notice names', async () => {
    const { inv, client, stop, changed } = await setUp();
    inv.byUid.set(EAST, cluster(EAST, 'east'));
    inv.byUid.set(WEST, cluster(WEST, 'west'));
    expect((await client.getClusters({ uids: [EAST] })).clusters.map((c) => c.name)).toEqual(['east']);
    expect((await client.getClusters({ uids: [WEST, EAST, EAST_AGAIN] })).clusters.map((c) => c.name)).toEqual(['west', 'east']);
    expect(inv.asked).toEqual([`clusters ${EAST}`, `clusters ${WEST},${EAST_AGAIN}`]);
    inv.byUid.set(EAST, cluster(EAST, 'east-renamed'));
    await changed({ uids: [EAST], owners: [] });
    expect((await client.getClusters({ uids: [EAST, WEST] })).clusters.map((c) => c.name)).toEqual(['east-renamed', 'west']);
    expect(inv.asked.at(-1)).toBe(`clusters ${EAST}`);
    await stop();
  });

  it("keeps an owner's clusters until a notice names the owner or one of its clusters", async () => {
    const { inv, client, stop, changed } = await setUp();
    inv.byUid.set(EAST, cluster(EAST, 'east'));
    const owner = { ownerType: 'organization', ownerId: 7 };
    await client.listOwnerClusters(owner);
    await client.listOwnerClusters(owner);
    expect(inv.asked).toEqual(['owner organization:7']);
    inv.byUid.set(WEST, cluster(WEST, 'west'));
    await changed({ uids: [], owners: ['organization:7'] });
    expect((await client.listOwnerClusters(owner)).clusters).toHaveLength(2);
    await changed({ uids: [EAST], owners: [] });
    await client.listOwnerClusters(owner);
    await changed({ uids: [], owners: ['organization:8'] });
    await client.listOwnerClusters(owner);
    expect(inv.asked).toEqual(['owner organization:7', 'owner organization:7', 'owner organization:7']);
    await stop();
  });

  it('drops everything it keeps for a notice naming all, even while the notice is on its way', async () => {
    const { inv, client, stop, changed } = await setUp();
    inv.hubs.set('east', cluster(EAST, 'east'));
    inv.byUid.set(WEST, cluster(WEST, 'west'));
    const owner = { ownerType: 'organization', ownerId: 7 };
    await client.getHub(hubOf('east'));
    await client.getClusters({ uids: [WEST] });
    await client.listOwnerClusters(owner);
    expect(inv.asked).toHaveLength(3);
    // A write that could not say which clusters it changed.
    inv.hubs.set('east', cluster(EAST_AGAIN, 'east'));
    await changed({ uids: [], owners: [], all: true });
    expect((await client.getHub(hubOf('east'))).uid).toBe(EAST_AGAIN);
    await client.getClusters({ uids: [WEST] });
    await client.listOwnerClusters(owner);
    expect(inv.asked).toEqual([
      'hub organization:7|east',
      `clusters ${WEST}`,
      'owner organization:7',
      'hub organization:7|east',
      `clusters ${WEST}`,
      'owner organization:7',
    ]);
    await stop();
  });
});
