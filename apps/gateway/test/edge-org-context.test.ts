import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackendHandlers, type FakeBackends, startFakeBackends, tokenIsLogin, userByLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The `org` context at the edge (docs/gateway.md): an `org` the caller cannot act for — unknown, or private and
// the caller not a member — is 403 with one message for both, so existence does not leak; a site requirement is
// checked before `org` is looked at; site admins, who see every organization, get 404 for an unknown one; an
// organization named in the path stays 404. The second part walks every row that takes `org` on a hosted deployment
// with billing, where all of them are served.

const USERS: Record<string, orgsTeamsV1.User> = {
  alice: orgsTeamsV1.User.fromPartial({ id: 1, login: 'alice', active: true }),
  root: orgsTeamsV1.User.fromPartial({ id: 2, login: 'root', active: true, isAdmin: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 3, login: 'bob', active: true }),
  mallory: orgsTeamsV1.User.fromPartial({ id: 4, login: 'mallory', active: true }),
};
/**
 * `acme` is public with alice as its member; `hidden` is private with bob as its only member; the administrative
 * organization is private with root in it; mallory is in none.
 */
const ORGS: Record<string, { id: number; visibility: string; members: number[] }> = {
  acme: { id: 10, visibility: 'public', members: [1] },
  hidden: { id: 11, visibility: 'private', members: [3] },
  'platform-admin': { id: 12, visibility: 'private', members: [2] },
};
const byId = (id: number) => Object.values(ORGS).find((o) => o.id === id);

/** The stand-in backends' answers: orgs-teams sees as ORGS say, authz allows members (and root) on their organization. */
const HANDLERS: FakeBackendHandlers = {
  orgsTeams: {
    identity: {
      authenticate: tokenIsLogin(USERS),
      getUser: userByLogin(USERS),
    },
    organizations: {
      getOrg: async ({ name, viewerId }) => {
        const org = ORGS[name];
        const sees = org && (org.visibility === 'public' || org.members.includes(viewerId) || viewerId === USERS.root.id);
        if (!sees) throw new NotFoundError(`organization ${name} does not exist`);
        return orgsTeamsOrgsV1.Organization.fromPartial({ id: org.id, username: name, visibility: org.visibility });
      },
    },
    siteSettings: {
      addAllowedDomain: async ({ name }) => ({ names: [name] }),
    },
  },
  authz: {
    authz: {
      checkPermission: async ({ userId, permission, objectId }) => {
        if (userId === USERS.root.id) return { allowed: true, dependsOn: [] };
        if (permission.endsWith(':site_admin')) return { allowed: false, dependsOn: [] };
        return { allowed: !!byId(objectId)?.members.includes(userId), dependsOn: [] };
      },
    },
    roles: { listRoles: async () => ({ roles: [], maxRolesPerTeam: 10 }) },
  },
};

