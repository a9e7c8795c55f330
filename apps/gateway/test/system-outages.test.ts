import { ConflictError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1, outagesV1 } from '@platform/proto';
import { adminAndOwner, type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway, callApi } from './test-gateway';

// The system outages of the admin billing dashboard at the edge (docs/system-outages.md): the account named by a
// user's or an organization's login, the body and the report's filters checked before billing-dashboard is asked, its
// answers in the API's shape, site admins only, and no such routes where billing is disabled. What billing-dashboard
// itself decides (the overlap rule, tags trimmed and distinct, the report's sums and shares, the filters):
// apps/billing-dashboard/test/outages.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  olivia: orgsTeamsV1.User.fromPartial({ id: 2, login: 'olivia', active: true }),
  mallory: orgsTeamsV1.User.fromPartial({ id: 3, login: 'mallory', active: true }),
};
/** olivia owns acme. */
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });
const OUTAGES = '/dashboard/system-outages';
const H = 3_600_000;
const T0 = Date.UTC(2026, 9, 1);
const at = (hours: number) => new Date(T0 + hours * H).toISOString();

describe('system outages at the edge', () => {
  let backends: FakeBackends;
  let billing: { base: string; close(): void };
  let noBilling: { base: string; close(): void };

  const post = (body: unknown, who = 'root') => callApi(billing.base, who, 'POST', `${OUTAGES}/?org=acme`, body);
  const created = () => backends.billingDashboard.callsTo('outages', 'createOutage');

  beforeAll(async () => {
    backends = await startFakeBackends({
      // Site permissions are root's alone; olivia owns acme, which gives her nothing here.
      ...fakeOrgAndCaller(USERS, ACME, adminAndOwner(USERS.root, USERS.olivia, ACME)),
      billingDashboard: {
        outages: {
          // As billing-dashboard answers: the outage stored, or the overlap refused (cluster "busy" stands for one).
          createOutage: async (req) => {
            if (req.clusterId === 'busy') throw new ConflictError('the outage overlaps outage 4 of the same account and cluster');
            return outagesV1.Outage.fromPartial({ ...req, id: 7, tags: [...new Set(req.tags.map((t) => t.trim()))], createdMs: T0 });
          },
          outageReport: async ({ accountId }) =>
            accountId === 99
              ? { entries: [] }
              : {
                  report: {
                    totalOutages: 1,
                    totalDurationHours: 2,
                    topTagsPercentage: [{ tag: 'network', percentage: 100 }],
                    topAccountsDuration: [{ entity: '10', entityName: 'acme', durationHours: 2, percentage: 100 }],
                    topClustersDuration: [{ entity: 'c1', entityName: 'c1', durationHours: 2, percentage: 100 }],
                  },
                  entries: [
                    outagesV1.Outage.fromPartial({
                      id: 7,
                      accountId: 10,
                      accountName: 'acme',
                      clusterId: 'c1',
                      startMs: T0,
                      endMs: T0 + 2 * H,
                      tags: ['network'],
                      comments: 'upstream',
                      createdMs: T0,
                    }),
                  ],
                },
          listOutageTags: async () => ({ tags: ['db', 'network', 'power'] }),
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
  beforeEach(() => {
    backends.billingDashboard.reset();
    backends.orgsTeams.reset();
  });

  it('records an outage: 201 with the entry, the account resolved from an organization or a user, none when not named', async () => {
    const res = await post({
      accountName: 'acme',
      clusterID: ' c1 ',
      start: at(0),
      end: '2026-10-01T04:00:00+02:00', // 02:00Z
      tags: [' network ', 'network', 'db'],
      comments: 'upstream',
    });
    expect(res).toEqual({
      status: 201,
      body: {
        id: 7,
        accountID: ACME.id,
        accountName: 'acme',
        clusterID: 'c1',
        start: at(0),
        end: at(2),
        tags: ['network', 'db'],
        comments: 'upstream',
        createdAt: at(0),
      },
    });
    expect(created()).toEqual([
      {
        accountId: ACME.id,
        accountName: 'acme',
        clusterId: 'c1',
        startMs: T0,
        endMs: T0 + 2 * H,
        tags: [' network ', 'network', 'db'],
        comments: 'upstream',
        createdBy: 'root',
      },
    ]);

    const user = await post({ accountName: 'olivia', clusterID: 'c2', start: at(10), end: at(14), tags: ['network'] });
    expect(user).toMatchObject({ status: 201, body: { accountID: USERS.olivia.id, accountName: 'olivia' } });

    const none = await post({ start: at(20), end: at(26), tags: ['power'] });
    expect(none).toMatchObject({ status: 201, body: { accountID: 0, accountName: '', clusterID: '', tags: ['power'], comments: '' } });
    expect(created().at(-1)).toMatchObject({ accountId: 0, accountName: '', clusterId: '' });
  });

  it("passes billing-dashboard's refusal of an overlapping outage on as 409", async () => {
    const res = await post({ accountName: 'acme', clusterID: 'busy', start: at(1), end: at(3) });
    expect(res).toMatchObject({ status: 409, body: { message: expect.stringMatching(/overlaps/) } });
  });

  it('answers 422 for a missing or malformed start or end, an end not after start or an unknown account, asking nothing', async () => {
    for (const body of [
      { end: at(40) },
      { start: at(40) },
      { start: 'yesterday', end: at(41) },
      { start: '2026-10-01', end: at(41) },
      { start: at(40), end: '2026-10-01T45:00:00Z' },
      { start: at(41), end: at(40) },
      { start: at(40), end: at(40) },
      { accountName: 'nobody-here', start: at(40), end: at(41) },
      { start: at(40), end: at(41), tags: 'network' },
    ]) {
      const res = await post(body);
      expect({ body, status: res.status, message: typeof res.body?.message }).toEqual({ body, status: 422, message: 'string' });
    }
    expect(created()).toEqual([]);
  });

  it('hands the report its filters and answers its totals, shares and entries; zeros when it has none', async () => {
    const res = await callApi(billing.base, 'root', 'GET', `${OUTAGES}/report?org=acme`);
    expect(res).toEqual({
      status: 200,
      body: {
        report: {
          totalOutages: 1,
          totalDurationHours: 2,
          topTagsPercentage: [{ tag: 'network', percentage: 100 }],
          topAccountsDuration: [{ entity: '10', entityName: 'acme', durationHours: 2, percentage: 100 }],
          topClustersDuration: [{ entity: 'c1', entityName: 'c1', durationHours: 2, percentage: 100 }],
        },
        entries: [
          {
            id: 7,
            accountID: 10,
            accountName: 'acme',
            clusterID: 'c1',
            start: at(0),
            end: at(2),
            tags: ['network'],
            comments: 'upstream',
            createdAt: at(0),
          },
        ],
      },
    });
    const filtered = await callApi(
      billing.base,
      'root',
      'GET',
      `${OUTAGES}/report?org=acme&start=${encodeURIComponent(at(14))}&account_id=10&cluster_id=c1&tags=db&tags=power`,
    );
    expect(filtered.status).toBe(200);
    expect((await callApi(billing.base, 'root', 'GET', `${OUTAGES}/report?org=acme&tags=power`)).status).toBe(200);
    expect(backends.billingDashboard.callsTo('outages', 'outageReport')).toEqual([
      { startMs: 0, accountId: 0, clusterId: '', tags: [] },
      { startMs: T0 + 14 * H, accountId: 10, clusterId: 'c1', tags: ['db', 'power'] },
      { startMs: 0, accountId: 0, clusterId: '', tags: ['power'] },
    ]);
    expect(await callApi(billing.base, 'root', 'GET', `${OUTAGES}/report?org=acme&account_id=99`)).toEqual({
      status: 200,
      body: {
        report: { totalOutages: 0, totalDurationHours: 0, topTagsPercentage: [], topAccountsDuration: [], topClustersDuration: [] },
        entries: [],
      },
    });
  });

  it('answers 400 for a malformed report filter, asking nothing', async () => {
    for (const query of ['&start=yesterday', '&start=2026-10-01', '&account_id=abc', '&account_id=-1']) {
      const res = await callApi(billing.base, 'root', 'GET', `${OUTAGES}/report?org=acme${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
    expect(backends.billingDashboard.callsTo('outages', 'outageReport')).toEqual([]);
  });

  it('lists the tags billing-dashboard keeps', async () => {
    expect(await callApi(billing.base, 'root', 'GET', `${OUTAGES}/tags?org=acme`)).toEqual({
      status: 200,
      body: ['db', 'network', 'power'],
    });
  });

  it('is for site admins: 401 without a token, 403 for others (an org owner too), 400 without org', async () => {
    const body = { start: at(50), end: at(51) };
    for (const [method, path, json] of [
      ['POST', `${OUTAGES}/`, body],
      ['GET', `${OUTAGES}/report`, undefined],
      ['GET', `${OUTAGES}/tags`, undefined],
    ] as const) {
      expect((await callApi(billing.base, undefined, method, `${path}?org=acme`, json)).status).toBe(401);
      expect((await callApi(billing.base, 'mallory', method, `${path}?org=acme`, json)).status).toBe(403);
      expect((await callApi(billing.base, 'olivia', method, `${path}?org=acme`, json)).status).toBe(403);
      const noOrg = await callApi(billing.base, 'root', method, path, json);
      expect(noOrg).toMatchObject({ status: 400, body: { message: expect.stringMatching(/org/) } });
    }
    expect(created()).toEqual([]);
    expect(backends.billingDashboard.callsTo('outages', 'outageReport')).toEqual([]);
    expect(backends.billingDashboard.callsTo('outages', 'listOutageTags')).toEqual([]);
  });

  it('has no system-outage route where billing is disabled: 404 with {message}, to site admins too', async () => {
    for (const [method, path, json] of [
      ['POST', `${OUTAGES}/`, { start: at(0), end: at(1) }],
      ['GET', `${OUTAGES}/report`, undefined],
      ['GET', `${OUTAGES}/tags`, undefined],
    ] as const) {
      const res = await callApi(noBilling.base, 'root', method, `${path}?org=acme`, json);
      expect({ path, status: res.status, message: typeof res.body?.message }).toEqual({ path, status: 404, message: 'string' });
    }
    expect(created()).toEqual([]);
  });
});
