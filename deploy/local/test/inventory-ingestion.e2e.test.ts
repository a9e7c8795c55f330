import { randomUUID } from 'node:crypto';
import { seal, subjectOf, toBusPayload } from '@platform/agent-protocol';
import { InProcessBus, type Bus } from '@platform/bus';
import { NatsBus } from '@platform/bus/nats';
import { authzV1, clustersV1, type agentV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { eventually, startPrivateNats, type PrivateNats } from '@platform/testing';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * Inventory ingestion on the whole platform (docs/clusters.md): a hub enrolled over HTTP reports itself and its
 * managed clusters with the seed it was given, on JetStream (a NATS server of this file's own, so no other
 * platform's consumer shares the durable; and the in-process bus of the embedded default); the real orgs-teams answers for the bus account, the inventory and
 * the owner tuples follow, and after the account is revoked over HTTP its reports change nothing.
 */
function inventoryReports(transport: 'nats' | 'in-process') {
  let nats: PrivateNats | undefined;
  let harness: TestPlatform;
  let agent: Bus;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  const HUB = '5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a5b';
  const SPOKES = ['5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a01', '5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a02', '5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a03'];

  const state = (uid: string, name: string, nodeCount: number): agentV1.ClusterState => ({
    uid,
    name,
    displayName: name,
    provider: 'gcp',
    kubernetesVersion: 'v1.31.1',
    nodeCount,
    statusJson: '{}',
    createdAtMs: Date.UTC(2026, 0, 1),
    namespaces: [{ name: 'default', uid: randomUUID(), createdAtMs: Date.UTC(2026, 0, 1) }],
    features: [{ name: 'productdb-operator', version: 'v2026.6.1', enabled: true }],
    connectedUsers: [],
  });
  const report = (nodeCount: number, observedAtMs: number): agentV1.InventoryReport => ({
    hub: state(HUB, 'hub-report-name', nodeCount),
    spokes: SPOKES.map((uid, i) => state(uid, `spoke-${i + 1}`, i + 1)),
    managerEndpoint: 'https://mcm.example.com',
    observedAtMs,
  });
  const seen = async (messageId: string) =>
    (await harness.platform.apps.get('clusters')!.ctx.db!.table('agent_seen_messages').where({ message_id: messageId })).length > 0;

  beforeAll(async () => {
    if (transport === 'nats') {
      nats = await startPrivateNats();
      harness = await bootTestPlatform({ NATS_URL: nats.url });
      // In the namespace the platform hands out with an agent's credentials (the enrollment's bus.namespace).
      agent = await NatsBus.create(nats.url, 'inventory-e2e-agent', { namespace: harness.platform.apps.get('clusters')!.ctx.bus!.namespace });
    } else {
      // No NATS_URL: the embedded default, the process's in-process bus, which the agent shares.
      harness = await bootTestPlatform({ NATS_URL: undefined as unknown as string });
      agent = harness.platform.apps.get('clusters')!.ctx.bus!;
      expect(agent).toBeInstanceOf(InProcessBus);
    }
    await harness.signUp('olivia');
    await harness.signUp('mia');
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    if (transport === 'nats') await agent?.close();
    await harness?.stop();
    await nats?.dispose();
  });

  it('applies the hub’s signed reports (inventory in clusters, license usage in billing), and refuses them once the bus account is revoked', async () => {
    const enrolled = await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'prod', uid: HUB });
    expect(enrolled.status).toBe(201);
    const { seed, accountID, namespace } = enrolled.body.bus;
    expect(namespace).toBe(agent.namespace ?? '');
    const clusters = createClient(clustersV1.ClustersServiceService, harness.grpcAddress('clusters'), { name: 'clusters' });
    const authz = createClient(authzV1.AuthzServiceService, harness.grpcAddress('authz'), { name: 'authz' });
    try {
      const first = randomUUID();
      await agent.publish(subjectOf(HUB, 'inventory'), toBusPayload(seal('inventory', report(4, Date.now()), seed, { messageId: first })));
      await eventually(() => seen(first), 20_000);
      expect(await clusters.getCluster({ uid: HUB })).toMatchObject({ name: 'prod', nodeCount: 4, provider: 'gcp' });
      expect((await clusters.listSpokes({ hubUid: HUB })).clusters.map((c) => c.name)).toEqual(['spoke-1', 'spoke-2', 'spoke-3']);
      // The managed clusters' owner tuples follow: acme's owner olivia sees them, mia (no member of acme) does not.
      for (const uid of SPOKES) {
        const as = async (login: string) =>
          (
            await authz.check({
              tuple: { user: `user:${harness.ids[login]}`, relation: 'view', object: `cluster:${uid}` },
              contextualTuples: [],
            })
          ).allowed;
        await eventually(() => as('olivia'), 20_000);
        expect(await as('mia')).toBe(false);
      }

      // Billing reports about a managed cluster of the hub reach billing-dashboard, which asks the real
      // orgs-teams for the account and clusters for the ownership.
      const billing = harness.platform.apps.get('billing-dashboard')!.ctx.db!;
      const licensed = async (clusterUid: string) => (await billing.table('licensed_products').where({ cluster_uid: clusterUid })).length;
      const usage = (clusterUid: string, receivedAtMs: number): agentV1.LicenseUsage => ({
        userId: Number(harness.ids.olivia),
        clusterUid,
        licenseId: 'lic-e2e',
        product: 'productdb',
        receivedAtMs,
      });
      await agent.publish(
        subjectOf(SPOKES[0], 'license-usage'),
        toBusPayload(seal('license-usage', usage(SPOKES[0], Date.UTC(2026, 5, 1)), seed)),
      );
      await eventually(async () => (await licensed(SPOKES[0])) === 1, 20_000);

      expect((await api('olivia', 'POST', `/orgs/acme/tokens/bus-tokens/${accountID}/revoke`)).status).toBe(200);
      await agent.publish(
        subjectOf(SPOKES[1], 'license-usage'),
        toBusPayload(seal('license-usage', usage(SPOKES[1], Date.UTC(2026, 5, 2)), seed)),
      );
      const refused = randomUUID();
      await agent.publish(
        subjectOf(HUB, 'inventory'),
        toBusPayload(seal('inventory', report(9, Date.now() + 1000), seed, { messageId: refused })),
      );
      // Handled (and refused) before anything published after it: a report of another enrolled hub as a marker.
      const other = await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'marker' });
      const marker = randomUUID();
      const markerReport: agentV1.InventoryReport = {
        hub: state(other.body.cluster.uid, 'marker', 1),
        spokes: [],
        managerEndpoint: '',
        observedAtMs: Date.now(),
      };
      await agent.publish(
        subjectOf(other.body.cluster.uid, 'inventory'),
        toBusPayload(seal('inventory', markerReport, other.body.bus.seed, { messageId: marker })),
      );
      await eventually(() => seen(marker), 20_000);
      expect(await seen(refused)).toBe(false);
      expect((await clusters.getCluster({ uid: HUB })).nodeCount).toBe(4);
      // The marker hub's own license usage is applied; the revoked account's, published before it, is not.
      const markerUid = other.body.cluster.uid as string;
      await agent.publish(
        subjectOf(markerUid, 'license-usage'),
        toBusPayload(seal('license-usage', usage(markerUid, Date.UTC(2026, 5, 3)), other.body.bus.seed)),
      );
      await eventually(async () => (await licensed(markerUid)) === 1, 20_000);
      expect(await licensed(SPOKES[1])).toBe(0);
    } finally {
      clusters.close();
      authz.close();
    }
  }, 120_000);
}

describe('inventory and billing reports of an enrolled hub, on JetStream', () => inventoryReports('nats'));
describe('inventory and billing reports of an enrolled hub, on the in-process bus', () => inventoryReports('in-process'));
