import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The `org` context at the edge (docs/gateway.md): an `org` the caller cannot act for — unknown, or private and
// the caller not a member — is 403 with one message for both, so existence does not leak; a site requirement is
// checked before `org` is looked at; site admins, who see every organization, get 404 for an unknown one; an
// organization named in the path stays 404.

const USERS: Record<string, orgsTeamsV1.User> = {
  alice: orgsTeamsV1.User.fromPartial({ id: 1, login: 'alice', active: true }),
  root: orgsTeamsV1.User.fromPartial({ id: 2, login: 'root', active: true, isAdmin: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 3, login: 'bob', active: true }),
};
/** `acme` is public with alice as its member; `hidden` is private with bob as its only member. */
const ORGS: Record<string, { id: number; visibility: string; members: number[] }> = {
  acme: { id: 10, visibility: 'public', members: [1] },
  hidden: { id: 11, visibility: 'private', members: [3] },
};
const byId = (id: number) => Object.values(ORGS).find((o) => o.id === id);

describe('the org context at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** The organizations orgs-teams was asked for, by name. */
  const asked = () => backends.orgsTeams.callsTo('organizations', 'getOrg').map((r) => r.name);

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => ({ user: USERS[token], tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
          getUser: async ({ login }) => {
            if (!USERS[login]) throw new NotFoundError(`user ${login} does not exist`);
            return USERS[login];
          },
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
    });
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
    expect(await call('root', 'GET', '/authz/roles?org=nosuchorg')).toEqual({ status: 404, message: 'organization nosuchorg does not exist' });
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
