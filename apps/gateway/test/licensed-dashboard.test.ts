import { NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { clustersV1, licensedV1, licensingV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The licensed users, clusters, licenses and products of the admin billing dashboard (docs/billing-dashboard.md)
// against stand-in backends: each row asks billing-dashboard for what was reported (the window `limit` turned into
// a time), names the accounts from orgs-teams, the clusters from the inventory, and the issued licenses and contract
// counts from contracts-licensing, in the spec's shapes; who may call them; the 400s and 404s. What billing answers
// for a window and a scope: apps/billing-dashboard/test/licensed.int.test.ts; more than 1,000 clusters:
// licensed-many-clusters.test.ts; a change in another app seen on the next request: the licensed e2e case of
// deploy/local/test/licenses.e2e.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', email: 'root@example.com', active: true, isAdmin: true });
const MALLORY = orgsTeamsV1.User.fromPartial({ id: 5, login: 'mallory', email: 'mallory@example.com', active: true });
/** Owns the demo organization: no site admin. */
const OWNER = orgsTeamsV1.User.fromPartial({ id: 6, login: 'demo-owner', email: 'owner@example.com', active: true });
const USERS: Record<string, orgsTeamsV1.User> = { root: ROOT, mallory: MALLORY, owner: OWNER };
/** The organization that reported: type 1 is an organization account. */
const DEMO = { id: 10, login: 'demo', email: 'demo@example.com', type: 1 };
const HUB = 'aaaaaaaa-0000-4000-8000-000000000001';
const LID = 'lic-1';
/** A license the platform issued for the hub, revoked at REVOKED once `issued.revoked`. */
const SERIAL = '123456789';
const FIRST = 1_790_000_000;
const LAST = 1_795_000_000;
const ISSUED_AT = 1_780_000_000;
const NOT_AFTER = 1_820_000_000;
const REVOKED_AT = 1_796_000_000;

const entry = (over: Partial<licensedV1.LicensedEntry>) =>
  licensedV1.LicensedEntry.fromPartial({ userId: DEMO.id, clusterUid: HUB, firstReceivedUnix: FIRST, lastReceivedUnix: LAST, ...over });
/** What billing holds: the demo organization reported LID (productdb) and SERIAL on the hub. */
const reports = [entry({ licenseId: LID, product: 'productdb', clusterUids: [HUB] }), entry({ licenseId: SERIAL, product: 'productdb' })];
/** Billing's answer for a query: the reports matching its keys, last received since `sinceUnix`. */
const matching = (q: licensedV1.LicensedQuery) =>
  reports.filter(
    (r) =>
      (!q.userId || r.userId === q.userId) &&
      (!q.clusterUid || r.clusterUid === q.clusterUid) &&
      (!q.licenseId || r.licenseId === q.licenseId) &&
      (!q.product || r.product === q.product),
  );
const answer = (q: licensedV1.LicensedQuery) => ({
  entries: matching(q).filter((r) => r.lastReceivedUnix >= q.sinceUnix),
  reported: matching(q).length > 0,
});

describe('licensed users, clusters, licenses and products of the billing dashboard', () => {
  let backends: FakeBackends;
  const gateways: { base: string; close(): void }[] = [];
  let base: string;
  let disabled: string;
  const issued = { revoked: false };

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => {
            if (!USERS[token]) throw new NotAuthenticatedError('invalid token');
            return { user: USERS[token], tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
          },
          getAccounts: async ({ ids }) => ({
            users: [DEMO, ...Object.values(USERS)].filter((u) => ids.includes(u.id)).map((u) => orgsTeamsV1.User.fromPartial(u)),
          }),
          listUserAccounts: async () => ({ users: Object.values(USERS), nextAfterId: 0 }),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (name !== 'demo') throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: DEMO.id, username: 'demo', visibility: 'public' });
          },
        },
      },
      authz: {
        authz: {
          // The owner may do anything to its organization; only root holds permissions on the site.
          checkPermission: async ({ userId, objectId }) => ({
            allowed: userId === ROOT.id || (userId === OWNER.id && objectId === DEMO.id),
            dependsOn: [],
          }),
        },
      },
      billingDashboard: {
        licensed: {
          listLicensedUsers: async (q) => {
            const since = answer(q).entries;
            return since.length ? { entries: [entry({ lastReceivedUnix: LAST })], reported: true } : { entries: [], reported: true };
          },
          listUserClusters: async (q) => {
            const { entries, reported } = answer(q);
            return { entries: entries.slice(0, 1), reported };
          },
          listClusterLicenses: async (q) => answer(q),
          listLicensedProducts: async (q) => {
            const { entries, reported } = answer(q);
            return { entries: entries.filter((e) => e.licenseId === q.licenseId), reported };
          },
          listActiveClusterLicenses: async (q) => answer(q),
        },
      },
      clusters: {
        clusters: {
          getClusters: async ({ uids }) => ({
            clusters: uids
              .filter((uid) => uid === HUB)
              .map((uid) =>
                clustersV1.Cluster.fromPartial({
                  id: 3,
                  uid,
                  name: 'hub',
                  displayName: 'Hub',
                  ownerId: DEMO.id,
                  provider: 'kind',
                  kubernetesVersion: '1.31',
                  nodeCount: 3,
                  createdUnix: ISSUED_AT,
                  observedUnix: LAST,
                  statusJson: '{"phase":"Ready"}',
                }),
              ),
          }),
        },
      },
      contractsLicensing: {
        contracts: {
          countClusterContracts: async ({ clusters }) => ({
            counts: Object.fromEntries(clusters.map((c) => [c, c === HUB ? (issued.revoked ? 1 : 2) : 0])),
            endsUnix: {},
          }),
        },
        licenses: {
          getIssuedLicenses: async ({ serials }) => ({
            licenses: serials.includes(SERIAL)
              ? [
                  licensingV1.IssuedLicense.fromPartial({
                    serial: SERIAL,
                    ownerId: DEMO.id,
                    email: 'ops@demo.example',
                    clusterUid: HUB,
                    planName: 'productdb-enterprise',
                    issuedUnix: ISSUED_AT,
                    notAfterUnix: NOT_AFTER,
                    revokedUnix: issued.revoked ? REVOKED_AT : 0,
                  }),
                ]
              : [],
          }),
        },
      },
    });
    for (const billing of ['true', 'false'])
      gateways.push(await startTestGateway({ ...backends.env, BILLING_ENABLED: billing, PLATFORM_ADMIN_ORG: 'none' }));
    [base, disabled] = gateways.map((g) => g.base);
  });
  afterAll(async () => {
    gateways.forEach((g) => g.close());
    await backends?.close();
  });
  beforeEach(() => {
    backends.reset();
    issued.revoked = false;
  });

  const get = async (path: string, who: string | null = 'root', on = base) => {
    const res = await fetch(`${on}/api/v1${path}${path.includes('?') ? '&' : '?'}org=demo`, {
      headers: who ? { authorization: `token ${who}` } : {},
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const ok = async (path: string) => {
    const res = await get(path);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    return res.body;
  };
  const user = `/dashboard/users/${DEMO.id}`;
  const pair = `${user}/clusters/${HUB}`;
  const license = `${pair}/licenses/${LID}`;
  const demoUser = { username: 'demo', userType: 'organization', email: DEMO.email, userID: DEMO.id, lastReceivedAt: LAST };
  /** The windows billing was asked for the users, as Unix seconds. */
  const since = () => backends.billingDashboard.callsTo('licensed', 'listLicensedUsers').map((q) => q.sinceUnix);

  it('lists the organization among the users who reported, and among the active ones only in a window that holds its reports', async () => {
    expect(await ok('/dashboard/users/')).toEqual([demoUser]);
    expect(await ok('/dashboard/users/active')).toEqual([demoUser]);
    // The default window is the last 180 days; a date or a Go duration sets it.
    const [defaultSince] = since().slice(-1);
    expect(Math.abs(defaultSince - (Date.now() / 1000 - 180 * 86_400))).toBeLessThan(60);
    expect(await ok('/dashboard/users/active?limit=2000-01-01')).toEqual([demoUser]);
    expect(since().slice(-1)).toEqual([Date.UTC(2000, 0, 1) / 1000]);
    await ok('/dashboard/users/active?limit=876000h');
    expect(Math.abs(since().slice(-1)[0] - (Date.now() / 1000 - 876_000 * 3600))).toBeLessThan(60);
    const after = new Date((LAST + 86_400) * 1000).toISOString().slice(0, 10);
    expect(await ok(`/dashboard/users/active?limit=${after}`)).toEqual([]);
  });

  it('lists as inactive the user accounts that never reported, with lastReceivedAt 0, and no organization', async () => {
    expect(await ok('/dashboard/users/inactive')).toEqual(
      [ROOT, MALLORY, OWNER].map((u) => ({ username: u.login, userType: 'user', email: u.email, userID: u.id, lastReceivedAt: 0 })),
    );
  });

  it('answers the user’s clusters from the inventory with the owner organization’s name, by any case of the UID', async () => {
    const hub = {
      id: 3,
      displayName: 'Hub',
      name: 'hub',
      uid: HUB,
      ownerID: DEMO.id,
      ownerName: 'demo',
      provider: 'kind',
      kubernetesVersion: '1.31',
      nodeCount: 3,
      createdAt: new Date(ISSUED_AT * 1000).toISOString(),
      status: { phase: 'Ready' },
    };
    expect(await ok(`${user}/clusters/`)).toEqual([hub]);
    expect(await ok(pair)).toEqual(hub);
    expect(await ok(`${user}/clusters/${HUB.toUpperCase()}`)).toEqual(hub);
  });

  it('answers the user’s active clusters with the number of active contracts binding each', async () => {
    expect(await ok(`${user}/clusters/active`)).toEqual([
      { username: 'demo', clusterID: HUB, firstReceivedAt: FIRST, lastReceivedAt: LAST, noOfAssociatedContracts: 2 },
    ]);
    expect(await ok(`${user}/clusters/active?limit=2999-01-01`)).toEqual([]);
  });

  it('answers the licenses on the cluster: one not issued here as the reports tell, one issued here with its plan, holder, validity and revocation', async () => {
    const reported = {
      uid: DEMO.id,
      email: DEMO.email,
      licenseID: LID,
      clusters: [HUB],
      planName: '',
      notBefore: 0,
      notAfter: 0,
      registeredAt: FIRST,
      createdAt: FIRST,
      updatedAt: LAST,
    };
    const platforms = {
      uid: DEMO.id,
      email: 'ops@demo.example',
      licenseID: SERIAL,
      clusters: [HUB],
      planName: 'productdb-enterprise',
      notBefore: ISSUED_AT,
      notAfter: NOT_AFTER,
      registeredAt: FIRST,
      createdAt: ISSUED_AT,
      updatedAt: ISSUED_AT,
    };
    expect(await ok(`${pair}/licenses/`)).toEqual([reported, platforms]);
    const one = await ok(license);
    expect(one.license).toEqual(reported);
    expect(one.siteinfo).toMatchObject({ uid: HUB, name: 'hub', observedAt: new Date(LAST * 1000).toISOString() });
    expect((await ok(`${pair}/licenses/${SERIAL}`)).license).toEqual(platforms);
    // A revoked license's updatedAt is its revocation.
    issued.revoked = true;
    expect((await ok(`${pair}/licenses/${SERIAL}`)).license.updatedAt).toBe(REVOKED_AT);

    const active = { username: 'demo', email: DEMO.email, userId: DEMO.id, firstReceivedAt: FIRST, lastReceivedAt: LAST };
    expect(await ok(`${pair}/licenses/active`)).toEqual([
      { ...active, licenseID: LID },
      { ...active, licenseID: SERIAL },
    ]);
    expect(await ok(`${pair}/licenses/active?limit=2999-01-01`)).toEqual([]);
  });

  it('answers the products received under the license, all of them and one', async () => {
    const product = {
      userName: 'demo',
      userType: 'organization',
      email: DEMO.email,
      userID: DEMO.id,
      clusterID: HUB,
      licenseID: LID,
      productName: 'productdb',
      firstReceivedAt: FIRST,
      lastReceivedAt: LAST,
    };
    expect(await ok(`${license}/products/`)).toEqual([product]);
    expect(await ok(`${license}/products/productdb`)).toEqual(product);
    expect(await ok(`${license}/products/?limit=2999-01-01`)).toEqual([]);
    const outside = await get(`${license}/products/productdb?limit=2999-01-01`);
    expect(outside.status).toBe(404);
    expect(outside.body.message).toMatch(/since 2999-01-01/);
  });

  it('answers every user’s active licenses on a cluster; a cluster nobody reported from has none', async () => {
    expect((await ok(`/dashboard/clusters/${HUB}/licenses/active`)).map((l: { licenseID: string }) => l.licenseID)).toEqual([LID, SERIAL]);
    expect(await ok(`/dashboard/clusters/${HUB}/licenses/active?limit=2999-01-01`)).toEqual([]);
    expect(await ok('/dashboard/clusters/00000000-0000-4000-8000-000000000000/licenses/active')).toEqual([]);
  });

  it('answers 404 with a message for an unknown user/cluster pair, license or product; an unknown user has no clusters', async () => {
    const stranger = `/dashboard/users/${MALLORY.id}/clusters/${HUB}`;
    const nowhere = `${user}/clusters/00000000-0000-4000-8000-000000000000`;
    for (const p of [
      stranger,
      `${stranger}/licenses/`,
      `${stranger}/licenses/active`,
      `${stranger}/licenses/${LID}`,
      nowhere,
      `${nowhere}/licenses/`,
      `${pair}/licenses/no-such-license`,
      `${pair}/licenses/no-such-license/products/`,
      `${license}/products/no-such-product`,
    ]) {
      const res = await get(p);
      expect({ path: p, status: res.status, message: typeof res.body?.message }).toEqual({ path: p, status: 404, message: 'string' });
    }
    expect(await ok('/dashboard/users/999999/clusters/')).toEqual([]);
  });

  it('answers 400 with a message for a uid that is no integer, a cid that is no UUID, or a limit that is neither duration nor date', async () => {
    for (const [p, why] of [
      ['/dashboard/users/abc/clusters/', /uid/],
      ['/dashboard/users/1.5/clusters/active', /uid/],
      [`${user}/clusters/not-a-uuid`, /cid/],
      ['/dashboard/clusters/not-a-uuid/licenses/active', /cid/],
      ['/dashboard/users/active?limit=30d', /limit/],
      ['/dashboard/users/active?limit=2026-02-30', /limit/],
      [`${user}/clusters/active?limit=yesterday`, /limit/],
      [`${license}/products/?limit=-1h`, /limit/],
    ] as const) {
      const res = await get(p);
      expect({ path: p, status: res.status }).toEqual({ path: p, status: 400 });
      expect(res.body.message).toMatch(why);
    }
  });

  /** The twelve rows, as the gateway registers them (the resources and events below a product are not these). */
  const licensedRows = (env: Record<string, string>) =>
    registeredRoutesOn(env).filter((r) => /^\/dashboard\/(users|clusters)\//.test(r.path) && !/:productName\/./.test(r.path));
  const fill = (path: string) =>
    path.replace(':uid', String(DEMO.id)).replace(':cid', HUB).replace(':lid', LID).replace(':productName', 'productdb');

  it('is for site admins: 401 without a token, 403 for others (the organization owner too), 400 without org, on every row', async () => {
    const rows = licensedRows({ BILLING_ENABLED: 'true' });
    expect(rows).toHaveLength(12);
    for (const r of rows) {
      const p = fill(r.path);
      expect({ path: p, status: (await get(p, null)).status }).toEqual({ path: p, status: 401 });
      expect({ path: p, status: (await get(p, 'mallory')).status }).toEqual({ path: p, status: 403 });
      expect({ path: p, status: (await get(p, 'owner')).status }).toEqual({ path: p, status: 403 });
      const noOrg = await fetch(`${base}/api/v1${p}`, { headers: { authorization: 'token root' } });
      expect({ path: p, status: noOrg.status }).toEqual({ path: p, status: 400 });
      expect(((await noOrg.json()) as { message: string }).message).toMatch(/org/);
    }
    expect(backends.billingDashboard.callsTo('licensed', 'listLicensedUsers')).toEqual([]);
  });

  it('answers 404 with {message} on every row where billing is disabled, to site admins too', async () => {
    expect(licensedRows({})).toEqual([]);
    for (const r of licensedRows({ BILLING_ENABLED: 'true' })) {
      const res = await get(fill(r.path), 'root', disabled);
      expect({ route: r.path, status: res.status, message: typeof res.body?.message }).toEqual({
        route: r.path,
        status: 404,
        message: 'string',
      });
    }
  });
});
