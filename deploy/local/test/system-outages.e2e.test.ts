import { registeredRoutesOn } from '@platform/app-gateway';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The system outages of the admin billing dashboard (docs/system-outages.md) over HTTP on a
 * billing-enabled deployment: recording (201, 409 overlap, 422), the report and its filters, the tags, who may
 * call (401, 403, 400 without `org`); and their absence (404 with `{message}`) where billing is disabled.
 */

const OUTAGES = '/dashboard/system-outages';
const H = 3_600_000;
const T0 = Date.UTC(2026, 9, 1);
const at = (hours: number) => new Date(T0 + hours * H).toISOString();

describe('system outages over HTTP on a billing-enabled deployment', () => {
  let t: TestPlatform;
  const api: TestPlatform['api'] = (...args) => t.api(...args);
  const post = (body: unknown, who = 'root') => api(who, 'POST', `${OUTAGES}/?org=acme`, body);
  const report = async (query = '') => {
    const res = await api('root', 'GET', `${OUTAGES}/report?org=acme${query}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    t = await bootTestPlatform({ BILLING_ENABLED: 'true' });
    await t.signUp('olivia');
    await t.signUp('mallory');
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
  }, 120_000);
  afterAll(() => t?.stop());

  it('records an outage: 201 with the stored entry, the account resolved from a user or an organization', async () => {
    const res = await post({
      accountName: 'acme',
      clusterID: 'c1',
      start: at(0),
      end: '2026-10-01T04:00:00+02:00', // 02:00Z
      tags: [' network ', 'network', 'db'],
      comments: 'upstream',
    });
    expect(res.status).toBe(201);
    const acme = (await api('root', 'GET', '/orgs/acme')).body.id;
    expect(res.body).toEqual({
      id: expect.any(Number),
      accountID: acme,
      accountName: 'acme',
      clusterID: 'c1',
      start: at(0),
      end: at(2),
      tags: ['network', 'db'],
      comments: 'upstream',
      createdAt: expect.any(String),
    });
    const user = await post({ accountName: 'olivia', clusterID: 'c2', start: at(10), end: at(14), tags: ['network'] });
    expect(user.status).toBe(201);
    expect(user.body.accountID).toBe(t.ids.olivia);
    const none = await post({ start: at(20), end: at(26), tags: ['power'] });
    expect(none.status).toBe(201);
    expect(none.body).toMatchObject({ accountID: 0, accountName: '', clusterID: '', tags: ['power'], comments: '' });
  });

  it('refuses an outage overlapping another of the same account and cluster (409); touching or elsewhere is fine', async () => {
    const overlap = await post({ accountName: 'acme', clusterID: 'c1', start: at(1), end: at(3) });
    expect(overlap.status).toBe(409);
    expect(overlap.body.message).toMatch(/overlaps/);
    expect((await post({ accountName: 'acme', clusterID: 'c9', start: at(1), end: at(3) })).status).toBe(201);
    expect((await post({ accountName: 'acme', clusterID: 'c1', start: at(2), end: at(3) })).status).toBe(201);
    expect((await post({ start: at(25), end: at(27) })).status).toBe(409);
  });

  it('answers 422 for a missing or malformed start or end, an end not after start, or an unknown account', async () => {
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
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(typeof res.body.message).toBe('string');
    }
  });

  it('reports totals, tag shares and account and cluster durations, entries newest first, with filters', async () => {
    // Stored: acme/c1 0-2h (network, db), acme/c9 1-3h, acme/c1 2-3h, olivia/c2 10-14h (network), none 20-26h (power).
    const all = await report();
    expect(all.entries.map((e: any) => e.start)).toEqual([at(20), at(10), at(2), at(1), at(0)]);
    expect(all.report.totalOutages).toBe(5);
    expect(all.report.totalDurationHours).toBeCloseTo(15);
    expect(all.report.topTagsPercentage).toEqual([
      { tag: 'network', percentage: 40 },
      { tag: 'db', percentage: 20 },
      { tag: 'power', percentage: 20 },
    ]);
    const acme = (await api('root', 'GET', '/orgs/acme')).body.id;
    expect(all.report.topAccountsDuration).toEqual([
      { entity: String(acme), entityName: 'acme', durationHours: 5, percentage: (5 / 15) * 100 },
      { entity: String(t.ids.olivia), entityName: 'olivia', durationHours: 4, percentage: (4 / 15) * 100 },
    ]);
    expect(all.report.topClustersDuration.map((c: any) => [c.entity, c.durationHours])).toEqual([
      ['c2', 4],
      ['c1', 3],
      ['c9', 2],
    ]);

    expect((await report(`&start=${encodeURIComponent(at(14))}`)).report.totalOutages).toBe(1);
    expect((await report(`&start=${encodeURIComponent(at(13))}`)).report.totalOutages).toBe(2);
    const byAccount = await report(`&account_id=${acme}`);
    expect(byAccount.report.totalOutages).toBe(3);
    expect(byAccount.report.totalDurationHours).toBeCloseTo(5);
    expect((await report('&cluster_id=c1')).report.totalOutages).toBe(2);
    expect((await report('&tags=db&tags=power')).entries.map((e: any) => e.start)).toEqual([at(20), at(0)]);
    expect((await report('&tags=power')).report.totalOutages).toBe(1);
    expect((await report(`&account_id=${acme}&cluster_id=c1&tags=network`)).report.totalOutages).toBe(1);
  });

  it('answers 400 for a malformed report filter', async () => {
    for (const query of ['&start=yesterday', '&start=2026-10-01', '&account_id=abc', '&account_id=-1']) {
      const res = await api('root', 'GET', `${OUTAGES}/report?org=acme${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
  });

  it('lists the unique tags', async () => {
    const res = await api('root', 'GET', `${OUTAGES}/tags?org=acme`);
    expect(res).toEqual({ status: 200, body: ['db', 'network', 'power'] });
  });

  it('is for site admins: 401 without a token, 403 for others (an org owner too), 400 without org', async () => {
    const body = { start: at(50), end: at(51) };
    for (const [method, path, json] of [
      ['POST', `${OUTAGES}/`, body],
      ['GET', `${OUTAGES}/report`, undefined],
      ['GET', `${OUTAGES}/tags`, undefined],
    ] as const) {
      expect((await api(undefined, method, `${path}?org=acme`, json)).status).toBe(401);
      expect((await api('mallory', method, `${path}?org=acme`, json)).status).toBe(403);
      expect((await api('olivia', method, `${path}?org=acme`, json)).status).toBe(403);
      const noOrg = await api('root', method, path, json);
      expect(noOrg.status).toBe(400);
      expect(noOrg.body.message).toMatch(/org/);
    }
  });
});

describe('system outages where billing is disabled', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await bootTestPlatform({});
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404 with {message} for every system-outage route, to site admins too', async () => {
    const gated = registeredRoutesOn({ BILLING_ENABLED: 'true' }).filter((r) => r.path.startsWith(OUTAGES));
    expect(gated).toHaveLength(3);
    expect(registeredRoutesOn({}).filter((r) => r.path.startsWith(OUTAGES))).toEqual([]);
    for (const r of gated) {
      const body = r.method === 'post' ? { start: at(0), end: at(1) } : undefined;
      const res = await t.api('root', r.method.toUpperCase(), `${r.path}?org=acme`, body);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
  });
});
