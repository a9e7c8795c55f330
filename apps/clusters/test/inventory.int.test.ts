import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { clustersApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// ClustersService over real gRPC and Postgres, with a stand-in authz: a hub's record and its owner tuple
// go together (the outbox), and every read finds what the inventory holds.

const ORG = 11;
const OTHER_ORG = 12;
const HUB_UID = '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4';
const DOOMED_UID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';

describe('ClustersService', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;

  const hub = (name: string, extra: Partial<clustersV1.CreateHubRequest> = {}) => clusters.createHub(hubRequest(ORG, name, extra));
  const table = (name: string) => app.running.ctx.db!.table(name);

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, OUTBOX_RELAY_INTERVAL_MS: '200' });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
  });
  afterAll(async () => {
    clusters?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('records a hub with every field and makes its owner the owner of cluster:<uid>', async () => {
    const created = await hub('prod-east', {
      uid: HUB_UID.toUpperCase(),
      displayName: 'Production East',
      provider: 'aws',
      kubernetesVersion: 'v1.30.2',
      nodeCount: 12,
      statusJson: JSON.stringify({ conditions: [{ type: 'Ready', status: 'True' }] }),
      managerEndpoint: 'https://mcm.example.com',
    });
    expect(created).toMatchObject({
      uid: HUB_UID,
      name: 'prod-east',
      displayName: 'Production East',
      provider: 'aws',
      kubernetesVersion: 'v1.30.2',
      nodeCount: 12,
      managerEndpoint: 'https://mcm.example.com',
      ownerType: 'organization',
      ownerId: ORG,
      hubUid: '',
      features: [],
    });
    expect(JSON.parse(created.statusJson)).toEqual({ conditions: [{ type: 'Ready', status: 'True' }] });
    expect(Math.abs(created.createdUnix - Date.now() / 1000)).toBeLessThan(60);
    expect([...authz.tuples.keys()]).toContain(`organization:${ORG} owner cluster:${HUB_UID}`);
  });

  it('makes a uid when none is given, and a user may own a hub', async () => {
    const created = await hub('laptop', { ownerType: 'user', ownerId: 5 });
    expect(created.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(created.statusJson)).toEqual({});
    expect(authz.tuples.has(`user:5 owner cluster:${created.uid}`)).toBe(true);
  });

  it('refuses a duplicate name in the owner or a taken uid with 409, and allows the name in another owner', async () => {
    await expect(hub('prod-east')).rejects.toMatchObject({ kind: 'conflict' });
    await expect(hub('other', { uid: HUB_UID })).rejects.toMatchObject({ kind: 'conflict' });
    const elsewhere = await hub('prod-east', { ownerId: OTHER_ORG });
    expect(elsewhere.ownerId).toBe(OTHER_ORG);
  });

  it('checks a new hub as CreateHub would (400, 409 with the same words whoever has the uid) and records nothing', async () => {
    const check = (name: string, extra: Partial<clustersV1.CreateHubRequest> = {}) => clusters.checkNewHub(hubRequest(ORG, name, extra));
    const count = async () => Number((await table('clusters').count({ n: '*' }))[0].n);
    const tuples = authz.tuples.size;
    const rows = await count();

    await expect(check('fresh', { uid: '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a' })).resolves.toEqual({});
    await expect(check('fresh')).resolves.toEqual({});
    await expect(check('prod-east')).rejects.toMatchObject({ kind: 'conflict', message: 'a cluster named "prod-east" already exists' });
    // OTHER_ORG's hub and this owner's own: the same refusal, naming neither owner nor cluster.
    const theirs = (await clusters.getHub({ ownerType: 'organization', ownerId: OTHER_ORG, name: 'prod-east' })).uid;
    await expect(check('fresh', { uid: theirs.toUpperCase() })).rejects.toMatchObject({
      kind: 'conflict',
      message: `a cluster with uid ${theirs} already exists`,
    });
    await expect(check('fresh', { uid: HUB_UID })).rejects.toMatchObject({
      kind: 'conflict',
      message: `a cluster with uid ${HUB_UID} already exists`,
    });
    for (const bad of [{ uid: 'not-a-uuid' }, { statusJson: '[1]' }, { ownerId: 0 }, { nodeCount: -1 }, { provider: 'x'.repeat(65) }]) {
      await expect(check('fresh', bad)).rejects.toMatchObject({ kind: 'input' });
    }
    await expect(check('Not_A_Label')).rejects.toMatchObject({ kind: 'input' });

    expect(await count()).toBe(rows);
    expect(authz.tuples.size).toBe(tuples);
    await expect(clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'fresh' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('lets exactly one of two racing creates of the same name through; the other is 409', async () => {
    const results = await Promise.allSettled([hub('racer'), hub('racer')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { kind: 'conflict' } });
    const uid = (await clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'racer' })).uid;
    expect(authz.tuples.has(`organization:${ORG} owner cluster:${uid}`)).toBe(true);
    // Out of the way of the listings below.
    await table('clusters').where({ name: 'racer' }).delete();
  });

  it('refuses bad input with 400', async () => {
    for (const name of ['', 'Prod', 'a_b', '-a', 'a-', 'x'.repeat(64), 'a.b']) {
      await expect(hub(name)).rejects.toMatchObject({ kind: 'input' });
    }
    await expect(hub('ok-name', { uid: 'not-a-uuid' })).rejects.toMatchObject({ kind: 'input' });
    await expect(hub('ok-name', { statusJson: '[1]' })).rejects.toMatchObject({ kind: 'input' });
    await expect(hub('ok-name', { statusJson: '{' })).rejects.toMatchObject({ kind: 'input' });
    await expect(hub('ok-name', { ownerType: 'team' })).rejects.toMatchObject({ kind: 'input' });
    await expect(hub('ok-name', { ownerId: 0 })).rejects.toMatchObject({ kind: 'input' });
    await expect(hub('ok-name', { nodeCount: -1 })).rejects.toMatchObject({ kind: 'input' });
    await expect(clusters.listHubs({ ownerType: 'nobody', ownerId: ORG })).rejects.toMatchObject({ kind: 'input' });
  });

  it('takes the record back when the owner tuple cannot be written, and tells the gateways the hub is gone', async () => {
    const before = [...authz.tuples.keys()];
    const changed: ClustersChanged[] = [];
    const unlisten = await app.running.ctx.bus!.listen(CLUSTERS_CHANGED, (_s, n) => void changed.push(n as ClustersChanged));
    authz.state.failWrites = true;
    try {
      await expect(hub('doomed', { uid: DOOMED_UID })).rejects.toMatchObject({ kind: 'unavailable' });
    } finally {
      authz.state.failWrites = false;
      await unlisten();
    }
    // Heard before the caller got its answer (the notice is awaited), so a gateway's next request resolves afresh.
    expect(changed).toEqual([{ uids: [DOOMED_UID], owners: [`organization:${ORG}`] }]);
    await expect(clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'doomed' })).rejects.toMatchObject({ kind: 'not-found' });
    expect([...authz.tuples.keys()]).toEqual(before);
    // The undo is complete: the name is free again.
    expect((await hub('doomed')).name).toBe('doomed');
    await table('clusters').where({ name: 'doomed' }).delete();
  });

  it('reads hubs by owner, by name and by uid', async () => {
    await hub('dev');
    const list = await clusters.listHubs({ ownerType: 'organization', ownerId: ORG });
    expect(list.clusters.map((c) => c.name)).toEqual(['dev', 'prod-east']);
    expect((await clusters.listHubs({ ownerType: 'organization', ownerId: 999 })).clusters).toEqual([]);
    expect((await clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'prod-east' })).uid).toBe(HUB_UID);
    await expect(clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'nope' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'n'.repeat(300) })).rejects.toMatchObject({
      kind: 'not-found',
    });
    expect((await clusters.getCluster({ uid: HUB_UID })).name).toBe('prod-east');
    expect((await clusters.getCluster({ uid: HUB_UID.toUpperCase() })).name).toBe('prod-east');
    await expect(clusters.getCluster({ uid: '00000000-0000-0000-0000-000000000000' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(clusters.getCluster({ uid: 'garbage' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  describe('with managed clusters, namespaces and features reported', () => {
    const SPOKE_UID = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
    beforeAll(async () => {
      // What inventory ingestion will write; here the rows go in directly.
      const [{ id: hubId }] = await table('clusters').where({ uid: HUB_UID }).select('id');
      const [spoke] = await table('clusters')
        .insert([
          { uid: SPOKE_UID, hub_id: hubId, owner_type: 'organization', owner_id: ORG, name: 'edge-1', provider: 'gcp', node_count: 3 },
          { uid: crypto.randomUUID(), hub_id: hubId, owner_type: 'organization', owner_id: ORG, name: 'edge-0', node_count: 1 },
        ])
        .returning('id');
      await table('cluster_namespaces').insert([
        { cluster_id: spoke.id, name: 'kube-system' },
        { cluster_id: spoke.id, name: 'billing' },
        { cluster_id: hubId, name: 'default' },
      ]);
      await table('cluster_features').insert([
        { cluster_id: hubId, feature: 'productdb', version: '1.4.0' },
        { cluster_id: hubId, feature: 'productbackup', version: '2.0.1' },
        { cluster_id: spoke.id, feature: 'productdb', version: '1.3.9' },
      ]);
    });

    it('lists the spokes of a hub and reads one by name and by uid', async () => {
      const spokes = await clusters.listSpokes({ hubUid: HUB_UID });
      expect(spokes.clusters.map((c) => [c.name, c.hubUid])).toEqual([
        ['edge-0', HUB_UID],
        ['edge-1', HUB_UID],
      ]);
      const spoke = await clusters.getSpoke({ hubUid: HUB_UID, name: 'edge-1' });
      expect(spoke).toMatchObject({ uid: SPOKE_UID, provider: 'gcp', nodeCount: 3, hubUid: HUB_UID });
      expect(spoke.features.map((f) => [f.name, f.version])).toEqual([['productdb', '1.3.9']]);
      expect(await clusters.getCluster({ uid: SPOKE_UID })).toMatchObject({ name: 'edge-1', hubUid: HUB_UID });
      await expect(clusters.getSpoke({ hubUid: HUB_UID, name: 'edge-9' })).rejects.toMatchObject({ kind: 'not-found' });
      // A spoke is no hub, and hubs list no spokes.
      await expect(clusters.listSpokes({ hubUid: SPOKE_UID })).rejects.toMatchObject({ kind: 'not-found' });
      expect((await clusters.listHubs({ ownerType: 'organization', ownerId: ORG })).clusters.map((c) => c.name)).toEqual([
        'dev',
        'prod-east',
      ]);
    });

    it('lists every cluster of an owner in one call: each hub, then its managed clusters', async () => {
      const { clusters: all } = await clusters.listOwnerClusters({ ownerType: 'organization', ownerId: ORG });
      expect(all.map((c) => [c.name, c.hubUid])).toEqual([
        ['dev', ''],
        ['prod-east', ''],
        ['edge-0', HUB_UID],
        ['edge-1', HUB_UID],
      ]);
      expect(all[3].features.map((f) => [f.name, f.version])).toEqual([['productdb', '1.3.9']]);
      expect((await clusters.listOwnerClusters({ ownerType: 'organization', ownerId: ORG + 1000 })).clusters).toEqual([]);
    });

    it('answers the installed features of hubs', async () => {
      const got = await clusters.getHub({ ownerType: 'organization', ownerId: ORG, name: 'prod-east' });
      expect(got.features.map((f) => [f.name, f.version])).toEqual([
        ['productbackup', '2.0.1'],
        ['productdb', '1.4.0'],
      ]);
    });

    it('reads hubs and managed clusters by many UIDs in one call, in the order asked, leaving out unknown ones', async () => {
      const unknown = '00000000-0000-4000-8000-000000000000';
      const { clusters: got } = await clusters.getClusters({ uids: [SPOKE_UID, unknown, 'garbage', HUB_UID.toUpperCase(), SPOKE_UID] });
      expect(got.map((c) => [c.uid, c.name, c.hubUid])).toEqual([
        [SPOKE_UID, 'edge-1', HUB_UID],
        [HUB_UID, 'prod-east', ''],
      ]);
      const [{ id: hubId }] = await table('clusters').where({ uid: HUB_UID }).select('id');
      expect(got[1]).toMatchObject({ id: Number(hubId), provider: 'aws', nodeCount: 12, observedUnix: 0 });
      expect(got[1].features.map((f) => f.name)).toEqual(['productbackup', 'productdb']);
      expect((await clusters.getClusters({ uids: [] })).clusters).toEqual([]);
      await expect(clusters.getClusters({ uids: Array.from({ length: 1001 }, () => unknown) })).rejects.toMatchObject({ kind: 'input' });
    });

    it('lists the namespaces of a cluster', async () => {
      expect((await clusters.listNamespaces({ clusterUid: SPOKE_UID })).namespaces.map((n) => n.name)).toEqual(['billing', 'kube-system']);
      expect((await clusters.listNamespaces({ clusterUid: HUB_UID })).namespaces.map((n) => n.name)).toEqual(['default']);
      await expect(clusters.listNamespaces({ clusterUid: '00000000-0000-0000-0000-000000000000' })).rejects.toMatchObject({
        kind: 'not-found',
      });
    });
  });
});
