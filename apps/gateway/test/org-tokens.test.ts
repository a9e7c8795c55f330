import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1, orgTokensV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// An organization's machine credentials and claims over HTTP (docs/organization-tokens.md): the sync token's rows
// (and the deprecated user-token path), the system admin's tokens, bus tokens, and standalone-organization claims,
// against a stand-in orgs-teams. Who may: the owner; a stranger 403, an unknown organization 404, no token 401.
// orgs-teams' own rules: apps/orgs-teams/test/org-credentials.int.test.ts, src/org-tokens/org-tokens.int.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const OWNER = orgsTeamsV1.User.fromPartial({ id: 5, login: 'owner', active: true });
const STRANGER = orgsTeamsV1.User.fromPartial({ id: 6, login: 'stranger', active: true });
const USERS = [ROOT, OWNER, STRANGER];
const ORGS: Record<string, number> = { fleet: 10, plain: 11, standalone: 12 };
const SECRET = 'a'.repeat(40);
const CLAIM = '0b7d4c1e-0000-4000-8000-000000000001';
const BUS_KEY = `U${'A'.repeat(55)}`;

describe('organization tokens and claims at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (!ORGS[name]) throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: ORGS[name], username: name, visibility: 'public' });
          },
        },
        orgTokens: {
          getSyncToken: async ({ orgId }) => {
            if (orgId !== ORGS.fleet) throw new NotFoundError('the organization has no manager sync token');
            return { userId: 77, orgId, orgName: 'fleet', accessKeyId: 'key-1', secretAccessKey: SECRET };
          },
          createSyncToken: async ({ orgId }) => {
            if (orgId !== ORGS.fleet) throw new InputError('the organization is not of multi-cluster-manager origin');
            return { message: 'manager sync token created' };
          },
          deleteSyncToken: async () => ({ message: 'manager sync token removed' }),
          listSystemAdminTokens: async ({ orgId }) => {
            if (orgId !== ORGS.fleet) throw new InputError('the organization has no system admin yet');
            return { tokens: [orgTokensV1.AccessTokenInfo.fromPartial({ id: 3, uid: 77, name: 'hub-sync', hasUsed: true })] };
          },
          listBusAccounts: async ({ orgId }) => {
            if (orgId !== ORGS.fleet) throw new InputError('the organization has no system admin yet');
            return {
              accounts: [
                {
                  id: 4,
                  uid: 77,
                  accountType: 'user',
                  busPubKey: BUS_KEY,
                  clusterId: 'cluster-1',
                  productName: 'productdb',
                  revoked: false,
                },
              ],
            };
          },
          revokeBusAccount: async ({ id }) => {
            if (id !== 4) throw new InputError(`bus user ${id} not found`);
            return { message: 'revoked' };
          },
        },
        claims: {
          oldestClaimable: async () => ({ isClaimable: true, claimId: CLAIM }),
          claimOrg: async ({ claimId }) => {
            if (claimId === 'taken') throw new ConflictError('the organization is claimed already');
            if (claimId !== CLAIM) throw new NotFoundError(`claim ${claimId} does not exist`);
            return { orgId: ORGS.standalone, orgName: 'standalone' };
          },
        },
      },
      authz: {
        // The owner holds every permission on its organizations, root every one anywhere, the stranger none.
        authz: {
          checkPermission: async ({ userId, objectId }) => ({
            allowed: userId === ROOT.id || (userId === OWNER.id && objectId !== 0),
            dependsOn: [],
          }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string | undefined, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(who ? { authorization: `token ${who}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('manages the sync token: its secret, on either path, made only for the manager origin, removable', async () => {
    const wrongOrigin = await call('owner', 'POST', '/orgs/plain/manager/sync-token', {});
    expect(wrongOrigin).toEqual({
      status: 400,
      body: { message: 'the organization is not of multi-cluster-manager origin', url: expect.any(String) },
    });
    expect(await call('owner', 'POST', '/orgs/fleet/manager/sync-token', { name: 'hub-sync' })).toEqual({
      status: 200,
      body: { message: 'manager sync token created' },
    });
    expect(backends.orgsTeams.callsTo('orgTokens', 'createSyncToken').at(-1)).toEqual({ orgId: ORGS.fleet, name: 'hub-sync', sha1: '' });
    const expected = { userID: 77, orgID: ORGS.fleet, orgName: 'fleet', accessKeyID: 'key-1', secretAccessKey: SECRET };
    expect(await call('owner', 'GET', '/orgs/fleet/manager/sync-token')).toEqual({ status: 200, body: expected });
    expect(await call('owner', 'GET', '/orgs/fleet/manager/user-token')).toEqual({ status: 200, body: expected });
    expect((await call('owner', 'GET', '/orgs/plain/manager/sync-token')).status).toBe(404);
    expect(await call('owner', 'DELETE', '/orgs/fleet/manager/sync-token')).toEqual({
      status: 200,
      body: { message: 'manager sync token removed' },
    });
    expect(backends.orgsTeams.callsTo('orgTokens', 'deleteSyncToken')).toEqual([{ orgId: ORGS.fleet }]);
  });

  it("lists the system admin's tokens without their secret, and bus tokens with their keys; 400 without a system admin", async () => {
    expect((await call('owner', 'GET', '/orgs/fleet/tokens/access-tokens/')).body).toEqual([
      expect.objectContaining({ name: 'hub-sync', uid: 77, token: '', hasUsed: true }),
    ]);
    expect((await call('owner', 'GET', '/orgs/fleet/tokens/bus-tokens/')).body).toEqual([
      { id: 4, uid: 77, accountType: 'user', busPubKey: BUS_KEY, clusterID: 'cluster-1', productName: 'productdb', revoked: false },
    ]);
    expect((await call('owner', 'GET', '/orgs/plain/tokens/bus-tokens/')).status).toBe(400);
    expect((await call('owner', 'GET', '/orgs/plain/tokens/access-tokens/')).status).toBe(400);
  });

  it('revokes a bus token by its id; an unknown id is 400, a malformed one 400 before orgs-teams is asked', async () => {
    expect((await call('owner', 'POST', '/orgs/fleet/tokens/bus-tokens/4/revoke')).status).toBe(200);
    expect((await call('owner', 'POST', '/orgs/fleet/tokens/bus-tokens/999999/revoke')).status).toBe(400);
    expect((await call('owner', 'POST', '/orgs/fleet/tokens/bus-tokens/abc/revoke')).status).toBe(400);
    expect(backends.orgsTeams.callsTo('orgTokens', 'revokeBusAccount')).toEqual([
      { orgId: ORGS.fleet, id: 4 },
      { orgId: ORGS.fleet, id: 999999 },
    ]);
  });

  it('refuses strangers with 403, unknown organizations with 404 and no token with 401', async () => {
    expect((await call('stranger', 'GET', '/orgs/fleet/manager/sync-token')).status).toBe(403);
    expect((await call('stranger', 'GET', '/orgs/fleet/tokens/access-tokens/')).status).toBe(403);
    expect((await call('stranger', 'GET', '/orgs/fleet/tokens/bus-tokens/')).status).toBe(403);
    expect((await call('owner', 'GET', '/orgs/nowhere/tokens/bus-tokens/')).status).toBe(404);
    expect((await call(undefined, 'GET', '/orgs/fleet/tokens/bus-tokens/')).status).toBe(401);
  });

  it('offers the oldest claimable organization to site admins, and moves a claimed one to the caller: 404 unknown, 409 claimed', async () => {
    expect((await call('stranger', 'GET', '/orgs/claim/')).status).toBe(403);
    expect(await call('root', 'GET', '/orgs/claim/')).toEqual({ status: 200, body: { isClaimable: true, claimID: CLAIM } });
    expect((await call('stranger', 'PATCH', '/orgs/claim/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    const claimed = await call('stranger', 'PATCH', `/orgs/claim/${CLAIM}`);
    expect(claimed).toMatchObject({ status: 200, body: { id: ORGS.standalone, username: 'standalone' } });
    expect(backends.orgsTeams.callsTo('claims', 'claimOrg').at(-1)).toEqual({ claimId: CLAIM, userId: STRANGER.id });
    expect((await call('owner', 'PATCH', '/orgs/claim/taken')).status).toBe(409);
  });
});
