import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import type { TestPlatform } from './harness';

/**
 * Cluster sets and bound namespaces (docs/cluster-sets.md) over HTTP on the demo seed: the demo hub's
 * managed clusters grouped into sets by the organization's owner, read by a member, refused to outsiders (403)
 * and for owners or hubs that do not exist or cannot be seen (404), with every 400/401/409/422 the rows give.
 * In-process bus (no NATS_URL): the seed's simulated hub and the clusters app share it.
 */
describe('cluster sets over HTTP on the demo seed', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let owner: string;
  let hubPath: string;
  /** The demo's spokes in no cluster set (the seed's outdated set holds one), by name. */
  let free: string[] = [];
  const spokeNames = () => free;
  const call = (who: string | undefined, method: string, rest: string, body?: unknown) => t.api(who, method, `${hubPath}${rest}`, body);

  beforeAll(async () => {
    demo = await bootDemoPlatform();
    ({ t, manifest } = demo);
    owner = manifest.owner.username;
    hubPath = `/clusters/${manifest.owner.org}/${manifest.hub.name}`;
    // mia: a member of the demo organization (a read team), not an owner; eve: no member; eve's private organization.
    await t.signUp('mia');
    await t.signUp('eve');
    const team = await t.api(owner, 'POST', `/orgs/${manifest.owner.org}/teams`, { name: 'readers', type: 'general', permission: 'read' });
    expect(team.status).toBe(201);
    expect((await t.api(owner, 'PUT', `/teams/${team.body.id}/members/mia`)).status).toBe(204);
    expect((await t.api('eve', 'POST', '/orgs', { username: 'eve-private', visibility: 'private' })).status).toBe(201);
    const available = (await call(owner, 'GET', '/available-clusters')).body as { name: string; clusterSet: string }[];
    free = available.filter((c) => c.clusterSet === '').map((c) => c.name);
    expect(free.length).toBeGreaterThanOrEqual(2);
    expect(available.filter((c) => c.clusterSet === manifest.outdatedClusterSet)).toHaveLength(1);
  }, 600_000);
  afterAll(async () => {
    await demo?.stop();
  });

  it('creates a set with clusters, lists it with its count and its members as ClustersResp', async () => {
    const [first, second] = spokeNames();
    const created = await call(owner, 'POST', '/clustersets/create', { clusterSet: 'prod', clusters: [first] });
    expect(created).toMatchObject({ status: 200, body: { clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 } });
    expect((await call(owner, 'POST', '/clustersets/create', { clusterSet: 'staging' })).status).toBe(200);
    expect((await call('mia', 'GET', '/clustersets/staging/clusterlist')).body).toEqual([second]);
    expect((await call(owner, 'POST', '/clustersets/add', { clusterSet: 'staging', clusters: [second] })).body.clusters).toBe(1);
    const list = await call('mia', 'GET', '/clustersets');
    expect(list).toMatchObject({ status: 200 });
    expect(list.body).toEqual([
      { clusterSetName: manifest.outdatedClusterSet, clusterSetTitle: '', clusters: 1 },
      { clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 },
      { clusterSetName: 'staging', clusterSetTitle: '', clusters: 1 },
    ]);
    const members = await call('mia', 'GET', '/clustersets/prod/clusters');
    expect(members.body).toEqual([
      {
        name: first,
        displayName: expect.any(String),
        clusterNode: expect.any(Number),
        provider: expect.any(String),
        kubernetesVersion: expect.any(String),
        imported: true,
      },
    ]);
    expect(members.body[0].clusterNode).toBeGreaterThan(0);
  });

  it('clusterlist, available-clusters and available-clustersets follow the memberships', async () => {
    const [first, second] = spokeNames();
    expect((await call('mia', 'GET', '/clustersets/staging/clusterlist')).body).toEqual([]);
    const available = await call('mia', 'GET', '/available-clusters');
    const sets = Object.fromEntries(available.body.map((c: { name: string; clusterSet: string }) => [c.name, c.clusterSet]));
    expect(sets).toMatchObject({ [first]: 'prod', [second]: 'staging' });
    expect(Object.values(sets).sort()).toEqual([manifest.outdatedClusterSet, 'prod', 'staging']);
    expect((await call(owner, 'POST', '/clustersets/create', { clusterSet: 'empty' })).status).toBe(200);
    expect((await call('mia', 'GET', '/available-clustersets')).body).toEqual(['empty', manifest.outdatedClusterSet, 'prod', 'staging']);
    // An empty set cannot hold a client organization's clusters.
    expect((await call('mia', 'GET', '/available-clustersets?type=client-org')).body).toEqual([
      manifest.outdatedClusterSet,
      'prod',
      'staging',
    ]);
    expect((await call(owner, 'POST', '/clustersets/delete', { clusterSet: 'empty' })).status).toBe(200);
    expect((await call('mia', 'GET', '/clustersets/prod/auth-info')).body).toEqual({
      'open-cluster-management:managedclusterset:admin': [owner],
    });
  });

  it('answers 400 for clusters not of the hub or already in a set, 409 for a taken name, 422 for malformed bodies, 404 for unknown sets', async () => {
    const [first] = spokeNames();
    const notOurs = await call(owner, 'POST', '/clustersets/add', { clusterSet: 'staging', clusters: ['no-such-cluster'] });
    expect(notOurs).toMatchObject({ status: 400, body: { message: expect.stringContaining('no-such-cluster') } });
    const taken = await call(owner, 'POST', '/clustersets/add', { clusterSet: 'staging', clusters: [first] });
    expect(taken).toMatchObject({ status: 400, body: { message: expect.stringContaining(`${first} (in set prod)`) } });
    expect((await call('mia', 'GET', '/clustersets/staging/clusters')).body).toHaveLength(1);
    expect((await call(owner, 'POST', '/clustersets/remove', { clusterSet: 'staging', clusters: [first] })).status).toBe(400);
    expect((await call(owner, 'POST', '/clustersets/create', { clusterSet: 'prod' })).status).toBe(409);
    for (const body of [{}, { clusterSet: 'Bad_Name' }, { clusterSet: 'prod', clusters: 'x' }]) {
      expect({ body, status: (await call(owner, 'POST', '/clustersets/create', body)).status }).toEqual({ body, status: 422 });
    }
    expect((await call(owner, 'POST', '/clustersets/add', { clusterSet: 'prod' })).status).toBe(422);
    expect((await call(owner, 'POST', '/clustersets/remove', { clusterSet: 'prod', clusters: [] })).status).toBe(422);
    expect((await t.send(owner, 'POST', `${hubPath}/clustersets/create`, '{not json', { 'content-type': 'application/json' })).status).toBe(
      422,
    );
    expect((await call(owner, 'POST', '/clustersets/add', { clusterSet: 'nope', clusters: [first] })).status).toBe(404);
    expect((await call('mia', 'GET', '/clustersets/nope/clusters')).status).toBe(404);
    expect((await call(owner, 'POST', '/clustersets/delete', { clusterSet: 'nope' })).status).toBe(404);
  });

  it('binds hub namespaces to sets; 400 for a namespace or set that does not exist; 422 for a malformed body', async () => {
    const bind = (body: unknown) => call(owner, 'POST', '/bound-namespaces/bind', body);
    expect(await bind({ clusterSet: 'prod', namespace: manifest.namespace })).toMatchObject({
      status: 200,
      body: { [manifest.namespace]: ['prod'] },
    });
    await bind({ clusterSet: 'staging', namespace: manifest.namespace });
    expect((await call('mia', 'GET', '/bound-namespaces')).body).toEqual({ [manifest.namespace]: ['prod', 'staging'] });
    expect((await bind({ clusterSet: 'prod', namespace: 'no-such-namespace' })).status).toBe(400);
    expect((await bind({ clusterSet: 'no-such-set', namespace: manifest.namespace })).status).toBe(400);
    expect((await bind({ clusterSet: 'prod' })).status).toBe(422);
    const unbound = await call(owner, 'POST', '/bound-namespaces/unbind', { clusterSet: 'staging', namespace: manifest.namespace });
    expect(unbound.body).toEqual({ [manifest.namespace]: ['prod'] });
  });

  it('who may call: members read, owners and site admins change; outsiders 403; unknown or hidden owners and hubs 404; no token 401', async () => {
    expect((await call('mia', 'POST', '/clustersets/create', { clusterSet: 'mine' })).status).toBe(403);
    // The refusal comes before the body is looked at.
    expect((await call('mia', 'POST', '/clustersets/create', {})).status).toBe(403);
    expect((await call('eve', 'GET', '/clustersets')).status).toBe(403);
    expect((await call('eve', 'POST', '/bound-namespaces/bind', {})).status).toBe(403);
    expect((await call(undefined, 'GET', '/clustersets')).status).toBe(401);
    expect((await call('root', 'GET', '/clustersets')).status).toBe(200);
    expect((await call('root', 'POST', '/clustersets/create', { clusterSet: 'by-admin' })).status).toBe(200);
    expect((await t.api(owner, 'GET', `/clusters/${manifest.owner.org}/no-such-hub/clustersets`)).status).toBe(404);
    expect((await t.api(owner, 'GET', `/clusters/no-such-owner/${manifest.hub.name}/clustersets`)).status).toBe(404);
    // A private organization the caller cannot see is as unknown (404), not forbidden.
    expect((await t.api(owner, 'GET', `/clusters/eve-private/${manifest.hub.name}/clustersets`)).status).toBe(404);
    // Another user's own account exists publicly: 403.
    expect((await t.api(owner, 'GET', `/clusters/eve/${manifest.hub.name}/clustersets`)).status).toBe(403);
    expect((await t.api('eve', 'GET', `/clusters/eve/${manifest.hub.name}/clustersets`)).status).toBe(404);
  });

  it('deletes a set: its clusters can be added again and its bindings are gone', async () => {
    expect((await call(owner, 'POST', '/clustersets/delete', { clusterSet: 'prod' })).body).toMatchObject({
      clusterSetName: 'prod',
      clusters: 1,
    });
    expect((await call('mia', 'GET', '/clustersets/staging/clusterlist')).body).toEqual([spokeNames()[0]]);
    expect((await call('mia', 'GET', '/bound-namespaces')).body).toEqual({});
    expect((await call('mia', 'GET', '/clustersets')).body.map((s: { clusterSetName: string }) => s.clusterSetName)).toEqual([
      'by-admin',
      manifest.outdatedClusterSet,
      'staging',
    ]);
  });
});
