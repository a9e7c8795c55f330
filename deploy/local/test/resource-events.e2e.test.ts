import { registeredRoutesOn } from '@platform/app-gateway';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The licensed-resource rows of the admin billing dashboard (`.../products/{productName}/resources`,
 * `events-histories`, `events/`, `events/raw-event`; docs/resource-events.md) over HTTP on a billing-enabled
 * deployment seeded with the demo (its simulated clusters report events and answer resource-history requests):
 * answers for the manifest's `usage` keys, the filters, 400/401/403/404, the 504 of a cluster that stops
 * answering; and the 404 `{message}` where billing is disabled.
 */

const DAY = 86_400_000;
type Usage = NonNullable<DemoManifest['usage']>;

describe('licensed-resource rows over HTTP on the demo seed', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let usage: Usage;
  /** `.../products/{product}` of the manifest's usage, or of the parts given instead. */
  const product = (over: Partial<Record<'uid' | 'cid' | 'lid' | 'product', string | number>> = {}) => {
    const u = { uid: usage.uid, cid: usage.cid, lid: usage.lid, product: usage.product, ...over };
    return `/dashboard/users/${u.uid}/clusters/${u.cid}/licenses/${u.lid}/products/${u.product}`;
  };
  /** GET as `who` (null: anonymous), with `org=demo`. */
  const get = (pathAndQuery: string, who: string | null = 'root') =>
    t.api(who ?? undefined, 'GET', `${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}org=demo`);
  const ok = async (pathAndQuery: string) => {
    const res = await get(pathAndQuery);
    expect({ path: pathAndQuery, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({
      path: pathAndQuery,
      status: 200,
      body: undefined,
    });
    return res.body;
  };
  /** The group and resource of the usage object: its key is `<group>/<resource>/<namespace>/<name>`. */
  const keyParts = () => {
    const [group, resource] = usage.eventKey.split('/');
    return { group, resource };
  };

  beforeAll(async () => {
    // On a NATS server of the suite's own: the resource history is asked over NATS request/reply here.
    demo = await bootDemoPlatform({}, { bus: 'private-nats' });
    ({ t, usage } = demo);
    await t.signUp('mallory');
  }, 600_000);
  afterAll(() => demo?.stop());

  it('resources: the history the cluster answers, with the usage key and its first version; filtered by group and resource', async () => {
    const { items } = await ok(`${product()}/resources`);
    const item = items.find((i: any) => i.key === usage.eventKey);
    // Unix timestamps are integer seconds (spec conventions).
    expect(item).toMatchObject({ key: usage.eventKey, lastSeen: expect.any(Number) });
    expect(Number.isInteger(item.lastSeen)).toBe(true);
    expect(item.values.map((v: any) => v.version)).toContain(usage.eventVersion);
    expect(item.values[0]).toEqual({
      resourceID: expect.objectContaining({ group: keyParts().group, name: usage.eventKey.split('/')[3] }),
      licenseID: usage.lid,
      version: 1,
      timestamp: expect.any(Number),
    });
    for (const v of item.values) expect(Number.isInteger(v.timestamp) && v.timestamp <= item.lastSeen).toBe(true);
    const { group, resource } = keyParts();
    expect((await ok(`${product()}/resources?group=${group}&resource=${resource}`)).items.map((i: any) => i.key)).toContain(usage.eventKey);
    expect((await ok(`${product()}/resources?group=other.example.com`)).items).toEqual([]);
    expect((await ok(`${product()}/resources?resource=no-such-resources`)).items).toEqual([]);
  });

  it('resources: 404 for a license the cluster never reported the product under (no cluster is asked)', async () => {
    const res = await get(`${product({ lid: 'no-such-license' })}/resources`);
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/no-such-license/);
  });

  it('events/: the events of the last 14 days by default, newest first, the usage key among them; lastDays narrows', async () => {
    const events = await ok(`${product()}/events/`);
    expect(events.length).toBeGreaterThan(0);
    const mine = events.find((e: any) => e.key === usage.eventKey);
    expect(mine).toEqual({
      key: usage.eventKey,
      version: expect.any(Number),
      timestamp: expect.any(Number),
      partialResource: { partialObjectMeta: expect.objectContaining({ kind: 'PartialObjectMetadata' }) },
    });
    expect(mine.version).toBeGreaterThan(usage.eventVersion);
    const times = events.map((e: any) => e.timestamp * 1000);
    expect(times.every(Number.isInteger)).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // A time in whole seconds may be up to a second before the instant it stands for.
    for (const time of times) expect(Date.now() - time).toBeLessThanOrEqual(14 * DAY + 1000);
    expect(await ok(`${product()}/events/?lastDays=14`)).toEqual(events);
    // The demo's last changes came two days before its end: a one-day window has none of them.
    for (const e of await ok(`${product()}/events/?lastDays=1`)) expect(Date.now() - e.timestamp * 1000).toBeLessThanOrEqual(DAY + 1000);
    expect(await ok(`${product({ lid: 'no-such-license' })}/events/`)).toEqual([]);
  });

  it('events/: 400 with a message for a lastDays that is not an integer from 1 to 14', async () => {
    for (const lastDays of ['0', '15', '-1', '1.5', 'abc', '7d']) {
      const res = await get(`${product()}/events/?lastDays=${lastDays}`);
      expect({ lastDays, status: res.status }).toEqual({ lastDays, status: 400 });
      expect(res.body.message).toBe('lastDays must be an integer from 1 to 14');
    }
  });

  it('events-histories: the count, times, span and rate of the events, by rid (the resource-history key), group and resource', async () => {
    const all = await ok(`${product()}/events-histories`);
    expect(all).toMatchObject({ userID: usage.uid, clusterID: usage.cid, licenseID: usage.lid });
    expect(all.totalEvents).toBeGreaterThanOrEqual(2);

    const one = await ok(`${product()}/events-histories?rid=${encodeURIComponent(usage.eventKey)}`);
    const { group, resource } = keyParts();
    // resourceID is a string: the resource-history key of the one object counted.
    expect(one).toMatchObject({ group, resource, resourceID: usage.eventKey });
    expect(one.totalEvents).toBeGreaterThanOrEqual(2);
    expect(one.eventsTimeHistories).toHaveLength(one.totalEvents);
    const times = one.eventsTimeHistories.map((s: string) => Date.parse(s));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const hours = (times.at(-1) - times[0]) / 3_600_000;
    expect(one.eventsDurationHours).toBeCloseTo(hours, 6);
    expect(one.averageEventsPerHour).toBeCloseTo(one.totalEvents / hours, 6);

    const byFilters = await ok(`${product()}/events-histories?group=${group}&resource=${resource}`);
    expect(byFilters.totalEvents).toBeGreaterThanOrEqual(one.totalEvents);
    expect(typeof byFilters.resourceID).toBe('string');
    expect(typeof all.resourceID).toBe('string');
    const none = await ok(`${product()}/events-histories?rid=no%2Fsuch%2Fkey`);
    expect(none).toMatchObject({
      totalEvents: 0,
      eventsTimeHistories: [],
      eventsDurationHours: 0,
      averageEventsPerHour: 0,
      resourceID: 'no/such/key',
    });
  });

  it('events/raw-event: the stored value of (key, version); 404 for a version that does not exist', async () => {
    const raw = await ok(`${product()}/events/raw-event?key=${encodeURIComponent(usage.eventKey)}&version=${usage.eventVersion}`);
    expect(raw).toEqual({
      resourceID: expect.objectContaining({ group: keyParts().group, name: usage.eventKey.split('/')[3] }),
      licenseID: usage.lid,
      version: usage.eventVersion,
      timestamp: expect.any(Number),
    });
    expect(Number.isInteger(raw.timestamp)).toBe(true);
    const missing = await get(`${product()}/events/raw-event?key=${encodeURIComponent(usage.eventKey)}&version=999`);
    expect(missing.status).toBe(404);
    expect(typeof missing.body.message).toBe('string');
  });

  it('events/raw-event: 400 with a message for a missing key, or a missing or non-unsigned version', async () => {
    const key = `key=${encodeURIComponent(usage.eventKey)}`;
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
  });

  it('answers 400 naming the path parameter for a uid that is not an integer or a cid that is not a UUID', async () => {
    for (const suffix of ['resources', 'events-histories', 'events/', 'events/raw-event?key=k&version=1']) {
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
  });

  it('is for site admins: 401 without a token, 403 for others (the demo organization’s owner too), 400 without org', async () => {
    for (const suffix of ['resources', 'events-histories', 'events/', `events/raw-event?key=k&version=1`]) {
      const p = `${product()}/${suffix}`;
      expect((await get(p, null)).status).toBe(401);
      expect((await get(p, 'mallory')).status).toBe(403);
      expect((await get(p, 'demo-owner')).status).toBe(403);
      const noOrg = await t.api('root', 'GET', p);
      expect(noOrg.status).toBe(400);
      expect(noOrg.body.message).toMatch(/org/);
    }
  });

  it('the API document types timestamp and lastSeen as integer Unix seconds and EventsReport resourceID as a string', async () => {
    const { components } = (await t.api(undefined, 'GET', '/openapi.json')).body;
    const unixSeconds = expect.objectContaining({ type: 'integer', description: 'Unix seconds' });
    expect(components.schemas.ResourceHistoryValue.properties.timestamp).toEqual(unixSeconds);
    expect(components.schemas.ResourceHistoryList.properties.items.items.properties.lastSeen).toEqual(unixSeconds);
    expect(components.schemas.ClusterResourceTabularForm.properties.timestamp).toEqual(unixSeconds);
    expect(components.schemas.EventsReport.properties.resourceID).toEqual(expect.objectContaining({ type: 'string' }));
    expect(components.schemas.EventsReport.properties.eventsTimeHistories.items).toEqual(
      expect.objectContaining({ type: 'string', description: 'RFC3339' }),
    );
  });

  // Last: it stops the simulated clusters.
  it('resources: 504 naming the cluster when it does not answer (the simulated clusters stopped answering)', async () => {
    await demo!.stopSeed();
    const res = await get(`${product()}/resources`);
    expect(res.status).toBe(504);
    expect(res.body.message).toContain(`cluster ${usage.cid} did not answer`);
    // What was stored still answers.
    expect((await ok(`${product()}/events-histories`)).totalEvents).toBeGreaterThan(0);
  });
});

describe('licensed-resource rows where billing is disabled', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await bootTestPlatform({});
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404 with {message} for each of the four rows, to site admins too', async () => {
    const mine = (r: { path: string }) => /\/products\/:productName\/(resources|events-histories|events\/|events\/raw-event)$/.test(r.path);
    const gated = registeredRoutesOn({ BILLING_ENABLED: 'true' }).filter(mine);
    expect(gated).toHaveLength(4);
    expect(registeredRoutesOn({}).filter(mine)).toEqual([]);
    for (const r of gated) {
      const p = r.path
        .replace(':uid', '1')
        .replace(':cid', '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e')
        .replace(':lid', 'lic')
        .replace(':productName', 'productdb');
      const res = await t.api('root', 'GET', `${p}?org=acme&key=k&version=1`);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
  });
});
