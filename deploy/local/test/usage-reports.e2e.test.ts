import { registeredRoutesOn } from '@platform/app-gateway';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The usage reports (docs/usage-reports.md) over HTTP on a billing-enabled deployment seeded with the
 * demo: generated-months, every view of the four products for the manifest's `usage` month (non-empty, naming the
 * manifest's cluster and object where the view has them), the filters and view_type, the object-quota-history
 * rows, namespace billing for the demo organization's owner; 400/401/403/404; and the 404 `{message}` where
 * billing is disabled. Every answer is checked against its row's schema (VALIDATE_RESPONSES in the harness).
 */

type Usage = NonNullable<DemoManifest['usage']>;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const PRODUCTS = ['productdb', 'productbackup', 'productvault', 'productingress'];
const DB_VIEWS = [
  'objects-usage-view',
  'clusters-usage-view',
  'namespaces-usage-view',
  'gks-usage-view',
  'contracts-usage-view',
  'object-quota-history-summaries-view',
  'objects-cluster-mode-usage-view',
];
const NO_SUCH_OBJECT = '0a0b0c0d-0000-4000-8000-000000000000';
const mine = (r: { path: string }) =>
  (r.path.startsWith('/dashboard/summary/') && !r.path.endsWith('/download')) || r.path.startsWith('/dbaas/billing/');

