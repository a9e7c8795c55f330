import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { IngestionStore } from '../src/ingestion/ingestion-store';
import { sampleRows } from '../src/ingestion/ingestion';
import { usageOf } from '../src/usage/usage';
import { testCluster } from './agent-reports';

describe('usage of a product on clusters over a period (contract quotas)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const cluster = testCluster();
  const H = 3_600_000;
  const t0 = Date.UTC(2026, 5, 1);

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    const store = IngestionStore.create(db);
    await db.transaction(async (trx) => {
      // Two hours measured: 250 millicores and 0.5 GiB used; then two hours not measured: the requests count.
      await store.insertUsageSamples(sampleRows(cluster.sample(t0, t0 + 2 * H)), trx);
      await store.insertUsageSamples(
        sampleRows(
          cluster.sample(t0 + 2 * H, t0 + 4 * H, {
            resources: [
              { resource: 'cpu', request: 500, limit: 1000, used: 0 },
              { resource: 'memory', request: 2 ** 30, limit: 0, used: 0 },
            ],
          }),
        ),
        trx,
      );
    });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const usage = (startMs: number, endMs: number, clusters: string[] = [cluster.clusterUID], product = 'productdb') =>
    usageOf(db, { product, clusterUids: clusters, startUnix: startMs / 1000, endUnix: endMs / 1000 });

  it('weighs each sample by its hours in the period, using the request where use was not measured', async () => {
    const all = await usage(t0, t0 + 4 * H);
    expect(all.objectHours).toBeCloseTo(4);
    expect(all.cpuCoreHours).toBeCloseTo(2 * 0.25 + 2 * 0.5);
    expect(all.memoryGibHours).toBeCloseTo(2 * 0.5 + 2 * 1);
    // Storage: 10 GiB requested, not measured, for the first two hours; the second sample reports no storage.
    expect(all.storageGibHours).toBeCloseTo(20);
    // Half of the first sample only.
    expect((await usage(t0 + H, t0 + 2 * H)).cpuCoreHours).toBeCloseTo(0.25);
  });

  it('counts nothing for other clusters or products, or no clusters', async () => {
    expect((await usage(t0, t0 + 4 * H, ['0b7d4c1e-0000-4000-8000-000000000001'])).objectHours).toBe(0);
    expect((await usage(t0, t0 + 4 * H, [cluster.clusterUID], 'productvault')).objectHours).toBe(0);
    expect((await usage(t0, t0 + 4 * H, [])).objectHours).toBe(0);
    await expect(usage(t0, t0 + 4 * H, ['nope'])).rejects.toThrow(/UUID/);
  });
});
