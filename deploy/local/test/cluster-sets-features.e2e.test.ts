import { fromPublic, fromSeed } from 'nkeys.js';
import { clustersV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import type { TestPlatform } from './harness';

/**
 * Hub enrolment (docs/clusters.md), cluster sets, feature sets, sync status and auto-update (docs/cluster-sets.md)
 * over HTTP on the demo seed, whose simulated hub agent applies the desired state the platform sends and reports what
 * runs: a hub enrolled with its real bus credentials, its account and its owner tuple; a set of the spokes the agent
 * reported, each change read at once through the gateway, its clusters and bindings freed by deletion; an install
 * followed to in-sync, the demo's outdated set refused auto-update until its agent is upgraded by a feature set and
 * then updated, disabling with required features, per-cluster values, and the 400/401/403/404/422 answers; and team
 * auto-connect, a new owner connected on the hub and every spoke by the agent and disconnected again; a client
 * organization (docs/client-organizations.md) made on a set of the hub, its namespace made and taken down by the agent.
 * In-process bus (no NATS_URL), shared by the platform and the seed's simulator.
 */
const LATEST = 'v2026.11.0';

describe('feature sets and sync status over HTTP on the demo seed', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let owner: string;
  let hubPath: string;
  let free: string[];
  let outdated: string;
  const call = (who: string | undefined, method: string, rest: string, body?: unknown) => t.api(who, method, `${hubPath}${rest}`, body);
  const get = async (rest: string) => {
    const res = await call(owner, 'GET', rest);
    expect({ rest, status: res.status }).toEqual({ rest, status: 200 });
    return res.body;
  };

  beforeAll(async () => {
    // The clusters service's reconcile and cleanup passes often, so removals through the organization's routes and
    // a client organization's deletion are followed here.
    demo = await bootDemoPlatform({ CONNECTION_RECONCILE_INTERVAL_MS: '500', CLIENT_ORG_CLEANUP_INTERVAL_MS: '200' });
    ({ t, manifest } = demo);
    owner = manifest.owner.username;
    hubPath = `/clusters/${manifest.owner.org}/${manifest.hub.name}`;
    outdated = manifest.outdatedClusterSet!;
    expect(outdated).toBeTruthy();
    free = ((await get('/available-clusters')) as { name: string; clusterSet: string }[])
      .filter((c) => c.clusterSet === '')
      .map((c) => c.name);
    expect(free.length).toBeGreaterThanOrEqual(2);
    await t.signUp('eve');
  }, 600_000);
  afterAll(async () => {
    await demo?.stop();
  });

  it("a set of the demo hub's spokes as its agent reported them; each change read at once through the gateway; deletion frees them", async () => {
    // The sets' rows one by one: apps/gateway/test/cluster-sets.test.ts; their rules: apps/clusters/test/cluster-sets.int.test.ts.
    const [first] = free;
    expect(await call(owner, 'POST', '/clustersets/create', { clusterSet: 'prod', clusters: [first] })).toMatchObject({
      status: 200,
      body: { clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 },
    });
    expect(await get('/clustersets')).toContainEqual({ clusterSetName: 'prod', clusterSetTitle: '', clusters: 1 });
    const members = await get('/clustersets/prod/clusters');
    expect(members).toEqual([
      {
        name: first,
        displayName: expect.any(String),
        clusterNode: expect.any(Number),
        provider: expect.any(String),
        kubernetesVersion: expect.any(String),
        imported: true,
      },
    ]);
    expect(members[0].clusterNode).toBeGreaterThan(0);
    const setOf = async (name: string) =>
      ((await get('/available-clusters')) as { name: string; clusterSet: string }[]).find((c) => c.name === name)?.clusterSet;
    expect(await setOf(first)).toBe('prod');
    expect(await get('/clustersets/prod/clusterlist')).not.toContain(first);
    expect((await call(owner, 'POST', '/bound-namespaces/bind', { clusterSet: 'prod', namespace: manifest.namespace })).status).toBe(200);
    expect(await get('/bound-namespaces')).toEqual({ [manifest.namespace]: ['prod'] });
    expect((await call(owner, 'POST', '/clustersets/delete', { clusterSet: 'prod' })).body).toMatchObject({
      clusterSetName: 'prod',
      clusters: 1,
    });
    expect(await setOf(first)).toBe('');
    expect(await get('/bound-namespaces')).toEqual({});
    expect((await get('/clustersets')).map((s: { clusterSetName: string }) => s.clusterSetName)).not.toContain('prod');
  });

  it('enrolls a hub: its real bus seed answered once, its account listed by orgs-teams, its owner tuple in authz, listed at once', async () => {
    // The enrolment's rows one by one: apps/gateway/test/clusters.test.ts; its steps: apps/clusters/test/operations.int.test.ts.
    const org = manifest.owner.org;
    const accounts = async () => (await t.api(owner, 'GET', `/orgs/${org}/tokens/bus-tokens/`)).body as { clusterID: string }[];
    // Read once before, so the gateway has the list kept when the hub is enrolled.
    expect((await t.api(owner, 'GET', `/orgs/${org}/clusters`)).body.map((c: { name: string }) => c.name)).not.toContain('enrolled-hub');
    const res = await t.api(owner, 'POST', `/orgs/${org}/clusters`, { name: 'enrolled-hub' });
    expect(res.status).toBe(201);
    const { cluster, bus } = res.body;
    expect(fromPublic(bus.publicKey).getPublicKey()).toBe(bus.publicKey);
    expect(fromSeed(new TextEncoder().encode(bus.seed)).getPublicKey()).toBe(bus.publicKey);
    const listed = await accounts();
    expect(listed).toContainEqual(
      expect.objectContaining({ id: bus.accountID, busPubKey: bus.publicKey, clusterID: cluster.uid, revoked: false }),
    );
    expect(JSON.stringify(listed)).not.toContain(bus.seed);
    expect((await t.api(owner, 'GET', `/orgs/${org}/clusters`)).body.map((c: { name: string }) => c.name)).toContain('enrolled-hub');
    // The owner tuple on cluster:<uid>: the organization's owner may view the hub, a stranger may not.
    expect(await t.api(owner, 'GET', `/clusters/${org}/enrolled-hub/clustersets`)).toMatchObject({ status: 200, body: [] });
    expect((await t.api('eve', 'GET', `/clusters/${org}/enrolled-hub/clustersets`)).status).toBe(403);
    const clusters = createClient(clustersV1.ClustersServiceService, t.grpcAddress('clusters'), { name: 'clusters' });
    try {
      expect((await clusters.getCluster({ uid: cluster.uid })).ownerId).toBe((await t.api(owner, 'GET', `/orgs/${org}`)).body.id);
    } finally {
      clusters.close();
    }
    // A taken uid is refused before any bus account is issued.
    expect((await t.api(owner, 'POST', `/orgs/${org}/clusters`, { name: 'again', uid: cluster.uid })).status).toBe(409);
    expect(await accounts()).toEqual(listed);
  });

  it('a client organization on the demo hub: its admin user owns it and the set, the agent makes its namespace on the spoke; deleted, all of it goes', async () => {
    // Its rows one by one: apps/gateway/test/client-orgs.test.ts; its records and cleanup: apps/clusters/test/client-orgs.int.test.ts.
    const root = (method: string, path: string, body?: unknown) => t.api('root', method, path, body);
    const clusters = createClient(clustersV1.ClustersServiceService, t.grpcAddress('clusters'), { name: 'clusters' });
    const namespacesOf = async (spoke: string) => {
      const { uid } = await clusters.getSpoke({ hubUid: manifest.hub.uid, name: spoke });
      return (await clusters.listNamespaces({ clusterUid: uid })).namespaces.map((n) => n.name);
    };
    const choices = async () => (await root('GET', `${hubPath}/available-clustersets?type=client-org`)).body as string[];
    const spoke = free[1];
    try {
      // The demo's shared gateway config is kept while its other client organization uses it.
      expect(await root('DELETE', `/user/client/delete/${manifest.sharedGatewayClientOrg}`)).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('demo-client-tenant') },
      });
      expect((await call(owner, 'POST', '/clustersets/create', { clusterSet: 'tenant-a', clusters: [spoke] })).status).toBe(200);
      expect(await choices()).toContain('tenant-a');
      const made = await root('POST', '/user/client/create', {
        clientOrg: { orgName: 'acme-client' },
        hubClusterUID: manifest.hub.uid,
        hubClusterOwnerName: manifest.owner.org,
        userPermission: {
          userName: 'acme-client-admin',
          email: 'acme-client-admin@example.com',
          permissions: [
            {
              name: 'tenant-a',
              isClusterSet: true,
              roleType: 'ClusterRole',
              roleRefName: 'open-cluster-management:managedclusterset:admin',
            },
          ],
          importCluster: true,
          clientOrg: true,
        },
      });
      expect(made).toMatchObject({ status: 200, body: { username: 'acme-client' } });
      expect(made.body.managerManagementClusterEndPoint).not.toBe('');
      expect((await root('GET', '/orgs/acme-client/members')).body.map((u: { login: string }) => u.login)).toEqual(['acme-client-admin']);
      expect(
        (await root('GET', `${hubPath}/clustersets/tenant-a/auth-info`)).body['open-cluster-management:managedclusterset:admin'],
      ).toContain('acme-client-admin');
      expect(await choices()).not.toContain('tenant-a');
      await eventually(async () => (await namespacesOf(spoke)).includes('client-acme-client'), 30_000);

      expect((await root('DELETE', `/user/client/delete/${made.body.id}`)).status).toBe(200);
      await eventually(async () => (await root('GET', '/user/client/acme-client/status')).body.status === 'Deleted', 20_000);
      expect((await root('GET', '/orgs/acme-client')).status).toBe(404);
      await eventually(async () => !(await namespacesOf(spoke)).includes('client-acme-client'), 30_000);
      expect(await choices()).toContain('tenant-a');
      expect((await call(owner, 'POST', '/clustersets/delete', { clusterSet: 'tenant-a' })).status).toBe(200);
    } finally {
      clusters.close();
    }
  });

  it("lists the catalog on the demo's outdated set: nothing installed; auto-update is not possible (400 {message})", async () => {
    const catalog = await get(`/clustersets/${outdated}/featuresets`);
    expect(catalog.map((f: { name: string; installed: boolean }) => [f.name, f.installed])).toEqual([
      ['opscenter-core', false],
      ['opscenter-datastore', false],
      ['opscenter-backup', false],
      ['opscenter-networking', false],
    ]);
    expect(catalog[1]).toMatchObject({ title: 'Databases', recommended: true, requiredFeatures: ['productdb-operator'] });
    expect(catalog[1].features[0]).toMatchObject({
      name: 'productdb-operator',
      featureBlock: 'productdb',
      installed: false,
      recommended: true,
    });
    expect(await get(`/clustersets/${outdated}/auto-update/check`)).toEqual({ possible: false });
    const refused = await call(owner, 'POST', `/clustersets/${outdated}/auto-update`);
    expect(refused).toMatchObject({ status: 400, body: { message: expect.stringContaining('not possible') } });
    const versions = await get(`/clustersets/${outdated}/sync-status/opscenter-features-version`);
    expect(versions.clusterSetVersion).toBe(LATEST);
    expect(versions.clusters).toHaveLength(1);
    expect(versions.clusters[0].version).not.toBe(LATEST);
  });

  it('installs a feature set with the features it requires; the agent applies it and sync status follows', async () => {
    expect((await call(owner, 'POST', '/clustersets/create', { clusterSet: 'apps', clusters: free })).status).toBe(200);
    const installed = await call(owner, 'POST', '/clustersets/apps/install-featureset', {
      featureSet: 'opscenter-datastore',
      values: { replicas: 2 },
    });
    expect(installed).toMatchObject({ status: 200, body: { installed: ['platform-agent', 'productdb-operator'] } });
    const installedSets = (await get('/clustersets/apps/featuresets')).filter((f: { installed: boolean }) => f.installed);
    expect(installedSets.map((f: { name: string }) => f.name)).toEqual(['opscenter-core', 'opscenter-datastore']);
    // The simulated agent installs them and reports: every spoke of the set ends in sync.
    await eventually(async () => {
      const all = (await call(owner, 'GET', '/clustersets/apps/sync-status/all-features')).body;
      return all?.['opscenter-datastore']?.['productdb-operator']?.insyncClusters?.length === free.length;
    }, 30_000);
    expect(await get('/clustersets/apps/sync-status/all-features')).toEqual({
      'opscenter-core': { 'platform-agent': { insyncClusters: free, unalignedClusters: [] } },
      'opscenter-datastore': { 'productdb-operator': { insyncClusters: free, unalignedClusters: [] } },
    });
    expect(await get('/clustersets/apps/sync-status/productdb-operator')).toEqual({ insyncClusters: free, outOfSyncClusters: [] });
    expect(await get('/clustersets/apps/sync-status/opscenter-features-version')).toEqual({
      clusterSetVersion: LATEST,
      clusters: free.map((name) => ({ name, version: LATEST })),
    });
    expect(await get('/clustersets/apps/auto-update/check')).toEqual({ possible: true });
    expect(await call(owner, 'POST', '/clustersets/apps/auto-update')).toMatchObject({ status: 200, body: { clusterSetVersion: LATEST } });
  });

  it('the outdated set: installing the core feature set upgrades its agent, then auto-update goes through', async () => {
    expect((await call(owner, 'POST', `/clustersets/${outdated}/install-featureset`, { featureSet: 'opscenter-core' })).status).toBe(200);
    const [spoke] = (await get(`/clustersets/${outdated}/sync-status/opscenter-features-version`)).clusters.map(
      (c: { name: string }) => c.name,
    );
    // Until the agent has applied it, the spoke runs an older agent (out of sync); it reports the upgrade soon after.
    await eventually(async () => (await call(owner, 'GET', `/clustersets/${outdated}/auto-update/check`)).body?.possible === true, 30_000);
    expect(await get(`/clustersets/${outdated}/sync-status/platform-agent`)).toEqual({ insyncClusters: [spoke], outOfSyncClusters: [] });
    expect((await call(owner, 'POST', `/clustersets/${outdated}/auto-update`)).status).toBe(200);
  });

  it('disabling: 400 while another installed feature requires it, 422 without featureSet; then the agent uninstalls', async () => {
    const disable = (body: unknown) => call(owner, 'POST', '/clustersets/apps/disable-featureset', body);
    const blocked = await disable({ clusterSet: 'apps', featureSet: 'opscenter-core' });
    expect(blocked).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('platform-agent is required by productdb-operator') },
    });
    expect((await disable({ clusterSet: 'apps' })).status).toBe(422);
    expect((await disable({ clusterSet: 'other', featureSet: 'opscenter-datastore' })).status).toBe(400);
    expect((await disable({ clusterSet: 'apps', featureSet: 'opscenter-backup' })).status).toBe(400);
    expect(await disable({ clusterSet: 'apps', featureSet: 'opscenter-datastore' })).toMatchObject({
      status: 200,
      body: { installed: ['platform-agent'] },
    });
    // No longer desired: in sync once the agent has uninstalled it everywhere.
    await eventually(
      async () => (await call(owner, 'GET', '/clustersets/apps/sync-status/productdb-operator')).body?.outOfSyncClusters?.length === 0,
      30_000,
    );
    expect(await get('/clustersets/apps/sync-status/productdb-operator')).toEqual({ insyncClusters: free, outOfSyncClusters: [] });
  });

  it("update-featureset keeps one cluster's values; 400/404/422 for bad requests", async () => {
    const update = (cluster: string, body: unknown) => call(owner, 'POST', `/clustersets/apps/${cluster}/update-featureset`, body);
    expect((await update(free[0], { featureSet: 'opscenter-core', values: { logLevel: 'debug' } })).status).toBe(200);
    expect((await update(free[0], { featureSet: 'opscenter-datastore' })).status).toBe(400); // not installed any more
    expect((await update(free[0], {})).status).toBe(400);
    expect((await update(free[0], { featureSet: 'opscenter-core', values: [1] })).status).toBe(400);
    expect(
      (
        await t.send(owner, 'POST', `${hubPath}/clustersets/apps/${free[0]}/update-featureset`, '[1]', {
          'content-type': 'application/json',
        })
      ).status,
    ).toBe(422);
    expect((await update('no-such-cluster', { featureSet: 'opscenter-core' })).status).toBe(404);
    const install = (body: string) =>
      t.send(owner, 'POST', `${hubPath}/clustersets/apps/install-featureset`, body, { 'content-type': 'application/json' });
    expect((await install('"text"')).status).toBe(422);
    expect((await install('{"featureSet":"no-such-set"}')).status).toBe(400);
    expect((await install('{"featureSet":"opscenter-backup","features":["productdb-operator"]}')).status).toBe(400);
  });

  it('team auto-connect: the agent connects a new owner on the hub and every spoke, and disconnects one who leaves', async () => {
    const org = manifest.owner.org;
    const clusters = createClient(clustersV1.ClustersServiceService, t.grpcAddress('clusters'), { name: 'clusters' });
    /** Waits until the agent reports exactly these users connected on the hub (in the API's answer) and every spoke. */
    const reported = async (users: { login: string; role: string }[]) => {
      const everywhere = async () => {
        const listed = await t.api(owner, 'GET', `/orgs/${org}/clusters`);
        expect(listed.status).toBe(200);
        const hub = (listed.body as { name: string; connectedUsers: unknown[] }[]).find((c) => c.name === manifest.hub.name)!;
        const { clusters: spokes } = await clusters.listSpokes({ hubUid: manifest.hub.uid });
        expect(spokes.length).toBeGreaterThan(1);
        const want = JSON.stringify(users);
        return [hub.connectedUsers, ...spokes.map((x) => x.connectedUsers.map((u) => ({ login: u.login, role: u.role })))].every(
          (l) => JSON.stringify(l) === want,
        );
      };
      await eventually(everywhere, 20_000);
    };
    try {
      const teams = (await t.api(owner, 'GET', `/orgs/${org}/teams`)).body as { id: number; permission: string }[];
      const owners = teams.find((x) => x.permission === 'owner')!.id;
      await reported([]);
      await t.signUp('tess');
      expect((await t.api(owner, 'PUT', `/teams/${owners}/members/tess?autoConnectClusters=true`)).status).toBe(204);
      await reported([{ login: 'tess', role: 'cluster-admin' }]);
      expect((await t.api(owner, 'DELETE', `/teams/${owners}/members/tess`)).status).toBe(204);
      await reported([]);
      // Taken out of the organization through its member routes: the clusters service's reconcile pass follows.
      expect((await t.api(owner, 'PUT', `/teams/${owners}/members/tess?autoConnectClusters=true`)).status).toBe(204);
      await reported([{ login: 'tess', role: 'cluster-admin' }]);
      expect((await t.api(owner, 'DELETE', `/orgs/${org}/members/tess`)).status).toBe(204);
      await reported([]);
    } finally {
      clusters.close();
    }
  });

  it('who may call: members of the owner read, others 403; unknown sets and features 404; no token 401', async () => {
    expect((await call('eve', 'GET', '/clustersets/apps/featuresets')).status).toBe(403);
    expect((await call('eve', 'POST', '/clustersets/apps/install-featureset', {})).status).toBe(403);
    expect((await call(undefined, 'GET', '/clustersets/apps/auto-update/check')).status).toBe(401);
    expect((await call(owner, 'GET', '/clustersets/nope/featuresets')).status).toBe(404);
    expect((await call(owner, 'POST', '/clustersets/nope/auto-update')).status).toBe(404);
    expect((await call(owner, 'GET', '/clustersets/apps/sync-status/no-such-feature')).status).toBe(404);
    expect((await call('root', 'GET', '/clustersets/apps/sync-status/all-features')).status).toBe(200);
  });
});
