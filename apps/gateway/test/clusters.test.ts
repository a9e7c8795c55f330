import { ConflictError } from '@platform/errors';
import { clustersV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway, callApi } from './test-gateway';

// Enrolling and listing an organization's hub clusters at the edge (docs/clusters.md) against stand-in backends: the
// body checked before clusters is asked (400 "invalid cluster ..."), what enrollHub is asked (the uid lower-cased, made
// when absent), the hub and its bus credentials answered once, clusters' 409 passed on, and who may call (create:cluster
// to enroll, members to list, site admins both, 403, 404 for an unknown organization, 401). The enrolment itself (the
// bus account issued and revoked when the hub is refused, the owner tuple, 409 naming no one):
// apps/clusters/test/operations.int.test.ts, apps/clusters/test/inventory.int.test.ts; a hub enrolled on a platform
// with its real seed, bus account and owner tuple: deploy/local/test/cluster-sets-features.e2e.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  olivia: orgsTeamsV1.User.fromPartial({ id: 1, login: 'olivia', active: true }),
  nora: orgsTeamsV1.User.fromPartial({ id: 2, login: 'nora', active: true }),
  mia: orgsTeamsV1.User.fromPartial({ id: 3, login: 'mia', active: true }),
  otto: orgsTeamsV1.User.fromPartial({ id: 4, login: 'otto', active: true }),
  root: orgsTeamsV1.User.fromPartial({ id: 5, login: 'root', active: true, isAdmin: true }),
};
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });
const UID = '3d5e7f90-1a2b-4c3d-9e8f-0a1b2c3d4e5f';
/** Who holds what on acme: olivia owns it, nora holds create:cluster, mia is a plain member. */
const HOLDS: Record<string, string[]> = {
  'access:org': ['olivia', 'nora', 'mia'],
  'create:cluster': ['olivia', 'nora'],
};
const HUB = clustersV1.Cluster.fromPartial({
  uid: UID,
  name: 'prod-east',
  displayName: 'Production East',
  provider: 'aws',
  kubernetesVersion: 'v1.30.2',
  nodeCount: 6,
  statusJson: JSON.stringify({ conditions: [{ type: 'Ready', status: 'True' }] }),
  managerEndpoint: 'https://mcm.example.com',
  createdUnix: 1_790_000_000,
});
const HUB_JSON = {
  uid: UID,
  name: 'prod-east',
  displayName: 'Production East',
  provider: 'aws',
  kubernetesVersion: 'v1.30.2',
  nodeCount: 6,
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
  managerEndpoint: 'https://mcm.example.com',
  createdAt: new Date(1_790_000_000_000).toISOString(),
  hubUID: '',
  features: [],
  connectedUsers: [],
};

describe('hub clusters at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      ...fakeOrgAndCaller(USERS, ACME, (userId, permission) =>
        [USERS.root, ...(HOLDS[permission] ?? []).map((login) => USERS[login])].some((u) => u.id === userId),
      ),
      clusters: {
        clusters: {
          enrollHub: async (req) => {
            if (req.name === 'taken') throw new ConflictError('a cluster named "taken" already exists');
            return {
              cluster: { ...HUB, name: req.name, uid: req.uid },
              bus: {
                account: { id: 7, uid: 0, accountType: 'cluster', busPubKey: 'UPUB', clusterId: req.uid, productName: '', revoked: false },
                seed: 'SUSEED',
                busNamespace: 'ns1',
              },
            };
          },
          listHubs: async () => ({ clusters: [HUB] }),
        },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  beforeEach(() => backends.reset());
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = (who: string | undefined, method: string, path: string, body?: unknown) => callApi(base, who, method, path, body);
  const enrolled = () => backends.clusters.callsTo('clusters', 'enrollHub');

  it('enrolls a hub: 201 with the cluster and its bus credentials, enrollHub asked with every field and the uid lower-cased', async () => {
    const res = await call('olivia', 'POST', '/orgs/acme/clusters', {
      name: 'prod-east',
      uid: UID.toUpperCase(),
      displayName: 'Production East',
      provider: 'aws',
      kubernetesVersion: 'v1.30.2',
      nodeCount: 6,
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
      managerEndpoint: 'https://mcm.example.com',
    });
    expect(res).toEqual({
      status: 201,
      body: { cluster: HUB_JSON, bus: { accountID: 7, publicKey: 'UPUB', seed: 'SUSEED', namespace: 'ns1' } },
    });
    expect(enrolled()).toEqual([
      {
        ownerType: 'organization',
        ownerId: ACME.id,
        name: 'prod-east',
        uid: UID,
        displayName: 'Production East',
        provider: 'aws',
        kubernetesVersion: 'v1.30.2',
        nodeCount: 6,
        statusJson: JSON.stringify({ conditions: [{ type: 'Ready', status: 'True' }] }),
        managerEndpoint: 'https://mcm.example.com',
      },
    ]);
  });

  it('lets a holder of create:cluster and a site admin enroll (a uid made when none is given); plain members and strangers 403, 401, 404', async () => {
    const byNora = await call('nora', 'POST', '/orgs/acme/clusters', { name: 'edge' });
    expect(byNora.status).toBe(201);
    expect(byNora.body.cluster.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await call('root', 'POST', '/orgs/acme/clusters', { name: 'by-admin' })).status).toBe(201);
    expect(enrolled().map((r) => r.name)).toEqual(['edge', 'by-admin']);
    backends.reset();
    expect((await call('mia', 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(403);
    expect((await call('otto', 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(403);
    expect((await call(undefined, 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(401);
    expect((await call('olivia', 'POST', '/orgs/nowhere/clusters', { name: 'sneaky' })).status).toBe(404);
    expect(enrolled()).toEqual([]);
  });

  it("passes clusters' 409 on with its message", async () => {
    const dup = await call('olivia', 'POST', '/orgs/acme/clusters', { name: 'taken' });
    expect(dup).toEqual({ status: 409, body: { message: 'a cluster named "taken" already exists', url: expect.any(String) } });
  });

  it('answers 400 "invalid cluster ..." for a bad name or body, clusters not asked', async () => {
    for (const name of ['Prod', 'a_b', '-x', 'x'.repeat(64), '', 7]) {
      const res = await call('olivia', 'POST', '/orgs/acme/clusters', { name });
      expect({ name, status: res.status, message: res.body.message }).toEqual({
        name,
        status: 400,
        message: expect.stringMatching(/^invalid cluster/),
      });
    }
    for (const body of [{}, { name: 'ok', uid: 'nope' }, { name: 'ok', status: [1] }, { name: 'ok', nodeCount: -1 }]) {
      expect({ body, status: (await call('olivia', 'POST', '/orgs/acme/clusters', body)).status }).toEqual({ body, status: 400 });
    }
    expect(enrolled()).toEqual([]);
  });

  it("lists the organization's hubs for its members and site admins only", async () => {
    expect(await call('mia', 'GET', '/orgs/acme/clusters')).toEqual({ status: 200, body: [HUB_JSON] });
    expect(backends.clusters.callsTo('clusters', 'listHubs')).toEqual([{ ownerType: 'organization', ownerId: ACME.id }]);
    expect((await call('root', 'GET', '/orgs/acme/clusters')).status).toBe(200);
    expect((await call('otto', 'GET', '/orgs/acme/clusters')).status).toBe(403);
    expect((await call('olivia', 'GET', '/orgs/nowhere/clusters')).status).toBe(404);
    expect((await call(undefined, 'GET', '/orgs/acme/clusters')).status).toBe(401);
  });
});
