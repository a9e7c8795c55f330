import { randomUUID } from 'node:crypto';
import { createUser, type KeyPair } from 'nkeys.js';
import { seal, subjectOf, toBusPayload } from '@platform/agent-protocol';
import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { NatsBus } from '@platform/bus/nats';
import { agentV1, clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually as eventuallyTrue, startPrivateNats, type PrivateNats } from '@platform/testing';
import { clustersApp } from '../src/app';
import { SeenMessagesStore } from '../src/ingestion/seen-messages-store';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { startOrgTokensStub, type OrgTokensStub } from './org-tokens-stub';

// Inventory ingestion end to end: signed reports published on a real NATS server (JetStream, a server of this
// test's own so no other test's consumer shares the durable), consumed by the clusters app, applied to real
// Postgres. Orgs-teams (bus accounts) and authz (owner tuples) are stand-ins over real gRPC.

const ORG = 21;
const OTHER_ORG = 22;
const HUB = 'a1b2c3d4-0000-4000-8000-000000000001';
const OTHER_HUB = 'a1b2c3d4-0000-4000-8000-000000000002';
const SPOKE_1 = 'a1b2c3d4-0000-4000-8000-0000000000a1';
const SPOKE_2 = 'a1b2c3d4-0000-4000-8000-0000000000a2';
const FOREIGN_SPOKE = 'a1b2c3d4-0000-4000-8000-0000000000b1';

const T0 = Date.UTC(2026, 5, 1);

/** Waits until the assertions hold; on time-out, fails with the assertion's own message. */
async function eventually(assert: () => Promise<void>, opts: { timeoutMs?: number } = {}): Promise<void> {
  try {
    await eventuallyTrue(async () => (await assert(), true), opts.timeoutMs ?? 10_000);
  } catch {
    await assert();
  }
}

function state(uid: string, name: string, extra: Partial<agentV1.ClusterState> = {}): agentV1.ClusterState {
  return {
    uid,
    name,
    displayName: name.toUpperCase(),
    provider: 'aws',
    kubernetesVersion: 'v1.30.4',
    nodeCount: 3,
    statusJson: JSON.stringify({ phase: 'Ready' }),
    createdAtMs: T0 - 86_400_000,
    namespaces: [
      { name: 'default', uid: randomUUID(), createdAtMs: T0 - 86_400_000 },
      { name: 'kube-system', uid: randomUUID(), createdAtMs: T0 - 86_400_000 },
    ],
    features: [{ name: 'productdb-operator', version: 'v2026.6.1', enabled: true }],
    connectedUsers: [],
    ...extra,
  };
}

function report(hub: agentV1.ClusterState, spokes: agentV1.ClusterState[], observedAtMs: number): agentV1.InventoryReport {
  return { hub, spokes, managerEndpoint: 'https://mcm.example.com', observedAtMs };
}

