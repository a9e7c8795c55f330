import { DeadlineError, NotFoundError } from '@platform/errors';
import { eventsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { adminAndOwner, type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The licensed-resource rows of the admin billing dashboard at the edge (`.../products/{productName}/resources`,
// `events-histories`, `events/`, `events/raw-event`; docs/resource-events.md): the path and query checked before
// billing-dashboard is asked, what it is asked, its answers in the API's shape (times as integer Unix seconds), its
// 404 and 504 passed on, site admins only, and no such rows where billing is disabled. What billing-dashboard itself
// answers (the events kept, the window, the report's count, span and rate, the raw event, the history asked of the
// cluster over the bus and verified, its 404, 503 and 504): apps/billing-dashboard/test/events.int.test.ts; the
// simulated cluster answering its sealed history: deploy/simulator/test/simulate.test.ts; the demo's events stored:
// deploy/local/test/demo-seed.e2e.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  olivia: orgsTeamsV1.User.fromPartial({ id: 2, login: 'olivia', active: true }),
  mallory: orgsTeamsV1.User.fromPartial({ id: 3, login: 'mallory', active: true }),
};
/** olivia owns demo. */
const DEMO = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'demo', visibility: 'public' });
const CID = '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';
const KEY = 'kubedb.com/postgreses/demo/pg-1';
const PG_ID = { group: 'kubedb.com', kind: 'Postgres', namespace: 'demo', name: 'pg-1' };
/** Milliseconds not on a second, to show the API answers whole seconds. */
const T = Date.UTC(2026, 10, 20, 10, 0, 0) + 750;
const ROWS = ['resources', 'events-histories', 'events/', 'events/raw-event?key=k&version=1'];
const product = (over: Partial<Record<'uid' | 'cid' | 'lid' | 'product', string | number>> = {}) => {
  const u = { uid: 7, cid: CID, lid: 'lic-1', product: 'productdb', ...over };
  return `/dashboard/users/${u.uid}/clusters/${u.cid}/licenses/${u.lid}/products/${u.product}`;
};
const REF = { userId: 7, clusterUid: CID, licenseId: 'lic-1', product: 'productdb' };
const VALUE = eventsV1.ResourceHistoryValue.fromPartial({
  resourceIdJson: JSON.stringify(PG_ID),
  licenseId: 'lic-1',
  version: 1,
  timestampMs: T,
});

