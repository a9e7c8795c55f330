import { randomUUID } from 'node:crypto';
import { consumeDesiredState } from '@platform/agent-protocol';
import { agentV1, clusterSetsV1, clustersV1, featureSetsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { clustersApp } from '../src/app';
import { LATEST_RELEASE } from '../src/catalog/catalog';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// FeatureSetsService over real gRPC and Postgres: the catalog with what a set installs, required features
// going with the ones that need them, refused disables, the desired state each change sends the hub's agent
// (read back on the app's bus), sync status and auto-update from the versions the clusters report.

describe('FeatureSetsService', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  let sets: PromiseClient<typeof clusterSetsV1.ClusterSetsServiceService>;
  let features: PromiseClient<typeof featureSetsV1.FeatureSetsServiceService>;
  let hub: clustersV1.Cluster;
  const received: agentV1.DesiredState[] = [];
  let stopAgent: (() => Promise<void>) | undefined;
  const db = () => app.running.ctx.db!;
  const ids: Record<string, number> = {};
  const latest = () => received.at(-1)!;
  const report = async (name: string, versions: Record<string, string>) => {
    await db().table('cluster_features').where({ cluster_id: ids[name] }).delete();
    const rows = Object.entries(versions).map(([feature, version]) => ({ cluster_id: ids[name], feature, version }));
    if (rows.length) await db().table('cluster_features').insert(rows);
  };
  const set = { hubUid: '', name: 'prod' };

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, OUTBOX_RELAY_INTERVAL_MS: '200' });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    sets = createClient(clusterSetsV1.ClusterSetsServiceService, app.address, { name: 'clusters' });
    features = createClient(featureSetsV1.FeatureSetsServiceService, app.address, { name: 'clusters' });
    hub = await clusters.createHub(hubRequest(41, 'hub'));
    set.hubUid = hub.uid;
    for (const name of ['east', 'west', 'north']) {
      const [row] = await db()
        .table('clusters')
        .insert({ uid: randomUUID(), hub_id: hub.id, owner_type: 'organization', owner_id: 41, name })
        .returning('id');
      ids[name] = row.id;
    }
    stopAgent = await consumeDesiredState(app.running.ctx.bus!, hub.uid, async (s) => void received.push(s));
    await sets.createClusterSet({ hubUid: hub.uid, name: 'prod', clusters: ['east', 'west'], actor: 'alice' });
  });
  afterAll(async () => {
    await stopAgent?.();
    for (const c of [clusters, sets, features]) c?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('lists the catalog with nothing installed on a new set', async () => {
    const { featureSets } = await features.listFeatureSets(set);
    expect(featureSets.map((f) => [f.name, f.installed])).toEqual([
      ['opscenter-core', false],
      ['opscenter-datastore', false],
      ['opscenter-backup', false],
      ['opscenter-networking', false],
    ]);
    expect(featureSets[1]).toMatchObject({ requiredFeatures: ['productdb-operator'], recommended: true });
    expect(featureSets[1].features[1]).toMatchObject({
      name: 'productvault-operator',
      featureBlock: 'productvault',
      requires: ['productdb-operator'],
    });
  });

  it('installs the features asked with what they require, and sends the desired state to the agent', async () => {
    const res = JSON.parse(
      (
        await features.install({
          hubUid: hub.uid,
          clusterSet: 'prod',
          featureSet: 'opscenter-datastore',
          features: ['productvault-operator'],
          valuesJson: '{"replicas":2}',
        })
      ).json,
    );
    // The vault needs the database operator (also the set's required feature), which needs the agent (opscenter-core).
    expect(res.installed).toEqual(['platform-agent', 'productdb-operator', 'productvault-operator']);
    await eventually(async () => received.some((s) => s.clusters.length === 2), 10_000);
    expect(latest().clusters.map((c) => [c.name, c.clusterSet, c.features.map((f) => `${f.featureSet}/${f.name}@${f.version}`)])).toEqual([
      [
        'east',
        'prod',
        [
          `opscenter-core/platform-agent@${LATEST_RELEASE}`,
          `opscenter-datastore/productdb-operator@${LATEST_RELEASE}`,
          `opscenter-datastore/productvault-operator@${LATEST_RELEASE}`,
        ],
      ],
      [
        'west',
        'prod',
        [
          `opscenter-core/platform-agent@${LATEST_RELEASE}`,
          `opscenter-datastore/productdb-operator@${LATEST_RELEASE}`,
          `opscenter-datastore/productvault-operator@${LATEST_RELEASE}`,
        ],
      ],
    ]);
    expect(JSON.parse(latest().clusters[0].features[1].valuesJson)).toEqual({ replicas: 2 });
    expect(latest().managedFeatures).toContain('productbackup-operator');
    const { featureSets } = await features.listFeatureSets(set);
    expect(featureSets.filter((f) => f.installed).map((f) => f.name)).toEqual(['opscenter-core', 'opscenter-datastore']);
    await expect(
      features.install({ hubUid: hub.uid, clusterSet: 'prod', featureSet: 'nope', features: [], valuesJson: '' }),
    ).rejects.toMatchObject({ kind: 'input' });
    await expect(
      features.install({
        hubUid: hub.uid,
        clusterSet: 'prod',
        featureSet: 'opscenter-backup',
        features: ['productdb-operator'],
        valuesJson: '',
      }),
    ).rejects.toMatchObject({ kind: 'input' });
  });

  it('refuses to disable a feature another installed feature requires (400), and disables the rest', async () => {
    const disable = (featureSet: string, names: string[] = []) =>
      features.disable({ hubUid: hub.uid, clusterSet: 'prod', featureSet, features: names });
    await expect(disable('opscenter-core')).rejects.toMatchObject({
      kind: 'input',
      message: expect.stringContaining('platform-agent is required by productdb-operator'),
    });
    await expect(disable('opscenter-datastore', ['productdb-operator'])).rejects.toMatchObject({
      message: expect.stringContaining('required by productvault-operator'),
    });
    await expect(disable('opscenter-backup')).rejects.toMatchObject({ kind: 'input', message: expect.stringContaining('not installed') });
    expect(JSON.parse((await disable('opscenter-datastore', ['productvault-operator'])).json).installed).toEqual([
      'platform-agent',
      'productdb-operator',
    ]);
  });

  it('computes sync status from what the clusters report', async () => {
    await report('east', { 'platform-agent': LATEST_RELEASE, 'productdb-operator': LATEST_RELEASE });
    await report('west', { 'platform-agent': 'v2026.9.1', 'productdb-operator': 'v2026.8.2', 'productvault-operator': 'v2026.8.2' });
    const status = async (what: string, feature = '') =>
      JSON.parse((await features.syncStatus({ hubUid: hub.uid, clusterSet: 'prod', what, feature })).json);
    expect(await status('all-features')).toEqual({
      'opscenter-core': { 'platform-agent': { insyncClusters: ['east'], unalignedClusters: ['west'] } },
      'opscenter-datastore': { 'productdb-operator': { insyncClusters: ['east'], unalignedClusters: ['west'] } },
    });
    // Not desired: in sync where it does not run.
    expect(await status('feature', 'productvault-operator')).toEqual({ insyncClusters: ['east'], outOfSyncClusters: ['west'] });
    await expect(status('feature', 'nope')).rejects.toMatchObject({ kind: 'not-found' });
    expect(await status('versions')).toEqual({
      clusterSetVersion: LATEST_RELEASE,
      clusters: [
        { name: 'east', version: LATEST_RELEASE },
        { name: 'west', version: 'v2026.9.1' },
      ],
    });
  });

  it('auto-update is possible only when every cluster runs the latest release; it re-sends the desired state', async () => {
    expect(await features.autoUpdateCheck(set)).toEqual({ possible: false, reason: expect.stringContaining('west (v2026.9.1)') });
    await expect(features.autoUpdate(set)).rejects.toMatchObject({ kind: 'input', message: expect.stringContaining('not possible') });
    await report('west', { 'platform-agent': LATEST_RELEASE });
    expect(await features.autoUpdateCheck(set)).toEqual({ possible: true, reason: '' });
    const before = latest().generation;
    expect(JSON.parse((await features.autoUpdate(set)).json)).toEqual({ message: expect.any(String), clusterSetVersion: LATEST_RELEASE });
    await eventually(async () => latest().generation > before, 10_000);
  });

  it('keeps per-cluster values over the set values; 404 for a cluster not in the set', async () => {
    await features.updateCluster({
      hubUid: hub.uid,
      clusterSet: 'prod',
      cluster: 'west',
      featureSet: 'opscenter-datastore',
      valuesJson: '{"replicas":3}',
    });
    await eventually(
      async () =>
        latest()
          .clusters.find((c) => c.name === 'west')
          ?.features.some((f) => f.valuesJson.includes('3')) ?? false,
      10_000,
    );
    const west = latest().clusters.find((c) => c.name === 'west')!;
    expect(JSON.parse(west.features.find((f) => f.name === 'productdb-operator')!.valuesJson)).toEqual({ replicas: 3 });
    const east = latest().clusters.find((c) => c.name === 'east')!;
    expect(JSON.parse(east.features.find((f) => f.name === 'productdb-operator')!.valuesJson)).toEqual({ replicas: 2 });
    await expect(
      features.updateCluster({
        hubUid: hub.uid,
        clusterSet: 'prod',
        cluster: 'north',
        featureSet: 'opscenter-datastore',
        valuesJson: '{}',
      }),
    ).rejects.toMatchObject({ kind: 'not-found' });
    // Leaving the set takes the cluster out of the desired state.
    await sets.removeClusters({ hubUid: hub.uid, name: 'prod', clusters: ['west'], actor: 'alice' });
    await eventually(
      async () =>
        latest()
          .clusters.map((c) => c.name)
          .join() === 'east',
      10_000,
    );
  });
});
