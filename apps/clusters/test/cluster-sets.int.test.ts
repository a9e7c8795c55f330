import { randomUUID } from 'node:crypto';
import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { clusterSetsV1, clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { clustersApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// ClusterSetsService over real gRPC and Postgres: sets of a hub, their members (one set per cluster), the
// client-org eligibility rule, auth-info and bound namespaces, with the statuses the gateway passes on.

const ORG = 31;

describe('ClusterSetsService', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  let sets: PromiseClient<typeof clusterSetsV1.ClusterSetsServiceService>;
  let hub: clustersV1.Cluster;
  let otherHub: clustersV1.Cluster;
  const db = () => app.running.ctx.db!;

  const createHub = (name: string) => clusters.createHub(hubRequest(ORG, name));
  /** A managed cluster under a hub, as inventory ingestion records one. */
  const spoke = async (hubId: number, name: string, ownerId = ORG) => {
    await db()
      .table('clusters')
      .insert({ uid: randomUUID(), hub_id: hubId, owner_type: 'organization', owner_id: ownerId, name, node_count: 3, provider: 'aws' });
  };
  const change = (name: string, clusterNames: string[] = []) => ({ hubUid: hub.uid, name, clusters: clusterNames, actor: 'alice' });

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, OUTBOX_RELAY_INTERVAL_MS: '200' });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    sets = createClient(clusterSetsV1.ClusterSetsServiceService, app.address, { name: 'clusters' });
    hub = await createHub('hub-a');
    otherHub = await createHub('hub-b');
    for (const name of ['east', 'north', 'south', 'west']) await spoke(hub.id, name);
    await spoke(otherHub.id, 'far');
    await db()
      .table('cluster_namespaces')
      .insert([
        { cluster_id: hub.id, name: 'team-a' },
        { cluster_id: hub.id, name: 'team-b' },
      ]);
  });
  afterAll(async () => {
    clusters?.close();
    sets?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('creates sets with members, counts them and refuses a taken name (409)', async () => {
    const changed: ClustersChanged[] = [];
    const unlisten = await app.running.ctx.bus!.listen(CLUSTERS_CHANGED, (_s, n) => void changed.push(n as ClustersChanged));
    expect(await sets.createClusterSet(change('prod', ['east', 'west']))).toEqual({ name: 'prod', title: '', clusters: 2 });
    expect(await sets.createClusterSet(change('staging'))).toEqual({ name: 'staging', title: '', clusters: 0 });
    await expect(sets.createClusterSet(change('prod'))).rejects.toMatchObject({ kind: 'conflict' });
    await sets.listClusterSets({ hubUid: hub.uid });
    await unlisten();
    // Each write, refused or not, announced by method before its answer; it names no cluster, so it means every one.
    // The read announced nothing.
    expect(changed).toEqual([0, 1, 2].map(() => ({ uids: [], owners: [], all: true })));
    await expect(sets.createClusterSet(change('Not_A_Label'))).rejects.toMatchObject({ kind: 'input' });
    expect((await sets.listClusterSets({ hubUid: hub.uid })).sets).toEqual([
      { name: 'prod', title: '', clusters: 2 },
      { name: 'staging', title: '', clusters: 0 },
    ]);
    // Another hub's sets are its own.
    expect((await sets.listClusterSets({ hubUid: otherHub.uid })).sets).toEqual([]);
  });

  it('refuses clusters of another hub, unknown ones and ones already in a set (400), adding nothing', async () => {
    await expect(sets.addClusters(change('staging', ['north', 'far']))).rejects.toMatchObject({
      kind: 'input',
      message: expect.stringContaining('far'),
    });
    await expect(sets.addClusters(change('staging', ['north', 'east']))).rejects.toMatchObject({
      kind: 'input',
      message: expect.stringContaining('east (in set prod)'),
    });
    await expect(sets.addClusters(change('prod', ['east']))).rejects.toMatchObject({
      message: expect.stringContaining('east (already in this set)'),
    });
    await expect(sets.createClusterSet(change('dev', ['east']))).rejects.toMatchObject({ kind: 'input' });
    expect((await sets.listSetNames({ hubUid: hub.uid, clientOrgOnly: false })).names).toEqual(['prod', 'staging']);
    expect((await sets.listMembers({ hubUid: hub.uid, name: 'staging' })).clusters).toEqual([]);
    await expect(sets.addClusters(change('nope', ['north']))).rejects.toMatchObject({ kind: 'not-found' });
    await expect(sets.addClusters(change('staging', []))).rejects.toMatchObject({ kind: 'input' });
  });

  it('adds and removes members; clusterlist and available clusters follow', async () => {
    expect(await sets.addClusters(change('staging', ['north']))).toMatchObject({ clusters: 1 });
    expect((await sets.listMembers({ hubUid: hub.uid, name: 'prod' })).clusters.map((c) => [c.name, c.nodeCount])).toEqual([
      ['east', 3],
      ['west', 3],
    ]);
    expect((await sets.listAddable({ hubUid: hub.uid, name: 'prod' })).names).toEqual(['south']);
    const managed = (await sets.listManagedClusters({ hubUid: hub.uid })).clusters.map((m) => [m.cluster!.name, m.clusterSet]);
    expect(managed).toEqual([
      ['east', 'prod'],
      ['north', 'staging'],
      ['south', ''],
      ['west', 'prod'],
    ]);
    await expect(sets.removeClusters(change('prod', ['north']))).rejects.toMatchObject({ kind: 'input' });
    expect(await sets.removeClusters(change('prod', ['west']))).toMatchObject({ clusters: 1 });
    expect((await sets.listAddable({ hubUid: hub.uid, name: 'prod' })).names).toEqual(['south', 'west']);
  });

  it('keeps for client organizations only non-empty sets none of whose clusters a client organization imported', async () => {
    await sets.createClusterSet(change('empty'));
    await spoke(hub.id, 'imported', 999);
    await sets.createClusterSet(change('client', ['imported']));
    const imported = await db().table('clusters').where({ name: 'imported' }).first();
    await db()
      .table('client_orgs')
      .insert({ org_id: 999, name: 'client', hub_id: hub.id, admin_user_id: 1, admin_login: 'a', requester_id: 1 });
    await db().table('client_org_clusters').insert({ org_id: 999, name: 'imported', uid: imported.uid });
    expect((await sets.listSetNames({ hubUid: hub.uid, clientOrgOnly: true })).names).toEqual(['prod', 'staging']);
    expect((await sets.listSetNames({ hubUid: hub.uid, clientOrgOnly: false })).names).toEqual(['client', 'empty', 'prod', 'staging']);
  });

  it('answers auth-info: the creator holds the set admin role-ref; 404 for an unknown set on each read of a set', async () => {
    expect(JSON.parse((await sets.authInfo({ hubUid: hub.uid, name: 'prod' })).json)).toEqual({
      'open-cluster-management:managedclusterset:admin': ['alice'],
    });
    await expect(sets.authInfo({ hubUid: hub.uid, name: 'nope' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(sets.listMembers({ hubUid: hub.uid, name: 'nope' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(sets.listAddable({ hubUid: hub.uid, name: 'nope' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('binds and unbinds hub namespaces; 400 for an unknown namespace or set', async () => {
    const bind = (clusterSet: string, namespace: string) => sets.bindNamespace({ hubUid: hub.uid, clusterSet, namespace });
    await bind('prod', 'team-a');
    await bind('staging', 'team-a');
    expect(JSON.parse((await bind('prod', 'team-b')).json)).toEqual({ 'team-a': ['prod', 'staging'], 'team-b': ['prod'] });
    await expect(bind('prod', 'missing')).rejects.toMatchObject({ kind: 'input', message: expect.stringContaining('namespace') });
    await expect(bind('missing', 'team-a')).rejects.toMatchObject({ kind: 'input', message: expect.stringContaining('cluster set') });
    const after = await sets.unbindNamespace({ hubUid: hub.uid, clusterSet: 'prod', namespace: 'team-a' });
    expect(JSON.parse(after.json)).toEqual({ 'team-a': ['staging'], 'team-b': ['prod'] });
  });

  it('deletes a set with its memberships and bindings; the clusters stay managed', async () => {
    expect(await sets.deleteClusterSet({ hubUid: hub.uid, name: 'prod' })).toMatchObject({ name: 'prod', clusters: 1 });
    await expect(sets.deleteClusterSet({ hubUid: hub.uid, name: 'prod' })).rejects.toMatchObject({ kind: 'not-found' });
    expect(JSON.parse((await sets.boundNamespaces({ hubUid: hub.uid })).json)).toEqual({ 'team-a': ['staging'] });
    expect((await sets.listManagedClusters({ hubUid: hub.uid })).clusters.find((m) => m.cluster!.name === 'east')?.clusterSet).toBe('');
    await expect(sets.listClusterSets({ hubUid: randomUUID() })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
