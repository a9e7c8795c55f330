import type { PayloadOf } from '@platform/agent-protocol';
import type { ReportKind } from '@platform/agent-protocol';
import type { agentV1 } from '@platform/proto';
import { uuidOf } from './random';
import { clustersOf, type SimCluster, type SimHub, type SimObject, type World } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** One report to seal and publish: its kind, the cluster it is about, its message id, payload and sealing time. */
export type SimMessage = {
  [K in ReportKind]: { kind: K; clusterUid: string; messageId: string; payload: PayloadOf[K]; sentAtMs: number };
}[ReportKind];

/** The inventory report of a hub: the hub, its spokes, namespaces and installed features, observed at the end of the period. */
export function inventoryOf(world: World, hub: SimHub): SimMessage {
  const { seed, org } = world.options;
  const payload: agentV1.InventoryReport = {
    hub: hub.state,
    spokes: hub.spokes.map((s) => s.state),
    managerEndpoint: hub.managerEndpoint,
    observedAtMs: world.endMs,
  };
  return {
    kind: 'inventory',
    clusterUid: hub.state.uid,
    messageId: uuidOf(seed, org, 'message', 'inventory', hub.state.uid, world.endMs),
    payload,
    sentAtMs: world.endMs,
  };
}

/** The quota in force at `t`. */
function quotaAt(o: SimObject, t: number): SimObject['quotas'][number] {
  let q = o.quotas[0];
  for (const next of o.quotas) if (next.fromMs <= t) q = next;
  return q;
}

/** License usage of one object's (user, cluster, license, product): once a day (or once a sample interval, if longer) from its creation. */
export function* licenseUsageOf(world: World, cluster: SimCluster, o: SimObject): Generator<SimMessage> {
  const { seed, org, sampleHours } = world.options;
  const every = Math.max(DAY, sampleHours * HOUR);
  for (let t = o.createdMs; t < world.endMs; t += every) {
    const payload: agentV1.LicenseUsage = {
      userId: o.userId,
      clusterUid: cluster.state.uid,
      licenseId: o.licenseId,
      product: o.product,
      receivedAtMs: t + 60_000,
    };
    yield {
      kind: 'license-usage',
      clusterUid: cluster.state.uid,
      messageId: uuidOf(seed, org, 'message', 'license-usage', o.uid, t),
      payload,
      sentAtMs: t + 60_000,
    };
  }
}

/** The resource events of one object: version 1 at its creation, then one per change (quota periods). */
export function resourceEventsOf(world: World, cluster: SimCluster, o: SimObject): SimMessage[] {
  const { seed, org } = world.options;
  return o.quotas.map((q, i) => {
    const version = i + 1;
    const payload: agentV1.ResourceEvent = {
      userId: o.userId,
      clusterUid: cluster.state.uid,
      licenseId: o.licenseId,
      product: o.product,
      group: o.group,
      resource: o.resource,
      resourceIdJson: JSON.stringify({ group: o.group, version: 'v1', kind: o.kind, namespace: o.namespace, name: o.name }),
      key: o.key,
      version,
      timestampMs: q.fromMs,
      partialObjectMetaJson: JSON.stringify(partialObjectMeta(o, version, q.fromMs)),
    };
    return {
      kind: 'resource-event',
      clusterUid: cluster.state.uid,
      messageId: uuidOf(seed, org, 'message', 'resource-event', o.uid, version),
      payload,
      sentAtMs: q.fromMs,
    };
  });
}

function partialObjectMeta(o: SimObject, version: number, atMs: number): object {
  return {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      uid: o.uid,
      resourceVersion: String(1000 + version * 137),
      generation: version,
      creationTimestamp: new Date(o.createdMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      labels: { 'app.kubernetes.io/name': o.name, 'app.kubernetes.io/managed-by': `${o.product}-operator` },
      annotations: { 'platform.example.com/observed-at': new Date(atMs).toISOString() },
    },
  };
}

