import { NotFoundError } from '@platform/errors';
import { clustersV1, USAGE_VIEWS, type usageReportV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { usageReportStandIns } from './usage-report-stand-ins';

// The usage-report rows (docs/usage-reports.md) against stand-in backends: the months answered per year by name, each
// view's path and query read and handed to billing-dashboard (a month by number or by name), its answer passed
// on, 400s before billing is asked, site admins only for the dashboard and the organization's owners for namespace
// billing (of the clusters the inventory gives the organization), 404 with a message where billing is disabled. The
// views' numbers: apps/billing-dashboard/test/usage-report.int.test.ts, and on the demo's simulated data
// deploy/local/test/usage-reports-simulated.int.test.ts.

const HUB = '0b7d4c1e-5f0a-4c5e-9d7b-2a1f6e3c9b10';
const SPOKE = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
const OBJECT = '0a000000-0000-4000-8000-000000000001';
const NONE = '0a0b0c0d-0000-4000-8000-000000000000';
const ZERO = { cpuCoreHours: 0, memoryGiBHours: 0, storageGiBHours: 0, objectHours: 0 };
/** Every view: each is productdb's. */
const DB_VIEWS = Object.keys(USAGE_VIEWS);
const views = (product: string, year = '2026', month = '10') =>
  `/dashboard/summary/${year}/${month}/usage-report/products/${product}/views`;
/** Every usage-report row but the PDF's. */
const mine = (r: { path: string }) =>
  (r.path.startsWith('/dashboard/summary/') && !r.path.endsWith('/download')) || r.path.startsWith('/dbaas/billing/');

/** A view as billing-dashboard streams it: its JSON in two pieces. */
async function* streamed(json: unknown) {
  const text = JSON.stringify(json);
  yield { json: Buffer.from(text.slice(0, 10)) };
  yield { json: Buffer.from(text.slice(10)) };
}
const anObject = {
  object: {
    clusterUID: HUB,
    clusterName: 'hub',
    product: 'productdb',
    namespace: 'demo',
    namespaceUID: '',
    group: 'kubedb.com',
    kind: 'Postgres',
    name: 'pg-1',
    objectID: OBJECT,
    version: '16',
    topology: 'CLUSTER',
  },
  quotaPeriods: [],
  samples: [],
};

describe('the usage-report rows', () => {
  const standIns = usageReportStandIns({
    billingDashboard: {
      usageReport: {
        generatedMonths: async () => ({
          months: [
            { year: 2025, month: 11 },
            { year: 2025, month: 12 },
            { year: 2026, month: 1 },
          ],
        }),
        getUsageView: ({ year, month, product, view, viewType }) =>
          streamed({ month: `${year}-${month}`, product, view, viewType: viewType || 'summary', rows: [], totals: { rows: 0, ...ZERO } }),
        getNamespaceBilling: ({ clusterUid, namespace }) =>
          streamed(
            clusterUid
              ? { clusterUID: clusterUid, namespace, rows: [], totals: { rows: 0, ...ZERO } }
              : { rows: [], totals: { rows: 0, ...ZERO } },
          ),
        getObjectQuotaHistory: async ({ objectId }) => {
          if (objectId === NONE) throw new NotFoundError(`no samples of object ${objectId}`);
          return { json: Buffer.from(JSON.stringify(anObject)) };
        },
      },
    },
    clusters: {
      clusters: {
        listOwnerClusters: async ({ ownerId }) => ({
          clusters: ownerId === 10 ? [HUB, SPOKE].map((uid) => clustersV1.Cluster.fromPartial({ uid })) : [],
        }),
      },
    },
  });

  /** GET as `who` (null: anonymous) for `org` (null: none). */
  const get = async (path: string, who: string | null = 'root', org: string | null = 'demo', on = standIns.base) => {
    const url = `${on}/api/v1${path}${org ? `${path.includes('?') ? '&' : '?'}org=${org}` : ''}`;
    const res = await fetch(url, { headers: who ? { authorization: `token ${who}` } : {} });
    const body: any = await res.json().catch(() => undefined);
    return { status: res.status, body };
  };
  const askedViews = () => standIns.backends.billingDashboard.callsTo('usageReport', 'getUsageView');
  const askedNothing = () => expect(standIns.backends.billingDashboard.calls).toEqual([]);

  it('generated-months: the months billing-dashboard has, per year by name in calendar order', async () => {
    expect((await get('/dashboard/summary/generated-months')).body).toEqual({
      yearMonthList: { '2025': ['November', 'December'], '2026': ['January'] },
    });
  });

  it('asks billing-dashboard for every view of productdb, the month by number or by name, and passes its answer on', async () => {
    for (const view of DB_VIEWS) {
      for (const month of ['10', '1', 'October', 'oct']) {
        const res = await get(`${views('productdb', '2026', month)}/${view}`);
        expect({ view, month, status: res.status }).toEqual({ view, month, status: 200 });
        expect(res.body).toMatchObject({ product: 'productdb', view, viewType: 'summary', rows: [] });
      }
    }
    expect(askedViews().map((r) => [r.view, r.year, r.month])).toEqual(
      DB_VIEWS.flatMap((view) => [
        [view, 2026, 10],
        [view, 2026, 1],
        [view, 2026, 10],
        [view, 2026, 10],
      ]),
    );
    for (const product of ['productbackup', 'productvault', 'productingress'])
      for (const view of ['clusters-usage-view', 'contracts-usage-view'])
        expect({ product, view, status: (await get(`${views(product)}/${view}`)).status }).toEqual({ product, view, status: 200 });
  });

  it('hands the filters and view_type on: clusterUID, namespace, kind, group, contractID', async () => {
    const ask = async (path: string) => {
      standIns.backends.reset();
      expect((await get(path)).status).toBe(200);
      const [request] = askedViews();
      return request;
    };
    const all = { viewType: '', group: '', kind: '', clusterUid: '', namespace: '', namespaceUid: '', objectId: '' };
    expect(await ask(`${views('productdb')}/objects-usage-view?clusterUID=${HUB}&namespace=demo&kind=Postgres&group=kubedb.com`)).toEqual({
      ...all,
      year: 2026,
      month: 10,
      product: 'productdb',
      view: 'objects-usage-view',
      clusterUid: HUB,
      namespace: 'demo',
      kind: 'Postgres',
      group: 'kubedb.com',
    });
    expect(await ask(`${views('productdb')}/clusters-usage-view?contractID=0`)).toMatchObject({ contractId: 0 });
    expect(await ask(`${views('productdb')}/clusters-usage-view?contractID=987654&view_type=daily`)).toMatchObject({
      contractId: 987654,
      viewType: 'daily',
    });
    expect((await ask(`${views('productdb')}/clusters-usage-view`)).contractId).toBeUndefined();
    expect(await ask(`${views('productdb')}/namespaces-usage-view?clusterUID=${HUB}`)).toMatchObject({ clusterUid: HUB });
  });

  it("an object's quota history over every month and in the month, and its cluster mode; 404 passed on", async () => {
    const all = await get(`/dashboard/summary/object-quota-history/clusters/${HUB}/objects/${OBJECT}`);
    expect(all.body.object).toMatchObject({ clusterUID: HUB, objectID: OBJECT });
    expect(standIns.backends.billingDashboard.callsTo('usageReport', 'getObjectQuotaHistory')).toEqual([
      { clusterUid: HUB, objectId: OBJECT },
    ]);
    expect((await get(`/dashboard/summary/object-quota-history/clusters/${HUB}/objects/${NONE}`)).status).toBe(404);
    for (const view of ['object-quota-history-summaries-view', 'objects-cluster-mode-usage-view']) {
      standIns.backends.reset();
      standIns.backends.billingDashboard.answer('usageReport', 'getUsageView', (r: usageReportV1.UsageViewRequest) => {
        if (r.objectId === NONE) throw new NotFoundError(`no samples of object ${r.objectId} in 2026-10`);
        return view === 'objects-cluster-mode-usage-view'
          ? streamed({ month: '2026-10', product: 'productdb', view, viewType: 'summary', replicaHours: 0, daily: [], ...ZERO })
          : streamed({ ...anObject, month: '2026-10', product: 'productdb', view, viewType: 'summary' });
      });
      const item = `${views('productdb')}/${view}/clusters/${HUB}/objects/${OBJECT}`;
      expect({ view, status: (await get(item)).status }).toEqual({ view, status: 200 });
      expect(askedViews()).toEqual([expect.objectContaining({ view, clusterUid: HUB, objectId: OBJECT })]);
      expect((await get(`${views('productdb')}/${view}/clusters/${HUB}/objects/${NONE}`)).status).toBe(404);
    }
  });

  it("namespace billing: the organization's clusters from the inventory handed to billing-dashboard, and one namespace of one", async () => {
    expect((await get('/dbaas/billing/reports/namespaces', 'owner')).status).toBe(200);
    expect((await get(`/dbaas/billing/reports/clusters/${SPOKE}/namespaces/demo`, 'owner')).body).toMatchObject({
      clusterUID: SPOKE,
      namespace: 'demo',
    });
    expect(standIns.backends.billingDashboard.callsTo('usageReport', 'getNamespaceBilling')).toEqual([
      { clusterUids: [HUB, SPOKE], clusterUid: '', namespace: '' },
      { clusterUids: [HUB, SPOKE], clusterUid: SPOKE, namespace: 'demo' },
    ]);
    expect(standIns.backends.clusters.callsTo('clusters', 'listOwnerClusters')[0]).toMatchObject({
      ownerType: 'organization',
      ownerId: 10,
    });
    standIns.backends.billingDashboard.answer('usageReport', 'getNamespaceBilling', () => {
      throw new NotFoundError(`cluster ${NONE} is not one of the organization's`);
    });
    expect((await get(`/dbaas/billing/reports/clusters/${NONE}/namespaces/demo`, 'owner')).status).toBe(404);
  });

  it('400 for a bad year, month, product, view of a product, view_type, contractID or cluster UID, and without org; billing not asked', async () => {
    const bad = [
      `${views('productdb', '26')}/clusters-usage-view`,
      `${views('productdb', '20266')}/clusters-usage-view`,
      `${views('productdb', '2026', 'Smarch')}/clusters-usage-view`,
      `${views('productdb', '2026', '13')}/clusters-usage-view`,
      `${views('productx')}/clusters-usage-view`,
      `${views('productvault')}/objects-usage-view`,
      `${views('productbackup')}/gks-usage-view`,
      `${views('productdb')}/clusters-usage-view?contractID=1.5`,
      `${views('productdb')}/clusters-usage-view?contractID=abc`,
      `${views('productdb')}/clusters-usage-view?view_type=weekly`,
      `${views('productdb')}/objects-usage-view?clusterUID=not-a-uuid`,
      `/dashboard/summary/object-quota-history/clusters/not-a-uuid/objects/${OBJECT}`,
      `/dbaas/billing/reports/clusters/not-a-uuid/namespaces/demo`,
    ];
    for (const p of bad) {
      const res = await get(p, p.startsWith('/dbaas') ? 'owner' : 'root');
      expect({ p, status: res.status, message: typeof res.body?.message }).toEqual({ p, status: 400, message: 'string' });
    }
    expect((await get('/dashboard/summary/generated-months', 'root', null)).status).toBe(400);
    expect((await get('/dbaas/billing/reports/namespaces', 'owner', null)).status).toBe(400);
    askedNothing();
  });

  it("401 without a token; 403 to all but site admins (the organization's owner too) on the dashboard, to all but its owners on namespace billing", async () => {
    for (const p of ['/dashboard/summary/generated-months', `${views('productdb')}/objects-usage-view`]) {
      expect((await get(p, null)).status).toBe(401);
      for (const who of ['mallory', 'member', 'owner']) {
        const res = await get(p, who);
        expect({ p, who, status: res.status }).toEqual({ p, who, status: 403 });
        expect(res.body.message).toMatch(/view_usage_analytics/);
      }
    }
    for (const p of ['/dbaas/billing/reports/namespaces', `/dbaas/billing/reports/clusters/${HUB}/namespaces/demo`]) {
      expect((await get(p, null)).status).toBe(401);
      for (const who of ['mallory', 'member']) expect({ p, who, status: (await get(p, who)).status }).toEqual({ p, who, status: 403 });
      expect((await get(p, 'root')).status).toBe(200);
    }
    expect(askedViews()).toEqual([]);
  });

  it('registers 13 rows (2 dashboard, 9 views, 2 namespace billing) where billing is enabled; elsewhere each is 404 with a message, to site admins too', async () => {
    const gated = registeredRoutesOn({ BILLING_ENABLED: 'true' }).filter(mine);
    expect(gated).toHaveLength(13);
    expect(registeredRoutesOn({}).filter(mine)).toEqual([]);
    for (const r of gated) {
      const p = r.path
        .replace(':year', '2026')
        .replace(':month', '10')
        .replace(':productKey', 'productdb')
        .replace(/:clusterUID|:clusterID|:objectID/g, NONE)
        .replace(':namespaceName', 'demo');
      const res = await get(p, 'root', 'demo', standIns.disabled);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
    askedNothing();
  });
});
