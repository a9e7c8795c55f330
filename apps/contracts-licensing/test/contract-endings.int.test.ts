import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { FileObjectStorage } from '@platform/object-storage';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import { ContractEndings } from '../src/contracts/endings';
import type { Inventory } from '../src/contracts/inventory';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any;
const inventory: Inventory = { cluster: async () => undefined, clustersByUid: async () => new Map(), clustersOf: async () => [] };

// A contract that ends stops being active with no write: its end is announced as a write would be, so what readers keep
// of the active contracts is dropped at that moment, not a cache lifetime later.
describe('contract endings', () => {
  let db: Database;
  let dir: string;
  let contracts: Contracts;
  let endings: ContractEndings | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-endings-'));
    db = await openDatabase({ dataDir: dir, schema: 'contracts' });
    await db.migrate(migrations);
    contracts = createContracts(db, new FileObjectStorage(dir), inventory, quiet);
  });
  afterAll(async () => {
    endings?.stop();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('announces once the next contract ends, and not before', async () => {
    const ends = Math.floor(Date.now() / 1000) + 2;
    await contracts.lifecycle.create({
      ownerId: 1,
      ownerLogin: 'owner-1',
      ownerType: 'organization',
      products: ['productdb'],
      fields: { features: [], featuresGiven: false, endUnix: ends },
      actor: 'root',
    });
    const announced: number[] = [];
    endings = new ContractEndings(db, async () => void announced.push(Date.now()), quiet);
    await endings.schedule();
    expect(announced).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, ends * 1000 - Date.now() + 2_500));
    expect(announced).toHaveLength(1);
    expect(announced[0]).toBeGreaterThanOrEqual(ends * 1000);
    expect((await contracts.listing.list({ ownerId: 1, activeOnly: true })).length).toBe(0);
  }, 15_000);
});
