import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { clusterSetsV1, clustersV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The cluster-set and bound-namespace rows at the edge (docs/cluster-sets.md) against stand-in backends: what each row
// asks of clusters and answers in the API's shapes, the bodies refused with 422 before clusters is asked, clusters'
// 400, 404 and 409 passed on, and who may call them (members read, owners and site admins change, outsiders 403,
// unknown or hidden owners and hubs 404, 401 without a token). The sets' own rules (members, eligibility for client
// organizations, bindings, deletion): apps/clusters/test/cluster-sets.int.test.ts; the demo hub's agent reporting the
// clusters the sets are made of: deploy/local/test/cluster-sets-features.e2e.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  owner: orgsTeamsV1.User.fromPartial({ id: 1, login: 'owner', active: true }),
  mia: orgsTeamsV1.User.fromPartial({ id: 2, login: 'mia', active: true }),
  eve: orgsTeamsV1.User.fromPartial({ id: 3, login: 'eve', active: true }),
  root: orgsTeamsV1.User.fromPartial({ id: 4, login: 'root', active: true, isAdmin: true }),
};
const ORG = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'demo', visibility: 'public' });
const HUB = clustersV1.Cluster.fromPartial({ id: 20, uid: 'hub-uid', name: 'hub' });
const HUB_PATH = `/clusters/${ORG.username}/${HUB.name}`;
const SPOKE = clustersV1.Cluster.fromPartial({
  uid: 'spoke-uid',
  name: 'east',
  displayName: 'East',
  nodeCount: 3,
  provider: 'kind',
  kubernetesVersion: 'v1.30.0',
});
/** Members of the demo organization: its owner and mia. */
const MEMBERS = new Set([USERS.owner.id, USERS.mia.id]);
const set = (name: string, clusters: number) => clusterSetsV1.ClusterSet.fromPartial({ name, clusters });