describe('inventory ingestion over NATS JetStream and Postgres', () => {
  let nats: PrivateNats;
  let authz: AuthzStub;
  let orgs: OrgTokensStub;
  let app: AppUnderTest;
  let publisher: NatsBus;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  let hubKey: KeyPair;
  let otherKey: KeyPair;

  const db = () => app.running.ctx.db!;
  const seenIds = async () => (await db().table('agent_seen_messages').pluck('message_id')).sort();
  const publish = async (clusterUID: string, envelope: Uint8Array) =>
    publisher.publish(subjectOf(clusterUID, 'inventory'), toBusPayload(envelope));
  /** Publishes a report and waits until its id is recorded: everything published before it has been handled too (one consumer, in order). */
  const publishAndWait = async (key: KeyPair, r: agentV1.InventoryReport) => {
    const messageId = randomUUID();
    await publish(r.hub!.uid, seal('inventory', r, key, { messageId }));
    await eventually(async () => expect(await seenIds()).toContain(messageId), { timeoutMs: 15_000 });
    return messageId;
  };
  const hubCreate = (uid: string, ownerId: number, name: string) =>
    clusters.createHub({
      ownerType: 'organization',
      ownerId,
      name,
      uid,
      displayName: '',
      provider: '',
      kubernetesVersion: '',
      nodeCount: 0,
      statusJson: '',
      managerEndpoint: '',
    });

  beforeAll(async () => {
    nats = await startPrivateNats();
    authz = await startAuthzStub();
    orgs = await startOrgTokensStub();
    app = await startAppForTest(clustersApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      ORGS_TEAMS_GRPC_ADDR: orgs.address,
      NATS_URL: nats.url,
      OUTBOX_RELAY_INTERVAL_MS: '200',
    });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    // An agent publishes in the namespace its platform hands out with its credentials.
    publisher = await NatsBus.create(nats.url, 'ingestion-test-agent', { namespace: app.running.ctx.bus!.namespace });
    hubKey = createUser();
    otherKey = createUser();
    orgs.accounts.set(hubKey.getPublicKey(), { orgId: ORG, clusterId: HUB, revoked: false });
    orgs.accounts.set(otherKey.getPublicKey(), { orgId: OTHER_ORG, clusterId: OTHER_HUB, revoked: false });
    await hubCreate(HUB, ORG, 'prod');
    await hubCreate(OTHER_HUB, OTHER_ORG, 'elsewhere');
  }, 60_000);
  afterAll(async () => {
    await publisher?.close();
    clusters?.close();
    await app?.stop();
    await orgs?.server.shutdown(100);
    await authz?.server.shutdown(100);
    await nats?.dispose();
  });

  it('applies a signed report once though JetStream delivers it three times', async () => {
    const r = report(state(HUB, 'prod', { nodeCount: 5 }), [state(SPOKE_1, 'edge-1'), state(SPOKE_2, 'edge-2', { nodeCount: 2 })], T0);
    const messageId = randomUUID();
    const envelope = seal('inventory', r, hubKey, { messageId });
    for (let i = 0; i < 3; i++) await publish(HUB, envelope);
    await eventually(async () => expect(await seenIds()).toContain(messageId), { timeoutMs: 15_000 });
    // A sentinel after the three copies: once it is in, all three were handled.
    await publishAndWait(otherKey, report(state(OTHER_HUB, 'elsewhere'), [], T0));

    const hub = await clusters.getCluster({ uid: HUB });
    expect(hub).toMatchObject({
      name: 'prod',
      displayName: 'PROD',
      provider: 'aws',
      nodeCount: 5,
      managerEndpoint: 'https://mcm.example.com',
    });
    expect(hub.features).toEqual([expect.objectContaining({ name: 'productdb-operator', version: 'v2026.6.1' })]);
    const spokes = await clusters.listSpokes({ hubUid: HUB });
    expect(spokes.clusters.map((c) => [c.name, c.uid, c.hubUid, c.ownerId, c.nodeCount])).toEqual([
      ['edge-1', SPOKE_1, HUB, ORG, 3],
      ['edge-2', SPOKE_2, HUB, ORG, 2],
    ]);
    expect((await clusters.listNamespaces({ clusterUid: SPOKE_1 })).namespaces.map((n) => n.name)).toEqual(['default', 'kube-system']);
    expect(await db().table('agent_seen_messages').where({ message_id: messageId }).select('cluster_uid', 'kind')).toEqual([
      { cluster_uid: HUB, kind: 'inventory' },
    ]);
    // One row per spoke: the repeats created nothing.
    expect(
      await db()
        .table('clusters')
        .where({ hub_id: db().knex.raw('(select id from clusters.clusters where uid = ?)', [HUB]) })
        .count({ n: '*' }),
    ).toEqual([{ n: 2 }]);
    // The new spokes' owner tuples follow through the outbox.
    await eventually(async () => {
      expect(authz.tuples.has(`organization:${ORG} owner cluster:${SPOKE_1}`)).toBe(true);
      expect(authz.tuples.has(`organization:${ORG} owner cluster:${SPOKE_2}`)).toBe(true);
    });
  }, 60_000);

  it('applies a newer snapshot (spokes, namespaces and features gone) and ignores an older one', async () => {
    const changed: ClustersChanged[] = [];
    const unlisten = await app.running.ctx.bus!.listen(CLUSTERS_CHANGED, (_s, n) => void changed.push(n as ClustersChanged));
    const newer = report(
      state(HUB, 'prod', { nodeCount: 6, features: [{ name: 'productdb-operator', version: 'v2026.7.0', enabled: true }] }),
      [state(SPOKE_1, 'edge-1', { namespaces: [{ name: 'default', uid: randomUUID(), createdAtMs: T0 }] })],
      T0 + 60_000,
    );
    await publishAndWait(hubKey, newer);
    await publishAndWait(hubKey, report(state(HUB, 'prod', { nodeCount: 1 }), [], T0 + 30_000));

    expect(await clusters.getCluster({ uid: HUB })).toMatchObject({
      nodeCount: 6,
      features: [expect.objectContaining({ name: 'productdb-operator', version: 'v2026.7.0' })],
    });
    expect((await clusters.listSpokes({ hubUid: HUB })).clusters.map((c) => c.name)).toEqual(['edge-1']);
    expect((await clusters.listNamespaces({ clusterUid: SPOKE_1 })).namespaces.map((n) => n.name)).toEqual(['default']);
    await expect(clusters.getCluster({ uid: SPOKE_2 })).rejects.toMatchObject({ kind: 'not-found' });
    await eventually(async () => expect(authz.tuples.has(`organization:${ORG} owner cluster:${SPOKE_2}`)).toBe(false));
    // The other apps heard which clusters the applied report changed (the hub, the spoke gone, the spoke kept), and
    // whose; the older snapshot changed nothing and was not announced.
    await eventually(async () => expect(changed).toEqual([{ uids: [HUB, SPOKE_2, SPOKE_1], owners: [`organization:${ORG}`] }]));
    await unlisten();
  }, 60_000);

  it('changes nothing for a bad signature, a revoked or unknown account, or another owner’s cluster', async () => {
    const before: { uid: string }[] = await db()
      .table('clusters')
      .orderBy('uid')
      .select('uid', 'hub_id', 'name', 'node_count', 'observed_at');
    const seenBefore = await seenIds();
    const tampered = (() => {
      const env = agentV1.Envelope.decode(seal('inventory', report(state(HUB, 'prod', { nodeCount: 99 }), [], T0 + 120_000), hubKey));
      const forged = agentV1.InventoryReport.encode(report(state(HUB, 'prod', { nodeCount: 98 }), [], T0 + 120_000)).finish();
      return agentV1.Envelope.encode({ ...env, payload: Buffer.from(forged) }).finish();
    })();
    const revokedKey = createUser();
    orgs.accounts.set(revokedKey.getPublicKey(), { orgId: ORG, clusterId: HUB, revoked: true });
    const unknownKey = createUser();
    const late = T0 + 120_000;
    await publish(HUB, tampered);
    await publish(HUB, seal('inventory', report(state(HUB, 'prod', { nodeCount: 97 }), [], late), revokedKey));
    await publish(HUB, seal('inventory', report(state(HUB, 'prod', { nodeCount: 96 }), [], late), unknownKey));
    // ORG's key about OTHER_ORG's hub, and OTHER_ORG's key about ORG's hub.
    await publish(OTHER_HUB, seal('inventory', report(state(OTHER_HUB, 'elsewhere', { nodeCount: 95 }), [], late), hubKey));
    await publish(HUB, seal('inventory', report(state(HUB, 'prod', { nodeCount: 94 }), [], late), otherKey));
    // The sentinel (a report of OTHER_ORG's own hub with the same snapshot as before) is handled after all of them.
    const sentinel = await publishAndWait(otherKey, report(state(OTHER_HUB, 'elsewhere'), [], T0 + 1));

    expect(await seenIds()).toEqual([...seenBefore, sentinel].sort());
    const after: { uid: string; node_count: number }[] = await db()
      .table('clusters')
      .orderBy('uid')
      .select('uid', 'hub_id', 'name', 'node_count', 'observed_at');
    expect(after.filter((r) => r.uid !== OTHER_HUB)).toEqual(before.filter((r) => r.uid !== OTHER_HUB));
    expect(after.find((r) => r.uid === OTHER_HUB)!.node_count).toBe(3);
  }, 60_000);

  it('leaves out a managed cluster another owner already has, and applies the rest', async () => {
    await publishAndWait(otherKey, report(state(OTHER_HUB, 'elsewhere'), [state(FOREIGN_SPOKE, 'theirs')], T0 + 200_000));
    await publishAndWait(
      hubKey,
      report(state(HUB, 'prod', { nodeCount: 7 }), [state(SPOKE_1, 'edge-1'), state(FOREIGN_SPOKE, 'grab')], T0 + 200_000),
    );
    expect((await clusters.getCluster({ uid: HUB })).nodeCount).toBe(7);
    expect((await clusters.listSpokes({ hubUid: HUB })).clusters.map((c) => c.uid)).toEqual([SPOKE_1]);
    expect(await clusters.getCluster({ uid: FOREIGN_SPOKE })).toMatchObject({ name: 'theirs', hubUid: OTHER_HUB, ownerId: OTHER_ORG });
  }, 60_000);

  it('redelivers a report whose write fails, and applies it then', async () => {
    const knex = db().knex;
    // The first namespace write after this fails (a sequence is not rolled back with the failed transaction).
    await knex.raw('create sequence clusters.fail_once');
    await knex.raw(`create function clusters.fail_once() returns trigger language plpgsql as $$
      begin
        if nextval('clusters.fail_once') = 1 then raise exception 'injected failure'; end if;
        return new;
      end $$`);
    await knex.raw(
      'create trigger fail_once before insert on clusters.cluster_namespaces for each row execute function clusters.fail_once()',
    );
    try {
      const messageId = randomUUID();
      const r = report(state(HUB, 'prod', { nodeCount: 8 }), [state(SPOKE_1, 'edge-1')], T0 + 300_000);
      await publish(HUB, seal('inventory', r, hubKey, { messageId }));
      await eventually(async () => expect(await seenIds()).toContain(messageId), { timeoutMs: 20_000 });
      expect(Number((await knex.raw('select last_value from clusters.fail_once')).rows[0].last_value)).toBeGreaterThan(1);
      expect((await clusters.getCluster({ uid: HUB })).nodeCount).toBe(8);
    } finally {
      await knex.raw('drop trigger fail_once on clusters.cluster_namespaces');
      await knex.raw('drop function clusters.fail_once()');
      await knex.raw('drop sequence clusters.fail_once');
    }
  }, 60_000);

  it('redelivers a report while orgs-teams cannot be asked, and applies it once it answers', async () => {
    orgs.state.down = true;
    const messageId = randomUUID();
    await publish(
      HUB,
      seal('inventory', report(state(HUB, 'prod', { nodeCount: 9 }), [state(SPOKE_1, 'edge-1')], T0 + 400_000), hubKey, { messageId }),
    );
    const calls = orgs.state.calls;
    await eventually(async () => expect(orgs.state.calls).toBeGreaterThan(calls + 1), { timeoutMs: 15_000 });
    expect(await seenIds()).not.toContain(messageId);
    orgs.state.down = false;
    await eventually(async () => expect(await seenIds()).toContain(messageId), { timeoutMs: 15_000 });
    expect((await clusters.getCluster({ uid: HUB })).nodeCount).toBe(9);
  }, 60_000);

  it('forgets applied message ids older than the retention', async () => {
    const old = randomUUID();
    await db()
      .table('agent_seen_messages')
      .insert({ message_id: old, cluster_uid: HUB, kind: 'inventory', seen_at: new Date(Date.now() - 31 * 24 * 3600 * 1000) });
    const kept = await seenIds();
    expect(await SeenMessagesStore.create(db()).forgetBefore(new Date(Date.now() - 30 * 24 * 3600 * 1000))).toBe(1);
    expect(await seenIds()).toEqual(kept.filter((id) => id !== old));
  });
});
