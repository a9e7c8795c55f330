import { NotFoundError } from '@platform/errors';
import { authzRolesV1, authzV1, orgsTeamsOrgsV1, orgsTeamsSettingsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
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
  let orgsTeams: RunningGrpcServer;
  let authz: RunningGrpcServer;
  let close: () => void;
  const asked: string[] = [];

  beforeAll(async () => {
    const log = createLogger('stub', 'silent');
    orgsTeams = await startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(orgsTeamsV1.OrgsTeamsServiceService, {
          authenticate: async ({ token }: { token: string }) => ({ user: USERS[token], tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
          getUser: async ({ login }: { login: string }) => {
            if (!USERS[login]) throw new NotFoundError(`user ${login} does not exist`);
            return USERS[login];
          },
        } as never),
        bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
          getOrg: async ({ name, viewerId }: { name: string; viewerId: number }) => {
            asked.push(name);
            const org = ORGS[name];
            const sees = org && (org.visibility === 'public' || org.members.includes(viewerId) || viewerId === USERS.root.id);
            if (!sees) throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: org.id, username: name, visibility: org.visibility });
          },
        } as never),
        bindService(orgsTeamsSettingsV1.SiteSettingsServiceService, {
          addAllowedDomain: async ({ name }: { name: string }) => ({ names: [name] }),
        } as never),
      ],
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto', 'platformadmin/orgsteams/v1/orgs.proto', 'platformadmin/orgsteams/v1/settings.proto'],
      log,
    });
    authz = await startGrpcServer({
      name: 'authz',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(authzV1.AuthzServiceService, {
          checkPermission: async ({ userId, permission, objectId }: { userId: number; permission: string; objectId: number }) => {
            if (userId === USERS.root.id) return { allowed: true, dependsOn: [] };
            if (permission.endsWith(':site_admin')) return { allowed: false, dependsOn: [] };
            return { allowed: !!byId(objectId)?.members.includes(userId), dependsOn: [] };
          },
        } as never),
        bindService(authzRolesV1.RolesServiceService, { listRoles: async () => ({ roles: [], maxRolesPerTeam: 10 }) } as never),
      ],
      protoFiles: ['platformadmin/authz/v1/authz.proto', 'platformadmin/authz/v1/roles.proto'],
      log,
    });
    ({ base, close } = await startTestGateway({
      ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.port}`,
      AUTHZ_GRPC_ADDR: `127.0.0.1:${authz.port}`,
    }));
  });
  afterAll(async () => {
    close?.();
    await orgsTeams?.shutdown(100);
    await authz?.shutdown(100);
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
    asked.length = 0;
    for (const org of ['nosuchorg', 'hidden', 'acme']) {
      expect(await call('bob', 'POST', `/allowed-domains?org=${org}`, { name: 'example.com' })).toEqual({
        status: 403,
        message: 'you do not have the edit_allowed_domains:site_admin permission',
      });
    }
    expect((await call('bob', 'POST', '/allowed-domains', { name: 'example.com' })).status).toBe(403);
    expect(asked).toEqual([]);
  });

  it('answers an org longer than any login as an unknown one, quoting only its start, without asking orgs-teams', async () => {
    asked.length = 0;
    const long = 'a'.repeat(5_000);
    const refused = await call('alice', 'GET', `/authz/roles?org=${long}`);
    expect(refused.status).toBe(403);
    expect(refused.message).toMatch(/^you cannot act for organization "a+…" \(5000 characters\)$/);
    expect(refused.message!.length).toBeLessThan(300);
    expect((await call('root', 'GET', `/authz/roles?org=${long}`)).status).toBe(404);
    expect(asked).toEqual([]);
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