describe('the org context at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** The organizations orgs-teams was asked for, by name. */
  const asked = () => backends.orgsTeams.callsTo('organizations', 'getOrg').map((r) => r.name);

  beforeAll(async () => {
    backends = await startFakeBackends(HANDLERS);
    ({ base, close } = await startTestGateway(backends.env));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${who}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };

  it('answers 403 with one message for an unknown org and for a private one the caller is not in', async () => {
    const unknown = await call('alice', 'GET', '/authz/roles?org=nosuchorg');
    const hidden = await call('alice', 'GET', '/authz/roles?org=hidden');
    expect(unknown).toEqual({ status: 403, message: 'you cannot act for organization "nosuchorg"' });
    expect(hidden).toEqual({ status: 403, message: 'you cannot act for organization "hidden"' });
    // Only the name differs: nothing tells which of the two exists.
    expect(unknown.message!.replace('nosuchorg', 'X')).toBe(hidden.message!.replace('hidden', 'X'));
  });

  it('lets a member act for its private org, and leaves a visible org to the row’s requirements', async () => {
    expect((await call('bob', 'GET', '/authz/roles?org=hidden')).status).toBe(200);
    expect((await call('alice', 'GET', '/authz/roles?org=acme')).status).toBe(200);
    expect(await call('bob', 'GET', '/authz/roles?org=acme')).toEqual({ status: 403, message: 'org membership required' });
  });

  it('answers a site admin 404 for an unknown org, and lets it act for a private org it is not in', async () => {
    expect(await call('root', 'GET', '/authz/roles?org=nosuchorg')).toEqual({
      status: 404,
      message: 'organization nosuchorg does not exist',
    });
    expect((await call('root', 'GET', '/authz/roles?org=hidden')).status).toBe(200);
    expect((await call('root', 'POST', '/allowed-domains?org=nosuchorg', { name: 'example.com' })).status).toBe(404);
    expect((await call('root', 'POST', '/allowed-domains?org=hidden', { name: 'example.com' })).status).toBe(200);
  });

  it('refuses a non-admin on a site-admin row with 403 whatever org names, before looking it up', async () => {
    backends.orgsTeams.reset();
    for (const org of ['nosuchorg', 'hidden', 'acme']) {
      expect(await call('bob', 'POST', `/allowed-domains?org=${org}`, { name: 'example.com' })).toEqual({
        status: 403,
        message: 'you do not have the edit_allowed_domains:site_admin permission',
      });
    }
    expect((await call('bob', 'POST', '/allowed-domains', { name: 'example.com' })).status).toBe(403);
    expect(asked()).toEqual([]);
  });

  it('answers an org longer than any login as an unknown one, quoting only its start, without asking orgs-teams', async () => {
    backends.orgsTeams.reset();
    const long = 'a'.repeat(5_000);
    const refused = await call('alice', 'GET', `/authz/roles?org=${long}`);
    expect(refused.status).toBe(403);
    expect(refused.message).toMatch(/^you cannot act for organization "a+…" \(5000 characters\)$/);
    expect(refused.message!.length).toBeLessThan(300);
    expect((await call('root', 'GET', `/authz/roles?org=${long}`)).status).toBe(404);
    expect(asked()).toEqual([]);
  });

  it('still answers 400 for a missing or repeated org', async () => {
    expect((await call('alice', 'GET', '/authz/roles')).status).toBe(400);
    expect((await call('alice', 'GET', '/authz/roles?org=acme&org=hidden')).status).toBe(400);
  });

  it('keeps 404 for an organization named in the path', async () => {
    expect((await call('alice', 'GET', '/orgs/nosuchorg')).status).toBe(404);
    expect((await call('alice', 'GET', '/orgs/hidden')).status).toBe(404);
  });
});

const CLUSTER = '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';

/** Site-admin rows (`requires` on the site), with the body each is sent. */
const SITE_ROWS: [string, string, unknown][] = [
  ['GET', '/dashboard/summary/generated-months', undefined],
  ['GET', '/dashboard/summary/2026/10/usage-report/products/productdb/views/clusters-usage-view', undefined],
  ['GET', '/dashboard/summary/2026/10/download', undefined],
  ['GET', '/dashboard/users/active', undefined],
  ['GET', '/dashboard/system-outages/report', undefined],
  ['GET', '/dashboard/marketplaces/subscriptions', undefined],
  ['DELETE', '/dashboard/marketplaces/ProviderA/sub-1', undefined],
  ['GET', '/user/clients', undefined],
  ['GET', '/user/client/secret/status', undefined],
  ['GET', '/contracts', undefined],
  ['GET', `/contracts/active/associated-clusters/${CLUSTER}/status`, undefined],
  ['POST', '/allowed-domains', { name: 'example.com' }],
];

/** Rows that act for `org` with requirements on the organization, not the site. */
const ORG_ROWS: [string, string, unknown][] = [
  ['GET', '/user/contracts', undefined],
  ['GET', '/user/contracts/active-offline-contracts', undefined],
  ['POST', '/user/license-proxy', {}],
  ['POST', '/metricsproxy/register', { clusterUID: CLUSTER }],
  ['POST', '/metricsproxy/unregister', { clusterUID: CLUSTER }],
  ['POST', '/branding', { appName: 'Mine' }],
  ['GET', '/authz/roles', undefined],
];