describe('usage reports over HTTP on the demo seed', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let usage: Usage;
  const views = (product: string, year = usage.year, month = usage.month) =>
    `/dashboard/summary/${year}/${month}/usage-report/products/${product}/views`;
  const get = (pathAndQuery: string, who: string | undefined = 'root', org = 'demo') =>
    t.api(who, 'GET', `${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}org=${org}`);
  const ok = async (pathAndQuery: string, who = 'root') => {
    const res = await get(pathAndQuery, who);
    expect({ path: pathAndQuery, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({
      path: pathAndQuery,
      status: 200,
      body: undefined,
    });
    return res.body;
  };
  /** The status as `who` (undefined: anonymous) answers; a refusal must carry a message. */
  const status = async (pathAndQuery: string, who: string | undefined, org = 'demo') => {
    const res = await t.api(who, 'GET', `${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}org=${org}`);
    if (res.status >= 400) expect(typeof res.body?.message).toBe('string');
    return res.status;
  };

  beforeAll(async () => {
    demo = await bootDemoPlatform();
    ({ t, manifest, usage } = demo);
    await t.signUp('mallory');
    // mallory owns an organization of her own, without clusters.
    expect((await t.api('mallory', 'POST', '/orgs', { username: 'mallory-org' })).status).toBe(201);
  }, 600_000);
  afterAll(() => demo?.stop());

  it('generated-months: the manifest month among the months with samples, in calendar order, per year', async () => {
    const { yearMonthList } = await ok('/dashboard/summary/generated-months');
    const name = MONTHS[Number(usage.month) - 1];
    expect(yearMonthList[usage.year]).toContain(name);
    for (const names of Object.values(yearMonthList) as string[][]) {
      const order = names.map((n) => MONTHS.indexOf(n));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    // The demo sends three months of samples: at least three months are listed.
    expect(Object.values(yearMonthList).flat().length).toBeGreaterThanOrEqual(3);
  });

  it('answers every view of productdb with rows for the manifest month, by number or month name', async () => {
    const name = MONTHS[Number(usage.month) - 1];
    for (const view of DB_VIEWS) {
      for (const month of [usage.month, name]) {
        const body = await ok(`${views('productdb', usage.year, month)}/${view}`);
        expect({ view, month: body.month, product: body.product, some: body.rows.length > 0 }).toEqual({
          view,
          month: `${usage.year}-${usage.month}`,
          product: 'productdb',
          some: true,
        });
        expect(body.totals.rows).toBe(body.rows.length);
      }
    }
    const objects = (await ok(`${views('productdb')}/objects-usage-view`)).rows;
    const object = objects.find((r: any) => r.objectID === usage.objectID);
    expect(object).toMatchObject({ clusterUID: usage.cid, namespace: usage.namespace, cpuCoreHours: expect.any(Number) });
    expect(object.cpuCoreHours).toBeGreaterThan(0);
    expect(object.objectHours).toBeGreaterThan(0);
    const clusters = (await ok(`${views('productdb')}/clusters-usage-view`)).rows;
    // The demo hub and its three spokes each run a database.
    expect(clusters.map((c: any) => c.clusterUID).sort()).toEqual([manifest.hub.uid, ...manifest.spokes.map((s) => s.uid)].sort());
    // The gks view holds the clusters hosted on gks only.
    const gks = (await ok(`${views('productdb')}/gks-usage-view`)).rows.map((r: any) => r.clusterUID);
    expect(gks.length).toBeGreaterThan(0);
    expect(clusters.filter((c: any) => c.hosting === 'gks').map((c: any) => c.clusterUID)).toEqual(gks);
    // Cluster mode lists clustered databases only.
    for (const r of (await ok(`${views('productdb')}/objects-cluster-mode-usage-view`)).rows) expect(r.topology).toBe('CLUSTER');
  });

  it('answers the clusters and contracts views of the other three products with rows', async () => {
    for (const product of PRODUCTS.slice(1)) {
      for (const view of ['clusters-usage-view', 'contracts-usage-view']) {
        const body = await ok(`${views(product)}/${view}`);
        expect({ product, view, some: body.rows.length > 0, totals: body.totals.cpuCoreHours > 0 }).toEqual({
          product,
          view,
          some: true,
          totals: true,
        });
      }
    }
  });

  it('filters: clusterUID, namespace, kind, group, contractID; view_type daily adds per-day series that sum to the row', async () => {
    const base = `${views('productdb')}/objects-usage-view`;
    const inCluster = (await ok(`${base}?clusterUID=${usage.cid}`)).rows;
    expect(inCluster.length).toBeGreaterThan(0);
    expect(inCluster.every((r: any) => r.clusterUID === usage.cid)).toBe(true);
    expect((await ok(`${base}?namespace=${usage.namespace}`)).rows.every((r: any) => r.namespace === usage.namespace)).toBe(true);
    const kind = inCluster.find((r: any) => r.objectID === usage.objectID).kind;
    expect((await ok(`${base}?kind=${kind}&group=kubedb.com`)).rows.every((r: any) => r.kind === kind)).toBe(true);
    expect((await ok(`${base}?group=nothing.example.com`)).rows).toEqual([]);
    // Simulated samples are billed under no contract (contract 0).
    expect((await ok(`${views('productdb')}/clusters-usage-view?contractID=0`)).rows.length).toBeGreaterThan(0);
    expect((await ok(`${views('productdb')}/clusters-usage-view?contractID=987654`)).rows).toEqual([]);
    expect(
      (await ok(`${views('productdb')}/namespaces-usage-view?clusterUID=${usage.cid}`)).rows.every((r: any) => r.clusterUID === usage.cid),
    ).toBe(true);

    const summary = await ok(`${views('productdb')}/clusters-usage-view`);
    const daily = await ok(`${views('productdb')}/clusters-usage-view?view_type=daily`);
    expect(daily.viewType).toBe('daily');
    expect(summary.rows[0].daily).toBeUndefined();
    for (const row of daily.rows) {
      expect(row.daily.length).toBeGreaterThan(0);
      for (const p of row.daily) expect(p.date.startsWith(`${usage.year}-${usage.month}-`)).toBe(true);
      const sum = row.daily.reduce((s: number, p: any) => s + p.cpuCoreHours, 0);
      expect(sum).toBeCloseTo(row.cpuCoreHours, 6);
    }
    // The same rows, with the same quantities (up to float rounding: the daily view sums per-day sums).
    expect(daily.rows.map((r: any) => r.clusterUID)).toEqual(summary.rows.map((r: any) => r.clusterUID));
    daily.rows.forEach((r: any, i: number) => expect(r.cpuCoreHours).toBeCloseTo(summary.rows[i].cpuCoreHours, 6));
  });

  it('object quota history: over every month, in the month, and cluster mode of one object', async () => {
    const all = await ok(`/dashboard/summary/object-quota-history/clusters/${usage.cid}/objects/${usage.objectID}`);
    expect(all.object).toMatchObject({ clusterUID: usage.cid, objectID: usage.objectID, namespace: usage.namespace });
    expect(all.quotaPeriods.length).toBeGreaterThan(1);
    expect(all.samples.length).toBeGreaterThan(all.quotaPeriods.length);
    expect(all.samples[0].cpu).toEqual({ request: expect.any(Number), limit: expect.any(Number), used: expect.any(Number) });

    const item = `clusters/${usage.cid}/objects/${usage.objectID}`;
    const month = await ok(`${views('productdb')}/object-quota-history-summaries-view/${item}`);
    expect(month.samples.length).toBeGreaterThan(0);
    expect(month.samples.length).toBeLessThan(all.samples.length);
    for (const s of month.samples) expect(s.start.startsWith(`${usage.year}-${usage.month}-`)).toBe(true);

    const mode = await ok(`${views('productdb')}/objects-cluster-mode-usage-view/${item}`);
    expect(mode).toMatchObject({ objectID: usage.objectID, clusterUID: usage.cid, month: `${usage.year}-${usage.month}` });
    expect(mode.daily.length).toBeGreaterThan(0);
    for (const d of mode.daily) expect(d.date.startsWith(`${usage.year}-${usage.month}-`)).toBe(true);
    const clustered = (await ok(`${views('productdb')}/objects-cluster-mode-usage-view`)).rows[0];
    expect(
      (await ok(`${views('productdb')}/objects-cluster-mode-usage-view/clusters/${clustered.clusterUID}/objects/${clustered.objectID}`))
        .replicas,
    ).toBe(clustered.replicas);

    expect(await status(`/dashboard/summary/object-quota-history/clusters/${usage.cid}/objects/${NO_SUCH_OBJECT}`, 'root')).toBe(404);
    expect(
      await status(`${views('productdb')}/object-quota-history-summaries-view/clusters/${usage.cid}/objects/${NO_SUCH_OBJECT}`, 'root'),
    ).toBe(404);
  });

  it('namespace billing: the demo organization owner sees each namespace of its clusters per month, and one namespace', async () => {
    const owner = manifest.owner.username;
    const report = await ok('/dbaas/billing/reports/namespaces', owner);
    const ours = new Set([manifest.hub.uid, ...manifest.spokes.map((s) => s.uid)]);
    expect(report.rows.length).toBeGreaterThan(0);
    expect(report.rows.every((r: any) => ours.has(r.clusterUID))).toBe(true);
    const demo = report.rows.find((r: any) => r.clusterUID === usage.cid && r.namespace === usage.namespace);
    expect(demo.months.map((m: any) => m.month)).toContain(`${usage.year}-${usage.month}`);
    expect(demo.products).toContain(usage.product);

    const one = await ok(`/dbaas/billing/reports/clusters/${usage.cid}/namespaces/${usage.namespace}`, owner);
    expect(one).toMatchObject({ clusterUID: usage.cid, namespace: usage.namespace });
    expect(one.rows.map((r: any) => r.objectID)).toContain(usage.objectID);
    expect(one.totals.cpuCoreHours).toBeCloseTo(demo.cpuCoreHours, 6);

    // An organization without clusters has an empty report, and another's cluster is not found.
    expect((await get('/dbaas/billing/reports/namespaces', 'mallory', 'mallory-org')).body.rows).toEqual([]);
    expect(await status(`/dbaas/billing/reports/clusters/${usage.cid}/namespaces/${usage.namespace}`, 'mallory', 'mallory-org')).toBe(404);

    // The gateway keeps an organization's clusters; one recorded since is the organization's on the very next request.
    const uid = '5d1c0a9e-4b7f-4c2a-9e3d-0a1b2c3d4e5f';
    const fresh = `/dbaas/billing/reports/clusters/${uid}/namespaces/default`;
    expect(await status(fresh, 'mallory', 'mallory-org')).toBe(404);
    expect(await status(fresh, 'mallory', 'mallory-org')).toBe(404);
    expect((await t.api('mallory', 'POST', '/orgs/mallory-org/clusters', { name: 'fresh-hub', uid })).status).toBe(201);
    expect((await get(fresh, 'mallory', 'mallory-org')).body).toMatchObject({ clusterUID: uid, namespace: 'default', rows: [] });
  });

  it('400 for a bad year, month, product key, view of a product, view_type, contractID or cluster UID, and without org', async () => {
    const bad = [
      `${views('productdb', '26')}/clusters-usage-view`,
      `${views('productdb', '20266')}/clusters-usage-view`,
      `${views('productdb', usage.year, 'Smarch')}/clusters-usage-view`,
      `${views('productdb', usage.year, '13')}/clusters-usage-view`,
      `${views('productx')}/clusters-usage-view`,
      `${views('productvault')}/objects-usage-view`,
      `${views('productbackup')}/gks-usage-view`,
      `${views('productdb')}/clusters-usage-view?contractID=1.5`,
      `${views('productdb')}/clusters-usage-view?contractID=abc`,
      `${views('productdb')}/clusters-usage-view?view_type=weekly`,
      `${views('productdb')}/objects-usage-view?clusterUID=not-a-uuid`,
      `/dashboard/summary/object-quota-history/clusters/not-a-uuid/objects/${usage.objectID}`,
      `/dbaas/billing/reports/clusters/not-a-uuid/namespaces/demo`,
    ];
    for (const p of bad)
      expect({ p, status: await status(p, p.startsWith('/dbaas') ? manifest.owner.username : 'root') }).toEqual({ p, status: 400 });
    expect((await t.api('root', 'GET', '/dashboard/summary/generated-months')).status).toBe(400);
    expect((await t.api(manifest.owner.username, 'GET', '/dbaas/billing/reports/namespaces')).status).toBe(400);
  });

  it('401 without a token; 403 for a caller who is not a site admin (dashboard) or not an owner of the org (dbaas)', async () => {
    const dashboard = ['/dashboard/summary/generated-months', `${views('productdb')}/objects-usage-view`];
    for (const p of dashboard) {
      expect(await status(p, undefined)).toBe(401);
      expect(await status(p, 'mallory')).toBe(403);
      // The demo organization's owner is no site admin.
      expect(await status(p, manifest.owner.username)).toBe(403);
    }
    const dbaas = ['/dbaas/billing/reports/namespaces', `/dbaas/billing/reports/clusters/${usage.cid}/namespaces/${usage.namespace}`];
    for (const p of dbaas) {
      expect(await status(p, undefined)).toBe(401);
      expect(await status(p, 'mallory')).toBe(403);
    }
  });

  it('registers every usage-report row but the PDF download here: 2 dashboard rows, 9 view rows, 2 namespace billing rows', () => {
    expect(registeredRoutesOn({ BILLING_ENABLED: 'true' }).filter(mine)).toHaveLength(13);
  });
});

describe('usage reports where billing is disabled', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await bootTestPlatform({});
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404 with {message} for every usage-report row, to site admins too', async () => {
    const gated = registeredRoutesOn({ BILLING_ENABLED: 'true' }).filter(mine);
    expect(gated.length).toBe(13);
    expect(registeredRoutesOn({}).filter(mine)).toEqual([]);
    for (const r of gated) {
      const p = r.path
        .replace(':year', '2026')
        .replace(':month', '10')
        .replace(':productKey', 'productdb')
        .replace(':clusterUID', NO_SUCH_OBJECT)
        .replace(':clusterID', NO_SUCH_OBJECT)
        .replace(':objectID', NO_SUCH_OBJECT)
        .replace(':namespaceName', 'demo');
      const res = await t.api('root', 'GET', `${p}?org=acme`);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
  });
});