describe('cluster sets at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    // The demo organization is public; eve-private is seen by eve only. Site permissions are root's.
    const callers = fakeOrgAndCaller(
      USERS,
      [ORG, orgsTeamsOrgsV1.Organization.fromPartial({ id: 11, username: 'eve-private', visibility: 'private' })],
      (userId, permission, objectId) =>
        userId === USERS.root.id ||
        (permission === 'access:org' && ((objectId === ORG.id && MEMBERS.has(userId)) || (objectId === 11 && userId === USERS.eve.id))),
    );
    backends = await startFakeBackends({
      ...callers,
      authz: {
        authz: {
          ...callers.authz.authz,
          // view on the hub for the organization's members, manage for its owner.
          check: async ({ tuple }) => ({
            allowed:
              tuple?.object === `cluster:${HUB.uid}` &&
              ((tuple.relation === 'view' && [...MEMBERS].some((id) => tuple.user === `user:${id}`)) ||
                (tuple.relation === 'manage' && tuple.user === `user:${USERS.owner.id}`)),
            dependsOn: [],
          }),
        },
      },
      clusters: {
        clusters: {
          getHub: async ({ ownerType, ownerId, name }) => {
            if (ownerType === 'organization' && ownerId === ORG.id && name === HUB.name) return HUB;
            throw new NotFoundError(`no hub ${name}`);
          },
        },
        clusterSets: {
          listClusterSets: async () => ({ sets: [set('outdated', 1), set('prod', 1)] }),
          listMembers: async ({ name }) => {
            if (name !== 'prod') throw new NotFoundError(`cluster set ${name} does not exist`);
            return { clusters: [SPOKE] };
          },
          listAddable: async () => ({ names: ['west'] }),
          listManagedClusters: async () => ({ clusters: [{ cluster: SPOKE, clusterSet: 'prod' }] }),
          listSetNames: async ({ clientOrgOnly }) => ({ names: clientOrgOnly ? ['prod'] : ['empty', 'prod'] }),
          authInfo: async () => ({ json: JSON.stringify({ 'open-cluster-management:managedclusterset:admin': ['owner'] }) }),
          boundNamespaces: async () => ({ json: JSON.stringify({ apps: ['prod'] }) }),
          bindNamespace: async ({ clusterSet, namespace }) => {
            if (namespace !== 'apps') throw new InputError(`the hub has no namespace ${namespace}`);
            return { json: JSON.stringify({ [namespace]: [clusterSet] }) };
          },
          unbindNamespace: async () => ({ json: '{}' }),
          createClusterSet: async ({ name, clusters }) => {
            if (name === 'prod') throw new ConflictError('cluster set prod exists');
            return set(name, clusters.length);
          },
          addClusters: async ({ name, clusters }) => {
            if (name === 'nope') throw new NotFoundError('cluster set nope does not exist');
            if (clusters.includes('east')) throw new InputError('already in a set: east (in set prod)');
            return set(name, clusters.length);
          },
          removeClusters: async ({ name }) => set(name, 0),
          deleteClusterSet: async ({ name }) => {
            if (name === 'nope') throw new NotFoundError('cluster set nope does not exist');
            return set(name, 1);
          },
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

  const send = async (who: string | undefined, method: string, path: string, body?: string) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(who ? { authorization: `token ${who}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const call = (who: string | undefined, method: string, rest: string, body?: unknown) =>
    send(who, method, `${HUB_PATH}${rest}`, body === undefined ? undefined : JSON.stringify(body));
  /** Every change clusters was asked to make. */
  const changes = () =>
    (['createClusterSet', 'addClusters', 'removeClusters', 'deleteClusterSet', 'bindNamespace', 'unbindNamespace'] as const).flatMap(
      (method) => backends.clusters.callsTo('clusterSets', method),
    );

  it('creates, adds to, removes from and deletes sets as the caller, answering ListClusterSetResp', async () => {
    const created = await call('owner', 'POST', '/clustersets/create', { clusterSet: 'staging', clusters: ['west'] });
    expect(created).toEqual({ status: 200, body: { clusterSetName: 'staging', clusterSetTitle: '', clusters: 1 } });
    expect((await call('owner', 'POST', '/clustersets/create', { clusterSet: 'empty' })).body.clusters).toBe(0);
    expect((await call('owner', 'POST', '/clustersets/add', { clusterSet: 'staging', clusters: ['west'] })).status).toBe(200);
    expect((await call('owner', 'POST', '/clustersets/remove', { clusterSet: 'staging', clusters: ['west'] })).status).toBe(200);
    expect(await call('owner', 'POST', '/clustersets/delete', { clusterSet: 'prod' })).toEqual({
      status: 200,
      body: { clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 },
    });
    expect(backends.clusters.callsTo('clusterSets', 'createClusterSet')).toEqual([
      { hubUid: HUB.uid, name: 'staging', clusters: ['west'], actor: 'owner' },
      { hubUid: HUB.uid, name: 'empty', clusters: [], actor: 'owner' },
    ]);
    expect(backends.clusters.callsTo('clusterSets', 'addClusters')).toEqual([
      { hubUid: HUB.uid, name: 'staging', clusters: ['west'], actor: 'owner' },
    ]);
    expect(backends.clusters.callsTo('clusterSets', 'removeClusters')).toEqual([
      { hubUid: HUB.uid, name: 'staging', clusters: ['west'], actor: 'owner' },
    ]);
    expect(backends.clusters.callsTo('clusterSets', 'deleteClusterSet')).toEqual([{ hubUid: HUB.uid, name: 'prod' }]);
  });

  it('lists the sets, their members as ClustersResp, the addable clusters, the managed ones with their set, the names and auth-info', async () => {
    expect(await call('mia', 'GET', '/clustersets')).toEqual({
      status: 200,
      body: [
        { clusterSetName: 'outdated', clusterSetTitle: '', clusters: 1 },
        { clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 },
      ],
    });
    expect((await call('mia', 'GET', '/clustersets/prod/clusters')).body).toEqual([
      { name: 'east', displayName: 'East', clusterNode: 3, provider: 'kind', kubernetesVersion: 'v1.30.0', imported: true },
    ]);
    expect((await call('mia', 'GET', '/clustersets/prod/clusterlist')).body).toEqual(['west']);
    expect((await call('mia', 'GET', '/available-clusters')).body).toEqual([
      {
        name: 'east',
        uid: 'spoke-uid',
        displayName: 'East',
        clusterNode: 3,
        provider: 'kind',
        kubernetesVersion: 'v1.30.0',
        clusterSet: 'prod',
      },
    ]);
    expect((await call('mia', 'GET', '/available-clustersets')).body).toEqual(['empty', 'prod']);
    expect((await call('mia', 'GET', '/available-clustersets?type=client-org')).body).toEqual(['prod']);
    expect(backends.clusters.callsTo('clusterSets', 'listSetNames')).toEqual([
      { hubUid: HUB.uid, clientOrgOnly: false },
      { hubUid: HUB.uid, clientOrgOnly: true },
    ]);
    expect((await call('mia', 'GET', '/clustersets/prod/auth-info')).body).toEqual({
      'open-cluster-management:managedclusterset:admin': ['owner'],
    });
  });

  it('binds and unbinds hub namespaces, answering the bindings after the change', async () => {
    expect(await call('owner', 'POST', '/bound-namespaces/bind', { clusterSet: 'prod', namespace: 'apps' })).toEqual({
      status: 200,
      body: { apps: ['prod'] },
    });
    expect((await call('mia', 'GET', '/bound-namespaces')).body).toEqual({ apps: ['prod'] });
    expect((await call('owner', 'POST', '/bound-namespaces/unbind', { clusterSet: 'prod', namespace: 'apps' })).body).toEqual({});
    expect(backends.clusters.callsTo('clusterSets', 'unbindNamespace')).toEqual([
      { hubUid: HUB.uid, clusterSet: 'prod', namespace: 'apps' },
    ]);
  });

  it("passes clusters' 400, 404 and 409 on with their messages", async () => {
    const taken = await call('owner', 'POST', '/clustersets/add', { clusterSet: 'staging', clusters: ['east'] });
    expect(taken).toEqual({ status: 400, body: expect.objectContaining({ message: expect.stringContaining('east (in set prod)') }) });
    expect((await call('owner', 'POST', '/clustersets/create', { clusterSet: 'prod' })).status).toBe(409);
    expect((await call('owner', 'POST', '/clustersets/add', { clusterSet: 'nope', clusters: ['west'] })).status).toBe(404);
    expect((await call('owner', 'POST', '/clustersets/delete', { clusterSet: 'nope' })).status).toBe(404);
    expect((await call('mia', 'GET', '/clustersets/nope/clusters')).status).toBe(404);
    expect((await call('owner', 'POST', '/bound-namespaces/bind', { clusterSet: 'prod', namespace: 'no-such-namespace' })).status).toBe(
      400,
    );
  });

  it('refuses malformed bodies with 422, clusters not asked', async () => {
    for (const body of [{}, { clusterSet: 'Bad_Name' }, { clusterSet: 'prod', clusters: 'x' }]) {
      expect({ body, status: (await call('owner', 'POST', '/clustersets/create', body)).status }).toEqual({ body, status: 422 });
    }
    expect((await call('owner', 'POST', '/clustersets/add', { clusterSet: 'prod' })).status).toBe(422);
    expect((await call('owner', 'POST', '/clustersets/remove', { clusterSet: 'prod', clusters: [] })).status).toBe(422);
    expect((await call('owner', 'POST', '/bound-namespaces/bind', { clusterSet: 'prod' })).status).toBe(422);
    expect((await send('owner', 'POST', `${HUB_PATH}/clustersets/create`, '{not json')).status).toBe(422);
    expect(changes()).toEqual([]);
  });

  it('who may call: members read, owners and site admins change; outsiders 403; unknown or hidden owners and hubs 404; no token 401', async () => {
    expect((await call('mia', 'POST', '/clustersets/create', { clusterSet: 'mine' })).status).toBe(403);
    // The refusal comes before the body is looked at.
    expect((await call('mia', 'POST', '/clustersets/create', {})).status).toBe(403);
    expect((await call('eve', 'GET', '/clustersets')).status).toBe(403);
    expect((await call('eve', 'POST', '/bound-namespaces/bind', {})).status).toBe(403);
    expect((await call(undefined, 'GET', '/clustersets')).status).toBe(401);
    expect(changes()).toEqual([]);
    expect((await call('root', 'GET', '/clustersets')).status).toBe(200);
    expect((await call('root', 'POST', '/clustersets/create', { clusterSet: 'by-admin' })).status).toBe(200);
    expect(backends.clusters.callsTo('clusterSets', 'createClusterSet')).toEqual([
      { hubUid: HUB.uid, name: 'by-admin', clusters: [], actor: 'root' },
    ]);
    expect((await send('owner', 'GET', `/clusters/${ORG.username}/no-such-hub/clustersets`)).status).toBe(404);
    expect((await send('owner', 'GET', `/clusters/no-such-owner/${HUB.name}/clustersets`)).status).toBe(404);
    // A private organization the caller cannot see is as unknown (404), not forbidden.
    expect((await send('owner', 'GET', `/clusters/eve-private/${HUB.name}/clustersets`)).status).toBe(404);
    // Another user's own account exists publicly: 403; the user's own, without that hub, 404.
    expect((await send('owner', 'GET', `/clusters/eve/${HUB.name}/clustersets`)).status).toBe(403);
    expect((await send('eve', 'GET', `/clusters/eve/${HUB.name}/clustersets`)).status).toBe(404);
  });
});