const withOrg = (path: string, org: string) => `${path}${path.includes('?') ? '&' : '?'}org=${org}`;

// The same rules on every row that takes `org`, on a hosted deployment with billing, where the dashboard and contract
// rows are served.
describe('the org context on every row that takes it (hosted, billing enabled)', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends(HANDLERS);
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', BILLING_ENABLED: 'true' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${who}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as { message?: string },
    };
  };

  it.each(ORG_ROWS)('%s %s: 403 to a non-member with one message for an unknown org and a private one', async (method, path, body) => {
    const unknown = await call('mallory', method, withOrg(path, 'nosuchorg'), body);
    const hidden = await call('mallory', method, withOrg(path, 'hidden'), body);
    expect(unknown).toEqual({ status: 403, body: { message: 'you cannot act for organization "nosuchorg"', url: expect.any(String) } });
    expect(hidden).toEqual({ status: 403, body: { message: 'you cannot act for organization "hidden"', url: expect.any(String) } });
  });

  it.each(SITE_ROWS)('%s %s: 403 to a non-admin whatever org names, with one message that names none', async (method, path, body) => {
    const answers = [];
    for (const org of ['nosuchorg', 'hidden', 'acme']) answers.push(await call('mallory', method, withOrg(path, org), body));
    answers.push(await call('mallory', method, path, body));
    // A member of the organization too: the row is the site's, not the organization's.
    answers.push(await call('bob', method, withOrg(path, 'hidden'), body));
    expect(answers.map((res) => res.status)).toEqual([403, 403, 403, 403, 403]);
    // The same message whichever organization is named (or none): nothing is learned of it.
    expect(new Set(answers.map((res) => res.body.message)).size).toBe(1);
    expect(answers[0].body.message).not.toMatch(/nosuchorg|hidden|exist/);
  });

  it('refuses acting for the administrative organization to a non-member like any other', async () => {
    expect(await call('mallory', 'POST', '/branding?org=platform-admin', { appName: 'Mine' })).toEqual({
      status: 403,
      body: { message: 'you cannot act for organization "platform-admin"', url: expect.any(String) },
    });
  });

  it('lets a member act for its private organization, and leaves a public one it is not in to the row', async () => {
    expect((await call('bob', 'GET', '/user/contracts?org=hidden')).status).toBe(200);
    expect((await call('bob', 'GET', '/user/contracts/active-offline-contracts?org=hidden')).status).toBe(200);
    expect((await call('bob', 'GET', '/authz/roles?org=hidden')).status).toBe(200);
    const res = await call('mallory', 'GET', '/authz/roles?org=acme');
    expect(res.status).toBe(403);
    expect(res.body.message).not.toMatch(/cannot act for/);
  });

  it('answers a site admin 404 for an unknown org on every row, and lets it act for a private one it is not in', async () => {
    for (const [method, path, body] of [...SITE_ROWS, ...ORG_ROWS]) {
      const res = await call('root', method, withOrg(path, 'nosuchorg'), body);
      expect([`${method} ${path}`, res.status]).toEqual([`${method} ${path}`, 404]);
    }
    expect((await call('root', 'GET', '/dashboard/summary/generated-months?org=hidden')).status).toBe(200);
    expect((await call('root', 'GET', '/contracts?org=hidden')).status).toBe(200);
    expect((await call('root', 'GET', '/user/contracts?org=hidden')).status).toBe(200);
  });

  it('keeps 404 for an organization named in the path, unknown or invisible, and shows it to its member', async () => {
    expect((await call('mallory', 'GET', '/orgs/nosuchorg')).status).toBe(404);
    expect((await call('mallory', 'GET', '/orgs/hidden')).status).toBe(404);
    expect((await call('mallory', 'GET', '/orgs/nosuchorg/teams')).status).toBe(404);
    expect((await call('root', 'GET', '/orgs/nosuchorg')).status).toBe(404);
    expect((await call('bob', 'GET', '/orgs/hidden')).status).toBe(200);
  });
});