/** Usage samples of one object: back-to-back intervals of `sampleHours` from its creation to the end of the period. */
export function* usageSamplesOf(world: World, cluster: SimCluster, o: SimObject): Generator<SimMessage> {
  const { seed, org, sampleHours } = world.options;
  const step = sampleHours * HOUR;
  for (let t = o.createdMs; t + step <= world.endMs; t += step) {
    const q = quotaAt(o, t);
    // Usage follows the day: busier in the (UTC) afternoon, quieter at night; deterministic in t.
    const hour = new Date(t).getUTCHours();
    const wave = 0.85 + 0.3 * Math.sin(((hour - 8) / 24) * 2 * Math.PI);
    const used = (v: number) => Math.round(v * Math.min(0.98, o.load * wave));
    const payload: agentV1.UsageSample = {
      product: o.product,
      contractId: 0,
      licenseId: o.licenseId,
      userId: o.userId,
      clusterUid: cluster.state.uid,
      clusterName: cluster.state.name,
      hosting: cluster.hosting,
      namespace: o.namespace,
      namespaceUid: o.namespaceUid,
      group: o.group,
      kind: o.kind,
      name: o.name,
      objectUid: o.uid,
      version: o.version,
      topology: o.topology,
      replicas: o.replicas,
      startMs: t,
      endMs: t + step,
      resources: [
        { resource: 'cpu', request: q.cpu, limit: q.cpu * 2, used: used(q.cpu) },
        { resource: 'memory', request: q.memory, limit: q.memory, used: used(q.memory) },
        { resource: 'storage', request: q.storage, limit: 0, used: Math.round(q.storage * Math.min(0.95, o.load)) },
      ],
    };
    yield {
      kind: 'usage-sample',
      clusterUid: cluster.state.uid,
      messageId: uuidOf(seed, org, 'message', 'usage-sample', o.uid, t),
      payload,
      sentAtMs: t + step,
    };
  }
}

/** Every report of the simulation after the inventory, kind by kind: license usage, resource events, usage samples. */
export function* billingMessagesOf(world: World): Generator<SimMessage> {
  const all = world.hubs.flatMap((hub) => clustersOf(hub).flatMap((c) => c.objects.map((o) => [c, o] as const)));
  for (const [c, o] of all) yield* licenseUsageOf(world, c, o);
  for (const [c, o] of all) yield* resourceEventsOf(world, c, o);
  for (const [c, o] of all) yield* usageSamplesOf(world, c, o);
}

/** Every report of the simulation, inventory first. */
export function* messagesOf(world: World): Generator<SimMessage> {
  for (const hub of world.hubs) yield inventoryOf(world, hub);
  yield* billingMessagesOf(world);
}

/** How many reports of each kind the simulation sends. */
export function countMessages(world: World): Record<ReportKind, number> {
  const counts: Record<ReportKind, number> = { inventory: 0, 'license-usage': 0, 'resource-event': 0, 'usage-sample': 0 };
  for (const m of messagesOf(world)) counts[m.kind]++;
  return counts;
}

/** The resource history of one cluster (the ResourceHistoryItems a request asks for), from the events it reported. */
export function resourceHistoryOf(
  world: World,
  cluster: SimCluster,
  request: agentV1.ResourceHistoryRequest,
): agentV1.ResourceHistoryItem[] {
  return cluster.objects
    .filter(
      (o) =>
        o.product === request.product &&
        (!request.licenseId || request.licenseId === o.licenseId) &&
        (!request.userId || request.userId === o.userId) &&
        (!request.group || request.group === o.group) &&
        (!request.resource || request.resource === o.resource),
    )
    .map((o) => {
      const events = resourceEventsOf(world, cluster, o).map((m) => m.payload as agentV1.ResourceEvent);
      return {
        key: o.key,
        lastSeenMs: world.endMs,
        values: events.map((e) => ({
          resourceIdJson: e.resourceIdJson,
          licenseId: e.licenseId,
          version: e.version,
          timestampMs: e.timestampMs,
        })),
      };
    });
}