describe('licensed-resource rows at the edge', () => {
  let backends: FakeBackends;
  let billing: { base: string; close(): void };
  let noBilling: { base: string; close(): void };

  const call = async (base: string, who: string | undefined, pathAndQuery: string) => {
    const res = await fetch(`${base}/api/v1${pathAndQuery}`, { headers: who ? { authorization: `token ${who}` } : {} });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  /** GET as `who` (null: anonymous), with `org=demo`. */
  const get = (pathAndQuery: string, who: string | null = 'root') =>
    call(billing.base, who ?? undefined, `${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}org=demo`);
  const asked = () =>
    (['getResourceHistory', 'listResourceEvents', 'getEventsReport', 'getRawEvent'] as const).flatMap((m) =>
      backends.billingDashboard.callsTo('events', m),
    );

  beforeAll(async () => {
    backends = await startFakeBackends({
      // Site permissions are root's alone; olivia owns demo, which gives her nothing here.
      ...fakeOrgAndCaller(USERS, DEMO, adminAndOwner(USERS.root, USERS.olivia, DEMO)),
      billingDashboard: {
        events: {
          // As billing-dashboard answers (apps/billing-dashboard/test/events.int.test.ts): lic-0 was never reported,
          // and the cluster of lic-9 does not answer.
          getResourceHistory: async ({ product: ref }) => {
            if (ref?.licenseId === 'lic-0') throw new NotFoundError(`cluster ${CID} never reported productdb under license lic-0`);
            if (ref?.licenseId === 'lic-9')
              throw new DeadlineError(`cluster ${CID} did not answer the resource-history request within 5000 ms`);
            return { items: [{ key: KEY, lastSeenMs: T + 3_000, values: [VALUE, { ...VALUE, version: 2, timestampMs: T + 2_000 }] }] };
          },
          listResourceEvents: async () => ({
            events: [
              eventsV1.ResourceEvent.fromPartial({
                key: KEY,
                version: 3,
                timestampMs: T,
                partialObjectMetaJson: JSON.stringify({ kind: 'PartialObjectMetadata', metadata: { name: 'pg-1' } }),
              }),
            ],
          }),
          getEventsReport: async ({ rid }) =>
            eventsV1.EventsReport.fromPartial({
              group: 'kubedb.com',
              resource: 'postgreses',
              key: rid,
              totalEvents: 2,
              eventTimesMs: [T, T + 2 * 3_600_000],
              eventsDurationHours: 2,
              averageEventsPerHour: 1,
            }),
          getRawEvent: async ({ version }) => {
            if (version === 999) throw new NotFoundError(`no event ${KEY} version 999 of productdb`);
            return VALUE;
          },
        },
      },
    });
    billing = await startTestGateway({ ...backends.env, BILLING_ENABLED: 'true', PLATFORM_ADMIN_ORG: 'none' });
    noBilling = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' });
  });
  afterAll(async () => {
    billing?.close();
    noBilling?.close();
    await backends?.close();
  });
  beforeEach(() => backends.billingDashboard.reset());

  it('resources: the history the cluster answered, times in whole Unix seconds, the filters handed on', async () => {
    expect(await get(`${product()}/resources?group=kubedb.com&resource=postgreses`)).toEqual({
      status: 200,
      body: {
        items: [
          {
            key: KEY,
            lastSeen: Math.floor((T + 3_000) / 1000),
            values: [
              { resourceID: PG_ID, licenseID: 'lic-1', version: 1, timestamp: Math.floor(T / 1000) },
              { resourceID: PG_ID, licenseID: 'lic-1', version: 2, timestamp: Math.floor((T + 2_000) / 1000) },
            ],
          },
        ],
      },
    });
    expect((await get(`${product()}/resources`)).status).toBe(200);
    expect(backends.billingDashboard.callsTo('events', 'getResourceHistory')).toEqual([
      { product: REF, group: 'kubedb.com', resource: 'postgreses' },
      { product: REF, group: '', resource: '' },
    ]);
  });

  it("resources: billing-dashboard's 404 for a product never reported and its 504 naming a cluster that does not answer", async () => {
    const never = await get(`${product({ lid: 'lic-0' })}/resources`);
    expect(never).toMatchObject({ status: 404, body: { message: expect.stringMatching(/lic-0/) } });
    const silent = await get(`${product({ lid: 'lic-9' })}/resources`);
    expect(silent).toMatchObject({ status: 504, body: { message: expect.stringContaining(`cluster ${CID} did not answer`) } });
  });

  it('events/: the events in their form, 14 days by default, lastDays handed on', async () => {
    const events = await get(`${product()}/events/`);
    expect(events).toEqual({
      status: 200,
      body: [
        {
          key: KEY,
          version: 3,
          timestamp: Math.floor(T / 1000),
          partialResource: { partialObjectMeta: { kind: 'PartialObjectMetadata', metadata: { name: 'pg-1' } } },
        },
      ],
    });
    expect((await get(`${product()}/events/?lastDays=1`)).status).toBe(200);
    expect((await get(`${product()}/events/?lastDays=14`)).status).toBe(200);
    expect(backends.billingDashboard.callsTo('events', 'listResourceEvents')).toEqual([
      { product: REF, lastDays: 14 },
      { product: REF, lastDays: 1 },
      { product: REF, lastDays: 14 },
    ]);
  });

  it('events/: 400 with a message for a lastDays that is not an integer from 1 to 14, asking nothing', async () => {
    for (const lastDays of ['0', '15', '-1', '1.5', 'abc', '7d']) {
      const res = await get(`${product()}/events/?lastDays=${lastDays}`);
      expect({ lastDays, status: res.status, message: res.body.message }).toEqual({
        lastDays,
        status: 400,
        message: 'lastDays must be an integer from 1 to 14',
      });
    }
    expect(asked()).toEqual([]);
  });

  it('events-histories: the report with the path it was asked for, times as RFC3339, resourceID the key', async () => {
    const one = await get(`${product()}/events-histories?rid=${encodeURIComponent(KEY)}&group=kubedb.com&resource=postgreses`);
    expect(one).toEqual({
      status: 200,
      body: {
        userID: 7,
        clusterID: CID,
        licenseID: 'lic-1',
        group: 'kubedb.com',
        resource: 'postgreses',
        resourceID: KEY,
        totalEvents: 2,
        eventsTimeHistories: [new Date(T).toISOString(), new Date(T + 2 * 3_600_000).toISOString()],
        eventsDurationHours: 2,
        averageEventsPerHour: 1,
      },
    });
    expect((await get(`${product()}/events-histories`)).body.resourceID).toBe('');
    expect(backends.billingDashboard.callsTo('events', 'getEventsReport')).toEqual([
      { product: REF, group: 'kubedb.com', resource: 'postgreses', rid: KEY },
      { product: REF, group: '', resource: '', rid: '' },
    ]);
  });

  it('events/raw-event: the stored value of (key, version); 404 passed on', async () => {
    expect(await get(`${product()}/events/raw-event?key=${encodeURIComponent(KEY)}&version=1`)).toEqual({
      status: 200,
      body: { resourceID: PG_ID, licenseID: 'lic-1', version: 1, timestamp: Math.floor(T / 1000) },
    });
    const missing = await get(`${product()}/events/raw-event?key=${encodeURIComponent(KEY)}&version=999`);
    expect(missing).toMatchObject({ status: 404, body: { message: expect.any(String) } });
    expect(backends.billingDashboard.callsTo('events', 'getRawEvent')).toEqual([
      { product: REF, key: KEY, version: 1 },
      { product: REF, key: KEY, version: 999 },
    ]);
  });

  it('events/raw-event: 400 with a message for a missing key, or a missing or non-unsigned version, asking nothing', async () => {
    const key = `key=${encodeURIComponent(KEY)}`;
    for (const [query, message] of [
      [`version=1`, /^key /],
      [`${key}`, /^version /],
      [`${key}&version=-1`, /^version must be an unsigned integer/],
      [`${key}&version=1.5`, /^version must be an unsigned integer/],
      [`${key}&version=one`, /^version must be an unsigned integer/],
    ] as const) {
      const res = await get(`${product()}/events/raw-event?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.message).toMatch(message);
    }
    expect(asked()).toEqual([]);
  });

  it('answers 400 naming the path parameter for a uid that is not an integer or a cid that is not a UUID', async () => {
    for (const suffix of ROWS) {
      const badUid = await get(`${product({ uid: 'abc' })}/${suffix}`);
      expect({ suffix, status: badUid.status, message: badUid.body.message }).toEqual({
        suffix,
        status: 400,
        message: 'uid must be a positive integer',
      });
      const badCid = await get(`${product({ cid: 'not-a-uuid' })}/${suffix}`);
      expect({ suffix, status: badCid.status }).toEqual({ suffix, status: 400 });
      expect(badCid.body.message).toMatch(/^cid /);
    }
    expect(asked()).toEqual([]);
  });

  it("is for site admins: 401 without a token, 403 for others (the organization's owner too), 400 without org", async () => {
    for (const suffix of ROWS) {
      const p = `${product()}/${suffix}`;
      expect((await get(p, null)).status).toBe(401);
      expect((await get(p, 'mallory')).status).toBe(403);
      expect((await get(p, 'olivia')).status).toBe(403);
      const noOrg = await call(billing.base, 'root', p);
      expect(noOrg).toMatchObject({ status: 400, body: { message: expect.stringMatching(/org/) } });
    }
    expect(asked()).toEqual([]);
  });

  it('has no such row where billing is disabled: 404 with {message}, to site admins too', async () => {
    for (const suffix of ROWS) {
      const res = await call(noBilling.base, 'root', `${product()}/${suffix}${suffix.includes('?') ? '&' : '?'}org=demo`);
      expect({ suffix, status: res.status, message: typeof res.body?.message }).toEqual({ suffix, status: 404, message: 'string' });
    }
    expect(asked()).toEqual([]);
  });

  it('types timestamp and lastSeen as integer Unix seconds and EventsReport resourceID as a string in the API document', async () => {
    const { components } = (await call(billing.base, undefined, '/openapi.json')).body;
    const unixSeconds = expect.objectContaining({ type: 'integer', description: 'Unix seconds' });
    expect(components.schemas.ResourceHistoryValue.properties.timestamp).toEqual(unixSeconds);
    expect(components.schemas.ResourceHistoryList.properties.items.items.properties.lastSeen).toEqual(unixSeconds);
    expect(components.schemas.ClusterResourceTabularForm.properties.timestamp).toEqual(unixSeconds);
    expect(components.schemas.EventsReport.properties.resourceID).toEqual(expect.objectContaining({ type: 'string' }));
    expect(components.schemas.EventsReport.properties.eventsTimeHistories.items).toEqual(
      expect.objectContaining({ type: 'string', description: 'RFC3339' }),
    );
  });
});
