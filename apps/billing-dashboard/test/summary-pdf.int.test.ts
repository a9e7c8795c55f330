import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '@platform/db';
import { InputError } from '@platform/errors';
import type { agentV1 } from '@platform/proto';
import { createTestDatabase, pdfText } from '@platform/testing';
import { migrations } from '../migrations';
import { IngestionStore } from '../src/ingestion/ingestion-store';
import { sampleRows } from '../src/ingestion/ingestion';
import { usageSummaryService } from '../src/summary/service';
import { renderSummaryPdf, summaryFileName } from '../src/summary/summary-pdf';
import { SUMMARY_LIMITS, UsageSummary } from '../src/summary/usage-summary';
import { testCluster } from './agent-reports';

describe('the PDF usage summary of a month (docs/usage-summary-pdf.md)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let summaries: UsageSummary;
  const H = 3_600_000;
  const oct = Date.UTC(2026, 9, 1);
  const dec = Date.UTC(2026, 11, 1);
  const hub = testCluster();
  const spoke = testCluster();
  const meta = { generatedAt: new Date(Date.UTC(2026, 10, 2, 9, 30)), siteName: 'Acme Platform', deploymentType: 'Hosted' };

  /** A sample of `cores` cores used (0.5 GiB memory, 10 GiB storage requested) over [from, to). */
  const sample = (
    cluster: ReturnType<typeof testCluster>,
    from: number,
    to: number,
    cores: number,
    over: Partial<agentV1.UsageSample> = {},
  ): agentV1.UsageSample =>
    cluster.sample(from, to, {
      resources: [
        { resource: 'cpu', request: 4000, limit: 0, used: Math.round(cores * 1000) },
        { resource: 'memory', request: 2 ** 30, limit: 0, used: 2 ** 29 },
        { resource: 'storage', request: 10 * 2 ** 30, limit: 0, used: 0 },
      ],
      ...over,
    });
  const PG1 = { objectUid: randomUUID(), name: 'pg-1', kind: 'Postgres' };

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    summaries = new UsageSummary(db);
    const samples = [
      // hub/db: pg-1 across midnight of the 1st, under an old cluster name and version, then renamed and upgraded.
      sample(hub, oct + 22 * H, oct + 26 * H, 0.25, { ...PG1, clusterName: 'hub-old', version: '16.3' }),
      sample(hub, oct + 26 * H, oct + 30 * H, 0.25, { ...PG1, clusterName: 'hub-1', version: '16.4' }),
      // hub/db: mysql-1, 10 h at 1 core on the 3rd.
      sample(hub, oct + 48 * H, oct + 58 * H, 1, { objectUid: randomUUID(), name: 'mysql-1', kind: 'MySQL', version: '8.4' }),
      // hub/cache: redis-1, 2 h at 0.5 core on the 15th.
      sample(hub, oct + 14 * 24 * H, oct + 14 * 24 * H + 2 * H, 0.5, {
        objectUid: randomUUID(),
        name: 'redis-1',
        kind: 'Redis',
        namespace: 'cache',
      }),
      // spoke/db: pg-2 from 23:00 on September 30th: only its first hour of October counts.
      sample(spoke, oct - H, oct + H, 2, { objectUid: randomUUID(), name: 'pg-2', clusterName: 'spoke-1' }),
      // Not productdb, and not October: left out.
      sample(hub, oct + 100 * H, oct + 200 * H, 8, { objectUid: randomUUID(), product: 'productvault' }),
      sample(hub, Date.UTC(2026, 10, 3), Date.UTC(2026, 10, 4), 8, { objectUid: randomUUID() }),
    ];
    // December: more namespaces and objects than the document lists.
    const many = testCluster();
    for (let i = 0; i < SUMMARY_LIMITS.namespaces + 2; i++)
      samples.push(
        sample(many, dec, dec + H, 1 + i / 100, { objectUid: randomUUID(), namespace: `ns-${i}`, name: `db-${i}`, clusterName: 'many' }),
      );
    for (const [namespace, cores] of [
      ['big', 10],
      ['big2', 5],
    ] as const)
      for (let i = 0; i < SUMMARY_LIMITS.objectsPerNamespace + 2; i++)
        samples.push(
          sample(many, dec, dec + H, cores + i, { objectUid: randomUUID(), namespace, name: `${namespace}-${i}`, clusterName: 'many' }),
        );
    const store = IngestionStore.create(db);
    await db.transaction((trx) => store.insertUsageSamples(samples.flatMap(sampleRows), trx));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('totals the month by SQL: every object hour once, other products and months left out', async () => {
    const s = await summaries.month(2026, 10);
    expect(s.totals).toEqual({
      clusters: 2,
      namespaces: 3,
      objects: 4,
      cpuCoreHours: expect.closeTo(8 * 0.25 + 10 * 1 + 2 * 0.5 + 1 * 2, 6),
      memoryGibHours: expect.closeTo((8 + 10 + 2 + 1) * 0.5, 6),
      storageGibHours: expect.closeTo((8 + 10 + 2 + 1) * 10, 6),
    });
    expect(s.otherNamespaces).toBeUndefined();
  });

  it('tables each cluster and namespace, most core-hours first, with the names and versions last reported', async () => {
    const s = await summaries.month(2026, 10);
    expect(s.namespaces.map((n) => [n.clusterName, n.namespace, n.subtotal.objects])).toEqual([
      ['hub-1', 'db', 2],
      ['spoke-1', 'db', 1],
      ['hub-1', 'cache', 1],
    ]);
    const [hubDb] = s.namespaces;
    expect(hubDb.clusterUid).toBe(hub.clusterUID);
    expect(hubDb.objects.map((o) => [o.kind, o.name, o.version])).toEqual([
      ['MySQL', 'mysql-1', '8.4'],
      ['Postgres', 'pg-1', '16.4'],
    ]);
    expect(hubDb.objects[1].cpuCoreHours).toBeCloseTo(2);
    expect(hubDb.subtotal.cpuCoreHours).toBeCloseTo(12);
    expect(hubDb.otherObjects).toBeUndefined();
  });

  it('charts core-hours per day, splitting a sample at midnight', async () => {
    const { dailyCoreHours: daily } = await summaries.month(2026, 10);
    expect(daily).toHaveLength(31);
    expect(daily[0]).toBeCloseTo(2 * 0.25 + 1 * 2);
    expect(daily[1]).toBeCloseTo(6 * 0.25);
    expect(daily[2]).toBeCloseTo(10);
    expect(daily[14]).toBeCloseTo(1);
    expect(daily.reduce((a, b) => a + b, 0)).toBeCloseTo(15);
  });

  it('bounds what it lists: the rest of a namespace and of the month in "other" rows, the totals still whole', async () => {
    const s = await summaries.month(2026, 12);
    expect(s.namespaces).toHaveLength(SUMMARY_LIMITS.namespaces);
    const big = s.namespaces[0];
    expect(big.namespace).toBe('big');
    expect(big.objects).toHaveLength(SUMMARY_LIMITS.objectsPerNamespace);
    expect(big.objects[0].name).toBe(`big-${SUMMARY_LIMITS.objectsPerNamespace + 1}`);
    // The two with the fewest core-hours: big-0 and big-1.
    expect(big.otherObjects).toEqual({ objects: 2, cpuCoreHours: expect.closeTo(21, 6), memoryGibHours: 1, storageGibHours: 20 });
    expect(s.namespaces[1]).toMatchObject({ namespace: 'big2', otherObjects: { objects: 2 } });
    // 44 namespaces in all; the four smallest (ns-0 .. ns-3) are summed.
    expect(s.otherNamespaces).toMatchObject({ namespaces: 4, objects: 4, cpuCoreHours: expect.closeTo(4.06, 6) });
    const listed = s.namespaces.reduce((sum, n) => sum + n.subtotal.cpuCoreHours, 0) + s.otherNamespaces!.cpuCoreHours;
    expect(s.totals.cpuCoreHours).toBeCloseTo(listed);
    expect(s.totals).toMatchObject({
      clusters: 1,
      namespaces: SUMMARY_LIMITS.namespaces + 4,
      objects: SUMMARY_LIMITS.namespaces + 2 + 2 * (SUMMARY_LIMITS.objectsPerNamespace + 2),
    });
  });

  it('renders a PDF whose text names the month, the product, the site and the clusters, with the totals', async () => {
    const pdf = await renderSummaryPdf(await summaries.month(2026, 10), meta);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const { pages, info } = await pdfText(pdf);
    const text = pages.join('\n');
    expect(pages[0]).toContain('Usage summary');
    expect(pages[0]).toContain('October 2026');
    expect(pages[0]).toContain('productdb');
    expect(pages[0]).toContain('Site: Acme Platform');
    expect(pages[0]).toContain('Generated 2026-11-02 09:30 UTC');
    expect(pages[0]).toContain('Core-hours per day');
    expect(text).toContain('Cluster hub-1 · namespace db');
    expect(text).toContain('Cluster spoke-1 · namespace db');
    expect(text).toMatch(/MySQL\s+mysql-1\s+8\.4\s+10\.00\s+5\.00\s+100\.00/);
    expect(text).toMatch(/All 4 objects\s+15\.00\s+10\.50\s+210\.00/);
    expect(text).not.toContain('hub-old');
    expect(info).toMatchObject({ Title: 'Usage summary: productdb, October 2026', Author: 'Acme Platform' });
    expect(summaryFileName({ product: 'productdb', year: 2026, month: 10 })).toBe('usage-summary-productdb-2026-10.pdf');
  });

  it('renders a bounded month with its "other" rows and repeats the header on every page of a long table', async () => {
    const pdf = await renderSummaryPdf(await summaries.month(2026, 12), meta);
    const { pages } = await pdfText(pdf);
    const text = pages.join('\n');
    expect(pages.length).toBeGreaterThan(3);
    expect(text).toContain('2 other objects');
    expect(text).toContain('Other clusters and namespaces');
    expect(text).toMatch(/4 namespaces, 4 objects\s+4\.06/);
    // big2's table starts half-way down a page and goes on over the next one.
    expect(text).toContain('Cluster many · namespace big2 (continued)');
    expect(text).not.toMatch(/namespace ns-[0-3]\b/);
    expect(pages.at(-1)).toContain(`page ${pages.length} of ${pages.length}`);
    expect(pdf.length).toBeLessThan(512 * 1024);
  });

  it('says so when the month has no usage', async () => {
    const s = await summaries.month(2025, 1);
    expect(s.totals.objects).toBe(0);
    expect(s.namespaces).toEqual([]);
    const { pages } = await pdfText(await renderSummaryPdf(s, meta));
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('No usage of productdb was reported for January 2025.');
  });

  it('answers the RPC with the document and its file name, naming the site it is asked for and the deployment it runs on', async () => {
    const service = usageSummaryService(summaries, 'Hosted').handlers;
    // The handler reads nothing of its caller.
    const render = (year: number, month: number) => service.renderUsageSummary({ year, month, siteName: 'Acme Cloud' }, {} as never);
    const rendered = await render(2026, 10);
    expect(rendered.fileName).toBe('usage-summary-productdb-2026-10.pdf');
    const { pages, info } = await pdfText(Buffer.from(rendered.pdf));
    expect(pages[0]).toContain('Site: Acme Cloud');
    expect(pages[0]).toContain('Deployment: Hosted');
    expect(info).toMatchObject({ Author: 'Acme Cloud' });
    // Each table names its cluster by UID too, beside the name it last reported.
    expect(pages.join('\n')).toContain(`cluster UID ${hub.clusterUID}`);
    const empty = await render(2001, 1);
    expect(empty.fileName).toBe('usage-summary-productdb-2001-01.pdf');
    expect((await pdfText(Buffer.from(empty.pdf))).pages[0]).toContain('No usage of productdb was reported for January 2001.');
  });

  it('refuses a month outside 1..12 or a year that is not four digits', async () => {
    await expect(summaries.month(2026, 13)).rejects.toBeInstanceOf(InputError);
    await expect(summaries.month(2026, 0)).rejects.toBeInstanceOf(InputError);
    await expect(summaries.month(99, 1)).rejects.toBeInstanceOf(InputError);
  });
});
