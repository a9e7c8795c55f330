import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { clientOrgsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway, callApi } from './test-gateway';

// Client organizations at the edge (docs/client-organizations.md), against a stand-in clusters app and orgs-teams:
// site admins only (401, 403 with nothing asked), bodies checked before clusters is asked (422), the create body
// handed on as one provisioning request (the sets imported only with importCluster, every role, the settings as
// JSON, the shared gateway config), the organizations answered in Gitea's shape from orgs-teams, the statuses, and
// clusters' 400, 404 and 409 passed on with their messages. What clusters does with them (checks, imports, the
// asynchronous cleanup to Deleted): apps/clusters/test/client-orgs.int.test.ts and operations.int.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const MALLORY = orgsTeamsV1.User.fromPartial({ id: 2, login: 'mallory', active: true });
const HUB = '0b7d4c1e-0000-4000-8000-000000000001';
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({
  id: 30,
  username: 'acme-client',
  fullName: 'acme-client Inc.',
  managerEndpoint: 'https://mcm',
});
const record = (orgId: number, name: string) => clientOrgsV1.ClientOrg.fromPartial({ orgId, name, hubUid: HUB, status: 'Active' });

/** A create body as the console sends it, importing `sets`. */
const params = (orgName: string, sets: string[] = [], extra: Record<string, unknown> = {}) => ({
  clientOrg: { orgName, orgFullName: `${orgName} Inc.` },
  hubClusterUID: HUB,
  hubClusterOwnerName: 'demo',
  userPermission: {
    userName: `${orgName}-admin`,
    email: `${orgName}-admin@example.com`,
    permissions: [
      ...sets.map((name) => ({
        name,
        isClusterSet: true,
        roleType: 'ClusterRole',
        roleRefName: 'open-cluster-management:managedclusterset:admin',
      })),
      { name: 'hub', isClusterSet: false, roleType: 'ClusterRole', roleRefName: 'view' },
    ],
    importCluster: sets.length > 0,
    clientOrg: true,
  },
  annotations: { tier: 'gold' },
  telemetryParams: { retentionDays: 30 },
  ...extra,
});
const hub = { hubClusterOwnerName: 'demo', hubClusterName: 'hub', hubClusterUID: HUB };

