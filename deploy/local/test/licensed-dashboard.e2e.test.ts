import { BILLING_CHANGED } from '@platform/bus';
import { registeredRoutesOn } from '@platform/app-gateway';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The licensed users, clusters, licenses and products of the admin billing dashboard
 * (docs/billing-dashboard.md) over HTTP, on a billing-enabled hosted platform seeded with the demo (the seed of
 * DEMO_SEED_MANIFEST, run in-process on the in-process bus: its simulator reports license usage for the manifest's `usage` keys, and
 * the demo contracts bind its clusters). The licensed user is the demo organization, which owns the clusters:
 * ingestion attributes a report to its license's holder, and the simulator's licenses were not issued by the
 * platform (docs/billing-ingestion.md). Every row answers the manifest's data with the spec's shapes (the
 * harness validates each answer against the API document); then the 400, 401, 403 and 404 paths; and 404 with
 * `{message}` where billing is disabled.
 */

type Usage = NonNullable<DemoManifest['usage']>;

/** The rows of this suite, as the gateway registers them (the resources/events rows below a product are not). */
const licensedRows = (env: Record<string, string>) =>
  registeredRoutesOn(env).filter((r) => /^\/dashboard\/(users|clusters)\//.test(r.path) && !/:productName\/./.test(r.path));

/** A row's path with the manifest's keys in it. */
const fill = (p: string, u: Usage) =>
  p.replace(':uid', String(u.uid)).replace(':cid', u.cid).replace(':lid', encodeURIComponent(u.lid)).replace(':productName', u.product);

describe('licensed users, clusters, licenses and products over HTTP on the demo data', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let u: Usage;
  /** The licensed user: the demo organization, its login and email. */
  let holder: { login: string; email: string };
  const withOrg = (p: string) => `${p}${p.includes('?') ? '&' : '?'}org=demo`;
  const get = async (p: string, who = 'root') => t.api(who, 'GET', withOrg(p));
  const ok = async (p: string) => {
    const res = await get(p);
    expect({ path: p, status: res.status }).toEqual({ path: p, status: 200 });
    return res.body;
  };
  const user = () => `/dashboard/users/${u.uid}`;
  const pair = () => `${user()}/clusters/${u.cid}`;
  const license = () => `${pair()}/licenses/${encodeURIComponent(u.lid)}`;

  beforeAll(async () => {
    demo = await bootDemoPlatform({ DEPLOYMENT_TYPE: 'Hosted' });
    ({ t, manifest, usage: u } = demo);
    await t.signUp('mallory');
    const org = (await t.api('root', 'GET', `/orgs/${manifest.owner.org}`)).body;
    expect(org.id).toBe(u.uid);
    holder = { login: manifest.owner.org, email: org.email ?? '' };
  }, 600_000);
  afterAll(() => demo?.stop());

  it('lists the demo organization among the users who reported, and among the active ones only in a window that holds its reports', async () => {
    const owner = {
      username: holder.login,
      userType: 'organization',
      email: holder.email,
      userID: u.uid,
      lastReceivedAt: expect.any(Number),
    };
    const all = await ok('/dashboard/users/');
    expect(all).toContainEqual(owner);
    const last = all.find((x: any) => x.userID === u.uid).lastReceivedAt;
    expect(last).toBeGreaterThan(Date.UTC(Number(u.year), Number(u.month) - 1, 1) / 1000);
    expect(last).toBeLessThanOrEqual(Date.now() / 1000);

    // The default window is the last 180 days, which the demo's last months fall in; a date or a duration sets it.
    expect(await ok('/dashboard/users/active')).toContainEqual(owner);
    expect(await ok('/dashboard/users/active?limit=2000-01-01')).toContainEqual(owner);
    expect(await ok('/dashboard/users/active?limit=876000h')).toContainEqual(owner);
    const after = new Date((last + 86_400) * 1000).toISOString().slice(0, 10);
    expect((await ok(`/dashboard/users/active?limit=${after}`)).map((x: any) => x.userID)).not.toContain(u.uid);
  });

  it('shows an organization’s new email on the very next request, though the gateway keeps what it shows of accounts', async () => {
    const emailOf = async () => (await ok('/dashboard/users/')).find((x: any) => x.userID === u.uid).email;
    expect(await emailOf()).toBe(holder.email);
    const edit = (email: string) => t.api('root', 'PATCH', `/orgs/${holder.login}`, { email });
    try {
      expect((await edit('licensing@demo.example.com')).status).toBe(200);
      expect(await emailOf()).toBe('licensing@demo.example.com');
    } finally {
      expect((await edit(holder.email)).status).toBe(200);
    }
    expect(await emailOf()).toBe(holder.email);
  });

  it('lists as inactive the user accounts that never reported, with lastReceivedAt 0, and no organization', async () => {
    const inactive = await ok('/dashboard/users/inactive');
    const logins = inactive.map((x: any) => x.username);
    // The demo owner reported nothing of its own: its organization's clusters report as the organization.
    expect(logins).toEqual(expect.arrayContaining(['root', 'mallory', manifest.owner.username]));
    expect(logins).not.toContain(manifest.owner.org);
    expect(inactive.find((x: any) => x.username === 'mallory')).toEqual({
      username: 'mallory',
      userType: 'user',
      email: 'mallory@example.com',
      userID: t.ids.mallory,
      lastReceivedAt: 0,
    });
    expect(inactive.every((x: any) => x.userType === 'user' && x.lastReceivedAt === 0)).toBe(true);
  });

  it('answers the user’s clusters from the inventory, with the owner organization’s name', async () => {
    const org = (await t.api('root', 'GET', `/orgs/${manifest.owner.org}`)).body;
    const expected = {
      id: expect.any(Number),
      displayName: expect.any(String),
      name: manifest.hub.name,
      uid: u.cid,
      ownerID: org.id,
      ownerName: manifest.owner.org,
      provider: expect.any(String),
      kubernetesVersion: expect.any(String),
      nodeCount: expect.any(Number),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      status: expect.any(Object),
    };
    const clusters = await ok(`${user()}/clusters/`);
    expect(clusters).toContainEqual(expected);
    expect(clusters.find((c: any) => c.uid === u.cid).id).toBeGreaterThan(0);
    // Only clusters of the demo: the hub and its spokes.
    const demoClusters = [manifest.hub.uid, ...manifest.spokes.map((s) => s.uid)];
    expect(clusters.every((c: any) => demoClusters.includes(c.uid))).toBe(true);
    expect(await ok(pair())).toEqual(expected);
    expect(await ok(`/dashboard/users/${u.uid}/clusters/${u.cid.toUpperCase()}`)).toEqual(expected);
  });

  it('answers the user’s active clusters with the number of active contracts binding each', async () => {
    const active = await ok(`${user()}/clusters/active`);
    const hub = active.find((c: any) => c.clusterID === u.cid);
    expect(hub).toEqual({
      username: holder.login,
      clusterID: u.cid,
      firstReceivedAt: expect.any(Number),
      lastReceivedAt: expect.any(Number),
      noOfAssociatedContracts: expect.any(Number),
    });
    // The demo organization's contract binds the hub and its spokes.
    expect(hub.noOfAssociatedContracts).toBeGreaterThanOrEqual(1);
    expect(hub.firstReceivedAt).toBeLessThanOrEqual(hub.lastReceivedAt);
    expect(await ok(`${user()}/clusters/active?limit=2999-01-01`)).toEqual([]);
  });

  it('answers the licenses of the user on the cluster, one with what the cluster last reported about itself', async () => {
    const plans = await ok(`${pair()}/licenses/`);
    const plan = plans.find((l: any) => l.licenseID === u.lid);
    // The simulator's licenses were not issued by this platform: the plan says what the reports tell.
    expect(plan).toEqual({
      uid: u.uid,
      email: holder.email,
      licenseID: u.lid,
      clusters: expect.arrayContaining([u.cid]),
      planName: '',
      notBefore: 0,
      notAfter: 0,
      registeredAt: expect.any(Number),
      createdAt: plan.registeredAt,
      updatedAt: expect.any(Number),
    });
    expect(plan.registeredAt).toBeGreaterThan(0);
    expect(plan.updatedAt).toBeGreaterThanOrEqual(plan.registeredAt);

    const one = await ok(license());
    expect(one.license).toEqual(plan);
    expect(one.siteinfo).toMatchObject({ uid: u.cid, name: manifest.hub.name, hubUID: '', status: expect.any(Object) });
    expect(one.siteinfo.observedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const active = await ok(`${pair()}/licenses/active`);
    expect(active).toContainEqual({
      username: holder.login,
      email: holder.email,
      userId: u.uid,
      licenseID: u.lid,
      firstReceivedAt: plan.registeredAt,
      lastReceivedAt: plan.updatedAt,
    });
    expect(await ok(`${pair()}/licenses/active?limit=2999-01-01`)).toEqual([]);
  });

  it('answers a license the platform issued with its contract’s plan, holder and validity', async () => {
    // The demo's license for the hub (issued from the organization's contract), as if the hub had reported using it.
    const issued = await t.platform.apps.get('contracts-licensing')!.ctx.db!.table('issued_licenses').where({ cluster_uid: u.cid }).first();
    expect(issued).toBeDefined();
    const reported = new Date(Date.now() - 3_600_000);
    await t.platform.apps.get('billing-dashboard')!.ctx.db!.table('licensed_products').insert({
      user_id: u.uid,
      cluster_uid: u.cid,
      license_id: issued.serial,
      product: u.product,
      first_received_at: reported,
      last_received_at: reported,
    });
    // Written behind billing-dashboard's back, so announced as its ingestion announces the reports it applies.
    await t.platform.apps.get('billing-dashboard')!.ctx.bus!.notify(BILLING_CHANGED, {});
    const org = (await t.api('root', 'GET', `/orgs/${manifest.owner.org}`)).body;
    const one = await ok(`${pair()}/licenses/${issued.serial}`);
    expect(one.license).toEqual({
      uid: org.id,
      email: expect.stringContaining('@'),
      licenseID: issued.serial,
      clusters: [u.cid],
      planName: expect.stringMatching(/-enterprise$/),
      notBefore: Math.floor(new Date(issued.issued_at).getTime() / 1000),
      notAfter: Math.floor(new Date(issued.not_after).getTime() / 1000),
      registeredAt: Math.floor(reported.getTime() / 1000),
      createdAt: Math.floor(new Date(issued.issued_at).getTime() / 1000),
      updatedAt: Math.floor(new Date(issued.issued_at).getTime() / 1000),
    });
    expect((await ok(`${pair()}/licenses/`)).map((l: any) => l.licenseID)).toEqual(expect.arrayContaining([issued.serial, u.lid]));
  });

  it('answers the products received under the license, all of them and one', async () => {
    const product = {
      userName: holder.login,
      userType: 'organization',
      email: holder.email,
      userID: u.uid,
      clusterID: u.cid,
      licenseID: u.lid,
      productName: u.product,
      firstReceivedAt: expect.any(Number),
      lastReceivedAt: expect.any(Number),
    };
    const products = await ok(`${license()}/products/`);
    expect(products).toContainEqual(product);
    expect(await ok(`${license()}/products/${u.product}`)).toEqual(products.find((p: any) => p.productName === u.product));
    expect(await ok(`${license()}/products/?limit=2999-01-01`)).toEqual([]);
    const outside = await get(`${license()}/products/${u.product}?limit=2999-01-01`);
    expect(outside.status).toBe(404);
    expect(outside.body.message).toMatch(/since 2999-01-01/);
  });

  it('answers every user’s active licenses on a cluster', async () => {
    const active = await ok(`/dashboard/clusters/${u.cid}/licenses/active`);
    expect(active).toContainEqual({
      username: holder.login,
      email: holder.email,
      userId: u.uid,
      licenseID: u.lid,
      firstReceivedAt: expect.any(Number),
      lastReceivedAt: expect.any(Number),
    });
    expect(await ok(`/dashboard/clusters/${u.cid}/licenses/active?limit=2999-01-01`)).toEqual([]);
    // A cluster nobody reported from has no licenses.
    expect(await ok('/dashboard/clusters/00000000-0000-4000-8000-000000000000/licenses/active')).toEqual([]);
  });

  it('answers 404 with a message for an unknown user/cluster pair, license or product', async () => {
    const stranger = `/dashboard/users/${t.ids.mallory}/clusters/${u.cid}`;
    const nowhere = `${user()}/clusters/00000000-0000-4000-8000-000000000000`;
    for (const p of [
      stranger,
      `${stranger}/licenses/`,
      `${stranger}/licenses/active`,
      `${stranger}/licenses/${encodeURIComponent(u.lid)}`,
      nowhere,
      `${nowhere}/licenses/`,
      `${pair()}/licenses/no-such-license`,
      `${pair()}/licenses/no-such-license/products/`,
      `${license()}/products/no-such-product`,
    ]) {
      const res = await get(p);
      expect({ path: p, status: res.status, message: typeof res.body?.message }).toEqual({ path: p, status: 404, message: 'string' });
    }
    // An unknown user has no clusters.
    expect(await ok(`/dashboard/users/999999/clusters/`)).toEqual([]);
  });

  it('answers 400 with a message for a uid that is no integer, a cid that is no UUID, or a limit that is neither duration nor date', async () => {
    for (const [p, why] of [
      ['/dashboard/users/abc/clusters/', /uid/],
      ['/dashboard/users/1.5/clusters/active', /uid/],
      [`${user()}/clusters/not-a-uuid`, /cid/],
      ['/dashboard/clusters/not-a-uuid/licenses/active', /cid/],
      ['/dashboard/users/active?limit=30d', /limit/],
      ['/dashboard/users/active?limit=2026-02-30', /limit/],
      [`${user()}/clusters/active?limit=yesterday`, /limit/],
      [`${license()}/products/?limit=-1h`, /limit/],
    ] as const) {
      const res = await get(p);
      expect({ path: p, status: res.status }).toEqual({ path: p, status: 400 });
      expect(res.body.message).toMatch(why);
    }
  });

  it('is for site admins: 401 without a token, 403 for others (the demo owner too), 400 without org, on every row', async () => {
    const rows = licensedRows({ BILLING_ENABLED: 'true' });
    expect(rows).toHaveLength(12);
    const owner = (
      await t.api(
        undefined,
        'POST',
        `/users/${manifest.owner.username}/tokens`,
        { name: 'e2e' },
        {
          authorization: `Basic ${Buffer.from(`${manifest.owner.username}:${manifest.owner.password}`).toString('base64')}`,
        },
      )
    ).body.sha1;
    t.tokens.owner = owner;
    for (const r of rows) {
      const p = fill(r.path, u);
      expect({ path: p, status: (await t.api(undefined, 'GET', withOrg(p))).status }).toEqual({ path: p, status: 401 });
      expect({ path: p, status: (await get(p, 'mallory')).status }).toEqual({ path: p, status: 403 });
      expect({ path: p, status: (await get(p, 'owner')).status }).toEqual({ path: p, status: 403 });
      const noOrg = await t.api('root', 'GET', p);
      expect({ path: p, status: noOrg.status }).toEqual({ path: p, status: 400 });
      expect(noOrg.body.message).toMatch(/org/);
    }
  });

  // Last: it revokes the demo's contract for the hub.
  it('shows a contract’s revocation on the very next request, though the gateway keeps the issued licenses and contract counts', async () => {
    // The license issued for the hub, reported as used (as in the issued-license case above).
    const issued = await t.platform.apps.get('contracts-licensing')!.ctx.db!.table('issued_licenses').where({ cluster_uid: u.cid }).first();
    const issuedAt = Math.floor(new Date(issued.issued_at).getTime() / 1000);
    const hubCount = async () => (await ok(`${user()}/clusters/active`)).find((c: any) => c.clusterID === u.cid).noOfAssociatedContracts;
    const updatedAt = async () => (await ok(`${pair()}/licenses/${issued.serial}`)).license.updatedAt;
    // Read twice: the second answers come from what the gateway kept.
    const before = await hubCount();
    expect(await hubCount()).toBe(before);
    expect(await updatedAt()).toBe(issuedAt);
    expect(await updatedAt()).toBe(issuedAt);

    expect((await t.api('root', 'POST', `/contracts/${issued.contract_id}/revoke`)).status).toBe(200);
    expect(await hubCount()).toBe(before - 1);
    // A revoked license's updatedAt is its revocation.
    expect(await updatedAt()).toBeGreaterThanOrEqual(issuedAt);
    const revokedAt = (
      await t.platform.apps.get('contracts-licensing')!.ctx.db!.table('issued_licenses').where({ serial: issued.serial }).first()
    ).revoked_at;
    expect(await updatedAt()).toBe(Math.floor(new Date(revokedAt).getTime() / 1000));
  });
});

describe('licensed dashboard rows where billing is disabled', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await bootTestPlatform({});
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404 with {message} on every row, to site admins too', async () => {
    const rows = licensedRows({ BILLING_ENABLED: 'true' });
    expect(rows).toHaveLength(12);
    expect(licensedRows({})).toEqual([]);
    const u = { uid: t.ids.root, cid: '00000000-0000-4000-8000-000000000000', lid: 'lic', product: 'productdb' } as Usage;
    for (const r of rows) {
      const res = await t.api('root', 'GET', `${fill(r.path, u)}?org=acme`);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
  });
});
