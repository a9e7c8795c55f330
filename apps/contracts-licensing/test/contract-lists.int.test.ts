import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { FileObjectStorage } from '@platform/object-storage';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import type { Inventory } from '../src/contracts/inventory';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any;
const uid = (n: number) => `0b7d4c1e-0000-4000-8000-${String(n).padStart(12, '0')}`;
const DAY = 86_400;
/** An inventory that has none of the clusters, and counts how it is asked: one by one, or many at once. */
const asked = { one: 0, batches: [] as string[][] };
const inventory: Inventory = {
  cluster: async () => void (asked.one += 1),
  clustersByUid: async (uids) => (asked.batches.push(uids), new Map()),
  clustersOf: async () => [],
};

/**
 * Each contract list runs one statement however many contracts, owners and clusters it answers: on the embedded
 * database a statement is what a list costs. Counted on knex's `query` events over the embedded database.
 */
describe('contract lists: one statement each', () => {
  let db: Database;
  let dir: string;
  let contracts: Contracts;
  let first: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-lists-'));
    db = await openDatabase({ dataDir: dir, schema: 'contracts' });
    await db.migrate(migrations);
    contracts = createContracts(db, new FileObjectStorage(dir), inventory, quiet);
    // Three owners with two contracts each (the same features on one cluster, so duplicates show), three clusters per contract.
    for (const owner of [1, 2, 3])
      for (const product of ['productdb', 'productdb']) {
        const [made] = await contracts.lifecycle.create({
          ownerId: owner,
          ownerLogin: `owner-${owner}`,
          ownerType: 'organization',
          products: [product],
          fields: { features: [], featuresGiven: false, endUnix: Math.floor(Date.now() / 1000) + 30 * DAY },
          actor: 'root',
        });
        first ||= made.contract.id;
        const clusters = [1, 2, 3].map((i) => ({ cluster: uid(owner * 10 + i), displayName: `c${i}`, tags: [] }));
        await contracts.binding.bind(made.contract.id, owner, clusters, 'root');
      }
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const statements = async (read: () => Promise<unknown>) => {
    let n = 0;
    const count = () => void (n += 1);
    db.knex.on('query', count);
    try {
      await read();
    } finally {
      db.knex.off('query', count);
    }
    return n;
  };

  it('GET /contracts and /user/contracts (ListContracts)', async () => {
    expect(await statements(() => contracts.listing.list({ ownerId: 0 }))).toBe(1);
    expect(await statements(() => contracts.listing.list({ ownerId: 1 }))).toBe(1);
    const all = await contracts.listing.list({ ownerId: 0 });
    expect(all).toHaveLength(6);
    // Each contract of an owner sees the owner's other contract on every shared cluster, never another owner's.
    for (const view of all)
      for (const status of view.clusters)
        expect(status.duplicateContractFeatures.map((d) => d.contractId)).toEqual(
          all.filter((o) => o.contract.owner_id === view.contract.owner_id && o.contract.id !== view.contract.id).map((o) => o.contract.id),
        );
  });

  it('asks the cluster inventory once for every cluster of a list', async () => {
    asked.one = 0;
    asked.batches = [];
    const all = await contracts.listing.list({ ownerId: 0 });
    expect(asked.one).toBe(0);
    expect(asked.batches).toHaveLength(1);
    expect(new Set(asked.batches[0])).toEqual(new Set(all.flatMap((v) => v.clusters.map((c) => c.cluster))));
    // Three owners, each with two contracts on the same three clusters.
    expect(new Set(asked.batches[0]).size).toBe(9);
  });

  it('GET /user/contracts/active/associated-with/clusters/:clusterID (ListContracts bound to a cluster)', async () => {
    const read = () => contracts.listing.list({ ownerId: 1, activeOnly: true, boundTo: uid(11) });
    expect(await statements(read)).toBe(1);
    expect((await read()).map((v) => v.contract.owner_id)).toEqual([1, 1]);
  });

  it('GET /contracts/:id/clusters and /user/contracts/:id/clusters (ListContractClusters)', async () => {
    expect(await statements(() => contracts.listing.clusters(first, 0))).toBe(1);
    expect(await statements(() => contracts.listing.clusters(first, 1))).toBe(1);
    expect((await contracts.listing.clusters(first, 1)).map((c) => c.cluster)).toEqual([uid(11), uid(12), uid(13)]);
  });

  it('GET /user/contracts/:id/clusters/imported/non-associated (ImportableClusters)', async () => {
    expect(await statements(() => contracts.binding.importable(first, 1))).toBe(1);
  });
});