describe('client organizations at the edge', () => {
  let backends: FakeBackends;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      ...fakeOrgAndCaller([ROOT, MALLORY], ACME, (userId) => userId === ROOT.id),
      clusters: {
        clientOrgs: {
          // A client org whose organization orgs-teams no longer has is left out of the list.
          listClientOrgs: async () => ({ clientOrgs: [record(30, 'acme-client'), record(31, 'gone-client')] }),
          getClientOrg: async ({ orgId }) => {
            if (orgId !== 30) throw new NotFoundError(`no client organization ${orgId}`);
            return record(30, 'acme-client');
          },
          status: async ({ name, cluster }) => ({ status: name === 'acme-client' && cluster !== 'spoke-9' ? 'Active' : 'NotFound' }),
          provisionClientOrg: async ({ name, hubUid }) => {
            if (name === 'mallory') throw new ConflictError('a user named mallory already exists');
            if (hubUid !== HUB) throw new InputError(`hubClusterUID ${hubUid} is not a hub cluster of demo`);
            return { organization: ACME, clientOrg: record(30, name) };
          },
          addCluster: async ({ spokeClusterName }) => {
            if (spokeClusterName === 'spoke-1') throw new InputError('cluster spoke-1 is already imported');
            return record(30, 'acme-client');
          },
          removeCluster: async ({ clientOrg }) => {
            if (clientOrg !== 'acme-client') throw new NotFoundError(`no client organization ${clientOrg}`);
            return record(30, 'acme-client');
          },
          deleteClientOrg: async ({ orgId }) => {
            if (orgId === 31) throw new InputError('client organization shared is still referenced by the gateway config of beta-client');
            if (orgId !== 30) throw new NotFoundError(`no client organization ${orgId}`);
            return record(30, 'acme-client');
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });
  beforeEach(() => backends.clusters.reset());

  const api = (who: string | undefined, method: string, path: string, body?: unknown) => callApi(base, who, method, path, body);
  const asked = (method: keyof clientOrgsV1.ClientOrgsServiceService & string) => backends.clusters.callsTo('clientOrgs', method);

  it('is for site admins only: 401 without a token, 403 to others, clusters not asked', async () => {
    expect((await api(undefined, 'GET', '/user/clients')).status).toBe(401);
    for (const [method, path, body] of [
      ['GET', '/user/clients'],
      ['GET', '/user/client/30'],
      ['GET', '/user/client/acme-client/status'],
      ['POST', '/user/client/create', params('nope', ['tenant-a'])],
      ['POST', '/user/client/acme-client/add-cluster', { ...hub, spokeClusterName: 'spoke-2' }],
      ['POST', '/user/client/acme-client/delete-cluster', { ...hub, spokeClusterName: 'spoke-2' }],
      ['DELETE', '/user/client/delete/30'],
    ] as const)
      expect([method, path, (await api('mallory', method, path, body)).status]).toEqual([method, path, 403]);
    expect(backends.clusters.calls).toEqual([]);
  });

  it('lists and gets client organizations as orgs-teams has them, in Gitea’s shape; 404 passed on; the statuses', async () => {
    const list = await api('root', 'GET', '/user/clients');
    expect(list.body.map((o: { username: string }) => o.username)).toEqual(['acme-client']);
    expect((await api('root', 'GET', '/user/client/30')).body).toMatchObject({
      id: 30,
      username: 'acme-client',
      full_name: 'acme-client Inc.',
    });
    expect((await api('root', 'GET', '/user/client/999999')).status).toBe(404);
    expect((await api('root', 'GET', '/user/client/acme-client/status')).body).toEqual({ status: 'Active' });
    expect((await api('root', 'GET', '/user/client/acme-client/cluster/spoke-9/status')).body).toEqual({ status: 'NotFound' });
    expect(asked('status')).toEqual([
      { name: 'acme-client', cluster: '' },
      { name: 'acme-client', cluster: 'spoke-9' },
    ]);
  });

  it('creates one as a single provisioning request: the sets imported only with importCluster, every role, the settings; answers the organization', async () => {
    const made = await api(
      'root',
      'POST',
      '/user/client/create',
      params('acme-client', ['tenant-a'], { usableAsShared: true, gatewayConfig: { host: 'gw' } }),
    );
    expect(made).toMatchObject({ status: 200, body: { username: 'acme-client', managerManagementClusterEndPoint: 'https://mcm' } });
    // A set named in the permissions is not imported without importCluster.
    const beta = params('beta-client', ['tenant-b'], { gatewayConfigRef: { clientOrg: 'acme-client' } });
    await api('root', 'POST', '/user/client/create', { ...beta, userPermission: { ...beta.userPermission, importCluster: false } });
    const [acme, betas] = asked('provisionClientOrg');
    expect(acme).toMatchObject({
      name: 'acme-client',
      fullName: 'acme-client Inc.',
      hubUid: HUB,
      hubOwnerName: 'demo',
      adminLogin: 'acme-client-admin',
      adminEmail: 'acme-client-admin@example.com',
      importSets: ['tenant-a'],
      roleRefs: ['tenant-a/open-cluster-management:managedclusterset:admin', 'hub/view'],
      usableAsShared: true,
      gatewayConfigRef: '',
      requesterId: ROOT.id,
    });
    expect(JSON.parse(acme.settingsJson)).toEqual({
      annotations: { tier: 'gold' },
      dbConfig: {},
      useGateway: false,
      gatewayConfig: { host: 'gw' },
      telemetryParams: { retentionDays: 30 },
    });
    expect(betas).toMatchObject({
      importSets: [],
      roleRefs: ['tenant-b/open-cluster-management:managedclusterset:admin', 'hub/view'],
      gatewayConfigRef: 'acme-client',
      usableAsShared: false,
    });
  });

  it('refuses malformed bodies with 422 before clusters is asked, and passes its 400 and 409 on with their messages', async () => {
    for (const body of [{ clientOrg: { orgName: 'x' } }, { ...params('bad'), userPermission: { userName: 'x' } }])
      expect((await api('root', 'POST', '/user/client/create', body)).status).toBe(422);
    expect((await api('root', 'POST', '/user/client/acme-client/add-cluster', hub)).status).toBe(422);
    expect((await api('root', 'POST', '/user/client/acme-client/delete-cluster', { hubClusterUID: 'x' })).status).toBe(422);
    expect(backends.clusters.calls).toEqual([]);
    expect(await api('root', 'POST', '/user/client/create', { ...params('bad'), hubClusterUID: 'spoke' })).toMatchObject({
      status: 400,
      body: { message: 'hubClusterUID spoke is not a hub cluster of demo' },
    });
    expect(await api('root', 'POST', '/user/client/create', params('mallory'))).toMatchObject({
      status: 409,
      body: { message: 'a user named mallory already exists' },
    });
  });

  it('imports and removes a spoke as asked, 400 and 404 passed on; deletes by id, 400 naming who uses its gateway config, 404', async () => {
    const added = await api('root', 'POST', '/user/client/acme-client/add-cluster', {
      ...hub,
      spokeClusterName: 'spoke-2',
      annotations: { a: 'b' },
    });
    expect(added).toEqual({ status: 200, body: { message: 'cluster spoke-2 imported for acme-client' } });
    expect(asked('addCluster')).toEqual([
      { clientOrg: 'acme-client', hubUid: HUB, spokeClusterName: 'spoke-2', settingsJson: '{"annotations":{"a":"b"}}' },
    ]);
    expect(await api('root', 'POST', '/user/client/acme-client/add-cluster', { ...hub, spokeClusterName: 'spoke-1' })).toMatchObject({
      status: 400,
      body: { message: 'cluster spoke-1 is already imported' },
    });
    expect((await api('root', 'POST', '/user/client/acme-client/delete-cluster', { ...hub, spokeClusterName: 'spoke-2' })).status).toBe(
      200,
    );
    expect(asked('removeCluster')).toEqual([{ clientOrg: 'acme-client', hubUid: HUB, spokeClusterName: 'spoke-2' }]);
    expect((await api('root', 'POST', '/user/client/nobody/delete-cluster', { ...hub, spokeClusterName: 'spoke-2' })).status).toBe(404);

    expect(await api('root', 'DELETE', '/user/client/delete/30')).toEqual({
      status: 200,
      body: { message: 'client organization acme-client is being deleted' },
    });
    expect(asked('deleteClientOrg')).toEqual([{ orgId: 30, requesterId: ROOT.id }]);
    expect(await api('root', 'DELETE', '/user/client/delete/31')).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('beta-client') },
    });
    expect((await api('root', 'DELETE', '/user/client/delete/999999')).status).toBe(404);
  });
});
