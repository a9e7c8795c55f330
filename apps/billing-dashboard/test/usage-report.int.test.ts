import { openDatabase, type Database } from '@platform/db';
import { agentV1, type usageReportV1 } from '@platform/proto';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { IngestionStore } from '../src/ingestion/ingestion-store';
import { sampleRows } from '../src/ingestion/ingestion';
import { UsageReports } from '../src/usage-report/usage-report';
import { testCluster } from './agent-reports';

/**
 * The usage-report views over a few samples whose numbers are worked out by hand below, one of them
 * crossing the September/October boundary (ingestion splits it, so each month gets its share).
 */
describe('usage reports', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let reports: UsageReports;
  const a = testCluster();
  const b = testCluster();
  const H = 3_600_000;
  const GIB = 2 ** 30;
  const O1 = '0a000000-0000-4000-8000-000000000001';
  const O2 = '0a000000-0000-4000-8000-000000000002';
  const O3 = '0a000000-0000-4000-8000-000000000003';
  const O4 = '0a000000-0000-4000-8000-000000000004';
  const NS_DB = '0b000000-0000-4000-8000-000000000001';
  const oct1 = Date.UTC(2026, 9, 1);
  const bigger = [
    { resource: 'cpu', request: 1000, limit: 2000, used: 0 },
    { resource: 'memory', request: 2 * GIB, limit: 0, used: 0 },
    { resource: 'storage', request: 20 * GIB, limit: 0, used: 0 },
  ];

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    reports = new UsageReports(db);
    const store = IngestionStore.create(db);
    // Default resources (testCluster): 0.25 cores used, 0.5 GiB memory used, 10 GiB storage requested (not measured).
    // Per hour: 0.25 core-hours, 0.5 GiB-hours of memory, 10 GiB-hours of storage.
    const samples: agentV1.UsageSample[] = [
      // O1 (pg-1, cluster mode, 3 replicas) on gks cluster A under contract 5: 8 h across the month boundary (4 h in
      // September, 4 h in October), then 6 h in October with a bigger quota (1 core, 2 GiB, 20 GiB; nothing measured).
      a.sample(oct1 - 4 * H, oct1 + 4 * H, { objectUid: O1, hosting: 'gks', contractId: 5, namespaceUid: NS_DB }),
      a.sample(oct1 + 4 * H, oct1 + 10 * H, { objectUid: O1, hosting: 'gks', contractId: 5, namespaceUid: NS_DB, resources: bigger }),
      // O2 (mysql-1, standalone) on A, namespace shop: 2 h on October 2.
      a.sample(oct1 + 24 * H, oct1 + 26 * H, {
        objectUid: O2,
        hosting: 'gks',
        contractId: 5,
        namespace: 'shop',
        namespaceUid: '0b000000-0000-4000-8000-000000000002',
        kind: 'MySQL',
        name: 'mysql-1',
        topology: agentV1.Topology.TOPOLOGY_STANDALONE,
        replicas: 1,
      }),
      // O3 (a standalone Postgres) on aws cluster B, no contract: 4 h on October 3.
      b.sample(oct1 + 48 * H, oct1 + 52 * H, {
        objectUid: O3,
        clusterName: 'hub-2',
        namespaceUid: NS_DB,
        name: 'pg-2',
        topology: agentV1.Topology.TOPOLOGY_STANDALONE,
        replicas: 1,
      }),
      // O4, a backup configuration on A, namespace db: 2 h on October 1.
      a.sample(oct1, oct1 + 2 * H, {
        objectUid: O4,
        product: 'productbackup',
        hosting: 'gks',
        contractId: 5,
        namespaceUid: NS_DB,
        group: 'stash.appscode.com',
        kind: 'BackupConfiguration',
        name: 'backup-1',
      }),
    ];
    await db.transaction(async (trx) => {
      for (const s of samples) await store.insertUsageSamples(sampleRows(s), trx);
    });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const view = async (v: Partial<usageReportV1.UsageViewRequest>) =>
    JSON.parse(
      await reports.view({
        year: 2026,
        month: 10,
        product: 'productdb',
        view: 'clusters-usage-view',
        viewType: '',
        group: '',
        kind: '',
        clusterUid: '',
        namespace: '',
        namespaceUid: '',
        objectId: '',
        ...v,
      }),
    );
  const q = (cpu: number, memory: number, storage: number, hours: number) => ({
    cpuCoreHours: expect.closeTo(cpu, 6),
    memoryGiBHours: expect.closeTo(memory, 6),
    storageGiBHours: expect.closeTo(storage, 6),
    objectHours: expect.closeTo(hours, 6),
  });

  it('lists the months with samples per year, oldest first', async () => {
    expect(await reports.generatedMonths()).toEqual([
      { year: 2026, month: 9 },
      { year: 2026, month: 10 },
    ]);
  });

  it('clusters-usage-view: each cluster of the month, biggest first, with the month share of the crossing sample', async () => {
    // A in October: O1 4 h (1 core-hour) + 6 h at 1 core (6) + O2 2 h (0.5) = 7.5 core-hours;
    // memory 2 + 12 + 1 = 15; storage 40 + 120 + 20 = 180; 12 object-hours.
    const oct = await view({});
    expect(oct).toMatchObject({ month: '2026-10', product: 'productdb', view: 'clusters-usage-view', viewType: 'summary' });
    expect(oct.rows).toEqual([
      { clusterUID: a.clusterUID, clusterName: 'hub-1', hosting: 'gks', namespaces: 2, objects: 2, ...q(7.5, 15, 180, 12) },
      { clusterUID: b.clusterUID, clusterName: 'hub-2', hosting: 'aws', namespaces: 1, objects: 1, ...q(1, 2, 40, 4) },
    ]);
    expect(oct.totals).toEqual({ rows: 2, ...q(8.5, 17, 220, 16) });
    // September holds only the first 4 hours of the crossing sample.
    expect((await view({ month: 9 })).rows).toEqual([expect.objectContaining({ clusterUID: a.clusterUID, ...q(1, 2, 40, 4) })]);
    // contractID 0: usage billed under no contract (cluster B); group and kind filters.
    expect((await view({ contractId: 0 })).rows.map((r: { clusterUID: string }) => r.clusterUID)).toEqual([b.clusterUID]);
    expect((await view({ kind: 'MySQL' })).totals).toEqual({ rows: 1, ...q(0.5, 1, 20, 2) });
    expect((await view({ group: 'nope' })).rows).toEqual([]);
    // Other products have their own rows: the backup configuration only.
    expect((await view({ product: 'productbackup' })).rows).toEqual([
      expect.objectContaining({ clusterUID: a.clusterUID, ...q(0.5, 1, 20, 2) }),
    ]);
  });

  it('view_type daily adds each row its quantities per UTC day', async () => {
    const rows = (await view({ viewType: 'daily' })).rows;
    expect(rows[0].daily).toEqual([
      { date: '2026-10-01', ...q(7, 14, 160, 10) },
      { date: '2026-10-02', ...q(0.5, 1, 20, 2) },
    ]);
    expect(rows[1].daily).toEqual([{ date: '2026-10-03', ...q(1, 2, 40, 4) }]);
    await expect(view({ viewType: 'weekly' })).rejects.toThrow(/view_type/);
  });

  it('objects-usage-view: one row per object with its identity, filtered by kind, cluster and namespace', async () => {
    const rows = (await view({ view: 'objects-usage-view', kind: 'Postgres' })).rows;
    expect(rows).toEqual([
      expect.objectContaining({
        clusterUID: a.clusterUID,
        objectID: O1,
        name: 'pg-1',
        namespace: 'db',
        namespaceUID: NS_DB,
        topology: 'CLUSTER',
        replicas: 3,
        firstSampleAt: '2026-10-01T00:00:00Z',
        lastSampleAt: '2026-10-01T10:00:00Z',
        ...q(7, 14, 160, 10),
      }),
      expect.objectContaining({ clusterUID: b.clusterUID, objectID: O3, ...q(1, 2, 40, 4) }),
    ]);
    expect(
      (await view({ view: 'objects-usage-view', clusterUid: a.clusterUID, namespace: 'shop' })).rows.map((r: { name: string }) => r.name),
    ).toEqual(['mysql-1']);
    expect((await view({ view: 'objects-usage-view', namespaceUid: NS_DB })).totals.rows).toBe(2);
  });

  it('namespaces-, gks- and contracts-usage-view', async () => {
    expect((await view({ view: 'namespaces-usage-view', clusterUid: a.clusterUID })).rows).toEqual([
      expect.objectContaining({ namespace: 'db', namespaceUID: NS_DB, objects: 1, ...q(7, 14, 160, 10) }),
      expect.objectContaining({ namespace: 'shop', objects: 1, ...q(0.5, 1, 20, 2) }),
    ]);
    // Only cluster A runs on gks.
    expect((await view({ view: 'gks-usage-view' })).rows).toEqual([
      { clusterUID: a.clusterUID, clusterName: 'hub-1', namespaces: 2, objects: 2, ...q(7.5, 15, 180, 12) },
    ]);
    expect((await view({ view: 'contracts-usage-view' })).rows).toEqual([
      { contractID: 5, clusters: 1, objects: 2, ...q(7.5, 15, 180, 12) },
      { contractID: 0, clusters: 1, objects: 1, ...q(1, 2, 40, 4) },
    ]);
  });

  it('object-quota-history-summaries-view: per object its quota states and peaks; per object its quota periods', async () => {
    const rows = (await view({ view: 'object-quota-history-summaries-view' })).rows;
    const o1 = rows.find((r: { objectID: string }) => r.objectID === O1);
    expect(o1).toMatchObject({
      quotaStates: 2,
      cpu: { maxRequest: 1000, maxLimit: 2000, peakUsed: 250 },
      storage: { maxRequest: 20 * GIB },
    });
    expect(rows.find((r: { objectID: string }) => r.objectID === O2).quotaStates).toBe(1);

    const item = await view({ view: 'object-quota-history-summaries-view', clusterUid: a.clusterUID, objectId: O1 });
    expect(item.object).toMatchObject({ objectID: O1, name: 'pg-1', clusterName: 'hub-1' });
    expect(item.quotaPeriods).toEqual([
      expect.objectContaining({ from: '2026-10-01T00:00:00Z', to: '2026-10-01T04:00:00Z', hours: 4, cpu: { request: 500, limit: 1000 } }),
      expect.objectContaining({ from: '2026-10-01T04:00:00Z', to: '2026-10-01T10:00:00Z', hours: 6, cpu: { request: 1000, limit: 2000 } }),
    ]);
    expect(item.samples).toHaveLength(2);
    expect(item.samples[0]).toMatchObject({ start: '2026-10-01T00:00:00Z', replicas: 3, cpu: { request: 500, limit: 1000, used: 250 } });
    await expect(view({ view: 'object-quota-history-summaries-view', clusterUid: b.clusterUID, objectId: O1 })).rejects.toThrow(
      /no samples/,
    );
  });

  it('object quota history across months: the two parts of the crossing sample make one quota period', async () => {
    const h = JSON.parse(await reports.objectQuotaHistory(a.clusterUID, O1));
    expect(h.quotaPeriods.map((p: { from: string; hours: number }) => [p.from, p.hours])).toEqual([
      ['2026-09-30T20:00:00Z', 8],
      ['2026-10-01T04:00:00Z', 6],
    ]);
    expect(h.samples).toHaveLength(3);
    await expect(reports.objectQuotaHistory(a.clusterUID, O3)).rejects.toThrow(/no samples/);
    await expect(reports.objectQuotaHistory('nope', O1)).rejects.toThrow(/UUID/);
  });

  it('objects-cluster-mode-usage-view: objects in cluster topology with replica-hours; one object per day', async () => {
    expect((await view({ view: 'objects-cluster-mode-usage-view' })).rows).toEqual([
      expect.objectContaining({ objectID: O1, topology: 'CLUSTER', replicas: 3, replicaHours: 30, ...q(7, 14, 160, 10) }),
    ]);
    const item = await view({ view: 'objects-cluster-mode-usage-view', clusterUid: a.clusterUID, objectId: O1 });
    expect(item).toMatchObject({ objectID: O1, month: '2026-10', daily: [{ date: '2026-10-01', ...q(7, 14, 160, 10) }] });
  });

  it('refuses unknown products, views a product does not have, and bad filters', async () => {
    await expect(view({ product: 'productx' })).rejects.toThrow(/unknown product key/);
    await expect(view({ product: 'productvault', view: 'objects-usage-view' })).rejects.toThrow(/has no objects-usage-view/);
    await expect(view({ view: 'nope-view' })).rejects.toThrow(/unknown view/);
    await expect(view({ clusterUid: 'nope' })).rejects.toThrow(/UUID/);
    await expect(view({ month: 13 })).rejects.toThrow(/month/);
  });

  it('namespace billing: the namespaces of the given clusters per month; one namespace with its objects', async () => {
    const list = JSON.parse(await reports.namespaceBilling({ clusterUids: [a.clusterUID], clusterUid: '', namespace: '' }));
    expect(list.rows).toEqual([
      expect.objectContaining({
        clusterUID: a.clusterUID,
        namespace: 'db',
        objects: 2,
        products: ['productbackup', 'productdb'],
        // O1 in both months (1 + 7 core-hours) and O4 (0.5).
        ...q(8.5, 17, 220, 16),
        months: [
          { month: '2026-09', ...q(1, 2, 40, 4) },
          { month: '2026-10', ...q(7.5, 15, 180, 12) },
        ],
      }),
      expect.objectContaining({ namespace: 'shop', ...q(0.5, 1, 20, 2) }),
    ]);
    const one = JSON.parse(await reports.namespaceBilling({ clusterUids: [a.clusterUID], clusterUid: a.clusterUID, namespace: 'db' }));
    expect(one).toMatchObject({ clusterUID: a.clusterUID, namespace: 'db' });
    expect(one.rows.map((r: { objectID: string; product: string }) => [r.objectID, r.product])).toEqual([
      [O1, 'productdb'],
      [O4, 'productbackup'],
    ]);
    // Cluster B is not among the organization's clusters.
    await expect(reports.namespaceBilling({ clusterUids: [a.clusterUID], clusterUid: b.clusterUID, namespace: 'db' })).rejects.toThrow(
      /not one of/,
    );
    expect(JSON.parse(await reports.namespaceBilling({ clusterUids: [], clusterUid: '', namespace: '' })).rows).toEqual([]);
  });

  it('quota history: a quota that comes back after another starts a period of its own, and asking again answers the same', async () => {
    // O5 on cluster B in December (no other test reads that month): 2 h at the default quota, 1 h bigger, 3 h default.
    const O5 = '0a000000-0000-4000-8000-000000000005';
    const dec1 = Date.UTC(2026, 11, 1);
    const store = IngestionStore.create(db);
    const o5 = { objectUid: O5, name: 'pg-5', namespaceUid: NS_DB };
    const samples = [
      b.sample(dec1, dec1 + 2 * H, o5),
      b.sample(dec1 + 2 * H, dec1 + 3 * H, { ...o5, resources: bigger }),
      b.sample(dec1 + 3 * H, dec1 + 6 * H, o5),
    ];
    await db.transaction(async (trx) => {
      for (const s of samples) await store.insertUsageSamples(sampleRows(s), trx);
    });
    const history = async () => view({ month: 12, view: 'object-quota-history-summaries-view', clusterUid: b.clusterUID, objectId: O5 });
    const first = await history();
    expect(first.quotaPeriods.map((p: { from: string; to: string; hours: number; cpu: object }) => [p.from, p.to, p.hours, p.cpu])).toEqual(
      [
        ['2026-12-01T00:00:00Z', '2026-12-01T02:00:00Z', 2, { request: 500, limit: 1000 }],
        ['2026-12-01T02:00:00Z', '2026-12-01T03:00:00Z', 1, { request: 1000, limit: 2000 }],
        ['2026-12-01T03:00:00Z', '2026-12-01T06:00:00Z', 3, { request: 500, limit: 1000 }],
      ],
    );
    expect(first.samples.map((x: { start: string; end: string }) => `${x.start}/${x.end}`)).toEqual([
      '2026-12-01T00:00:00Z/2026-12-01T02:00:00Z',
      '2026-12-01T02:00:00Z/2026-12-01T03:00:00Z',
      '2026-12-01T03:00:00Z/2026-12-01T06:00:00Z',
    ]);
    expect(first.samples[1]).toEqual({
      start: '2026-12-01T02:00:00Z',
      end: '2026-12-01T03:00:00Z',
      replicas: 3,
      cpu: { request: 1000, limit: 2000, used: 0 },
      memory: { request: 2 * GIB, limit: 0, used: 0 },
      storage: { request: 20 * GIB, limit: 0, used: 0 },
    });
    // The statement is prepared on the connection: later runs (other plans may follow the fifth) answer the same.
    for (let i = 0; i < 6; i++) expect(await history()).toEqual(first);
  });
});
