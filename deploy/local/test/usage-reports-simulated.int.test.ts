import {
  billingDashboardApp,
  keepAllPoints,
  rollUpSamples,
  rollUpSamplesByMonth,
  sampleRows,
  toSampleColumns,
} from '@platform/app-billing-dashboard';
import type { Database } from '@platform/db';
import { PRODUCT_KEYS, USAGE_VIEWS, usageReportV1, type agentV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { buildWorld, DEFAULTS, messagesOf } from '@platform/simulator';
import { DEMO } from '../src/demo-seed';

// billing-dashboard's usage reports (docs/usage-reports.md) over the demo's simulated world (the demo seed's hub, three
// managed clusters and three months of the four products' usage samples), its samples stored and rolled up by
// ingestion's own mapping and statements as bench/usage-reports.ts loads them: every view answers rows for a whole
// month, naming the world's clusters and objects, and its filters, daily series and quota histories hold on them.
// The views' numbers worked out by hand: apps/billing-dashboard/test/usage-report.int.test.ts.

const MONTH = { year: 2026, month: 10 };
/** Every view: each is productdb's. */
const DB_VIEWS = Object.keys(USAGE_VIEWS);
const NO_SUCH_OBJECT = '0a0b0c0d-0000-4000-8000-000000000000';
// Ends in mid-November: August to November have samples, September and October whole.
const world = buildWorld({ ...DEMO, sampleHours: DEFAULTS.sampleHours, userIds: [10], nowMs: Date.UTC(2026, 10, 15) });
const hub = world.hubs[0];
/** The demo manifest's object: the hub's first. */
const object = hub.objects[0];
const ours = [hub, ...hub.spokes].map((c) => c.state.uid);

/** Stores the world's usage samples and rolls them up as ingestion does. */
async function loadSamples(db: Database): Promise<void> {
  const rows = [...messagesOf(world)]
    .filter((m) => m.kind === 'usage-sample')
    .flatMap((m) => sampleRows(m.payload as agentV1.UsageSample).map(toSampleColumns));
  for (let i = 0; i < rows.length; i += 1000) await db.table('usage_samples').insert(rows.slice(i, i + 1000));
  for (const sql of [rollUpSamples('??.usage_samples'), rollUpSamplesByMonth('??.usage_samples'), keepAllPoints()])
    await db.knex.raw(sql.replaceAll('??', db.schema));
}

describe('usage reports on the demo’s simulated data', () => {
  let app: AppUnderTest;
  let client: PromiseClient<typeof usageReportV1.UsageReportServiceService>;

  beforeAll(async () => {
    app = await startAppForTest(billingDashboardApp);
    await loadSamples(app.running.ctx.db!);
    client = createClient(usageReportV1.UsageReportServiceService, app.address, { name: 'billing-dashboard' });
  });
  afterAll(async () => {
    client?.close();
    await app?.stop();
  });

  const text = async (chunks: AsyncIterable<{ json: Uint8Array }>) => {
    const parts: Uint8Array[] = [];
    for await (const c of chunks) parts.push(c.json);
    return JSON.parse(Buffer.concat(parts).toString('utf8'));
  };
  const view = (product: string, name: string, more: Partial<usageReportV1.UsageViewRequest> = {}) =>
    text(client.getUsageView(usageReportV1.UsageViewRequest.fromPartial({ ...MONTH, product, view: name, ...more })));
  const namespaces = (clusterUids: string[], clusterUid = '', namespace = '') =>
    text(client.getNamespaceBilling({ clusterUids, clusterUid, namespace }));

  it('the months with samples, oldest first', async () => {
    expect((await client.generatedMonths({})).months).toEqual([8, 9, 10, 11].map((month) => ({ year: 2026, month })));
  });

  it("answers every view of productdb with rows for the month, naming the world's object and clusters", async () => {
    for (const name of DB_VIEWS) {
      const body = await view('productdb', name);
      expect({ name, month: body.month, some: body.rows.length > 0, totals: body.totals.rows }).toEqual({
        name,
        month: '2026-10',
        some: true,
        totals: body.rows.length,
      });
    }
    const row = (await view('productdb', 'objects-usage-view')).rows.find((r: any) => r.objectID === object.uid);
    expect(row).toMatchObject({ clusterUID: hub.state.uid, namespace: object.namespace });
    expect(row.cpuCoreHours).toBeGreaterThan(0);
    expect(row.objectHours).toBeGreaterThan(0);
    const clusters = (await view('productdb', 'clusters-usage-view')).rows;
    // The hub and its three spokes each run a database.
    expect(clusters.map((c: any) => c.clusterUID).sort()).toEqual([...ours].sort());
    // The gks view holds the clusters hosted on gks only.
    const gks = (await view('productdb', 'gks-usage-view')).rows.map((r: any) => r.clusterUID);
    expect(gks.length).toBeGreaterThan(0);
    expect(clusters.filter((c: any) => c.hosting === 'gks').map((c: any) => c.clusterUID)).toEqual(gks);
    for (const r of (await view('productdb', 'objects-cluster-mode-usage-view')).rows) expect(r.topology).toBe('CLUSTER');
  });

  it('answers the clusters and contracts views of the other three products with rows', async () => {
    for (const product of PRODUCT_KEYS.slice(1)) {
      for (const name of ['clusters-usage-view', 'contracts-usage-view']) {
        const body = await view(product, name);
        expect({ product, name, some: body.rows.length > 0, totals: body.totals.cpuCoreHours > 0 }).toEqual({
          product,
          name,
          some: true,
          totals: true,
        });
      }
    }
  });

  it('filters by cluster, namespace, kind, group and contract; daily series that sum to their rows', async () => {
    const cid = hub.state.uid;
    const inCluster = (await view('productdb', 'objects-usage-view', { clusterUid: cid })).rows;
    expect(inCluster.length).toBeGreaterThan(0);
    expect(inCluster.every((r: any) => r.clusterUID === cid)).toBe(true);
    const inNamespace = (await view('productdb', 'objects-usage-view', { namespace: object.namespace })).rows;
    expect(inNamespace.every((r: any) => r.namespace === object.namespace)).toBe(true);
    const ofKind = (await view('productdb', 'objects-usage-view', { kind: object.kind, group: object.group })).rows;
    expect(ofKind.length > 0 && ofKind.every((r: any) => r.kind === object.kind)).toBe(true);
    expect((await view('productdb', 'objects-usage-view', { group: 'nothing.example.com' })).rows).toEqual([]);
    // Simulated samples are billed under no contract (contract 0).
    expect((await view('productdb', 'clusters-usage-view', { contractId: 0 })).rows.length).toBeGreaterThan(0);
    expect((await view('productdb', 'clusters-usage-view', { contractId: 987654 })).rows).toEqual([]);
    expect((await view('productdb', 'namespaces-usage-view', { clusterUid: cid })).rows.every((r: any) => r.clusterUID === cid)).toBe(true);

    const summary = await view('productdb', 'clusters-usage-view');
    const daily = await view('productdb', 'clusters-usage-view', { viewType: 'daily' });
    expect(daily.viewType).toBe('daily');
    expect(summary.rows[0].daily).toBeUndefined();
    for (const row of daily.rows) {
      expect(row.daily.length).toBeGreaterThan(0);
      for (const p of row.daily) expect(p.date.startsWith('2026-10-')).toBe(true);
      expect(row.daily.reduce((s: number, p: any) => s + p.cpuCoreHours, 0)).toBeCloseTo(row.cpuCoreHours, 6);
    }
    // The same rows, with the same quantities (up to float rounding: the daily view sums per-day sums).
    expect(daily.rows.map((r: any) => r.clusterUID)).toEqual(summary.rows.map((r: any) => r.clusterUID));
    daily.rows.forEach((r: any, i: number) => expect(r.cpuCoreHours).toBeCloseTo(summary.rows[i].cpuCoreHours, 6));
  });

  it("an object's quota history over every month, in the month, and in cluster mode; none for an object without samples", async () => {
    const ids = { clusterUid: hub.state.uid, objectId: object.uid };
    const all = JSON.parse(Buffer.from((await client.getObjectQuotaHistory(ids)).json).toString('utf8'));
    expect(all.object).toMatchObject({ clusterUID: hub.state.uid, objectID: object.uid, namespace: object.namespace });
    expect(all.quotaPeriods.length).toBeGreaterThan(1);
    expect(all.samples.length).toBeGreaterThan(all.quotaPeriods.length);
    expect(all.samples[0].cpu).toEqual({ request: expect.any(Number), limit: expect.any(Number), used: expect.any(Number) });

    const month = await view('productdb', 'object-quota-history-summaries-view', ids);
    expect(month.samples.length).toBeGreaterThan(0);
    expect(month.samples.length).toBeLessThan(all.samples.length);
    for (const s of month.samples) expect(s.start.startsWith('2026-10-')).toBe(true);

    const clustered = (await view('productdb', 'objects-cluster-mode-usage-view')).rows[0];
    const mode = await view('productdb', 'objects-cluster-mode-usage-view', {
      clusterUid: clustered.clusterUID,
      objectId: clustered.objectID,
    });
    expect(mode).toMatchObject({ objectID: clustered.objectID, month: '2026-10', replicas: clustered.replicas });
    expect(mode.daily.length).toBeGreaterThan(0);
    for (const d of mode.daily) expect(d.date.startsWith('2026-10-')).toBe(true);

    const none = { clusterUid: hub.state.uid, objectId: NO_SUCH_OBJECT };
    await expect(client.getObjectQuotaHistory(none)).rejects.toMatchObject({ kind: 'not-found' });
    await expect(view('productdb', 'object-quota-history-summaries-view', none)).rejects.toMatchObject({ kind: 'not-found' });
  });

  it("namespace billing: each namespace of the organization's clusters per month, and one namespace", async () => {
    const report = await namespaces(ours);
    expect(report.rows.length).toBeGreaterThan(0);
    expect(report.rows.every((r: any) => ours.includes(r.clusterUID))).toBe(true);
    const demo = report.rows.find((r: any) => r.clusterUID === hub.state.uid && r.namespace === object.namespace);
    expect(demo.months.map((m: any) => m.month)).toContain('2026-10');
    expect(demo.products).toContain(object.product);

    const one = await namespaces(ours, hub.state.uid, object.namespace);
    expect(one).toMatchObject({ clusterUID: hub.state.uid, namespace: object.namespace });
    expect(one.rows.map((r: any) => r.objectID)).toContain(object.uid);
    expect(one.totals.cpuCoreHours).toBeCloseTo(demo.cpuCoreHours, 6);
    // An organization without clusters has an empty report.
    expect((await namespaces([])).rows).toEqual([]);
  });
});
