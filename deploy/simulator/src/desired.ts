import { randomUUID } from 'node:crypto';
import type { agentV1 } from '@platform/proto';
import type { SimMessage } from './messages';
import type { SimHub } from './world';

/** Namespaces the agent keeps for client organizations (`client-<slug>`); others are never touched. */
const CLIENT_PREFIX = 'client-';

/**
 * The agent side of the desired state (docs/agent-protocol.md, "Desired state"): what a hub's agent does with
 * the state the platform sends. Every listed managed cluster ends up running exactly the desired features of the
 * catalog (`managedFeatures`) at the desired versions — the simulated install succeeds at once — and keeps the
 * features outside the catalog; clusters not listed are left alone. Each spoke imported for a client organization
 * gets its namespace, and a client namespace whose import is gone is deleted. The users to connect (team
 * auto-connect) are given their role on the hub and every spoke — exactly the listed ones, so a user no longer
 * listed is disconnected. Answers whether anything changed.
 */
export function applyDesiredState(hub: SimHub, desired: agentV1.DesiredState): boolean {
  const managed = new Set(desired.managedFeatures);
  let changed = false;
  for (const want of desired.clusters) {
    const spoke = hub.spokes.find((s) => s.state.uid === want.uid);
    if (!spoke) continue; // not a cluster of this hub (any more): nothing to install on
    const before = JSON.stringify(spoke.state.features);
    const kept = spoke.state.features.filter((f) => !managed.has(f.name));
    spoke.state.features = [...kept, ...want.features.map((f) => ({ name: f.name, version: f.version, enabled: true }))].sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    changed ||= JSON.stringify(spoke.state.features) !== before;
  }
  // Client organizations' namespaces: exactly those of the listed imports, on every spoke of the hub.
  for (const spoke of hub.spokes) {
    const wanted = desired.clientOrgImports.filter((i) => i.clusterUid === spoke.state.uid).map((i) => i.namespace);
    const before = spoke.state.namespaces.map((n) => n.name).join();
    const kept = spoke.state.namespaces.filter((n) => !n.name.startsWith(CLIENT_PREFIX) || wanted.includes(n.name));
    const added = wanted
      .filter((name) => !kept.some((n) => n.name === name))
      .map((name) => ({ name, uid: randomUUID(), createdAtMs: Date.now() }));
    spoke.state.namespaces = [...kept, ...added];
    changed ||= spoke.state.namespaces.map((n) => n.name).join() !== before;
  }
  // Connected users: the simulated ClusterRoleBindings, the same on the hub and on every managed cluster.
  for (const cluster of [hub, ...hub.spokes]) {
    const before = JSON.stringify(cluster.state.connectedUsers);
    cluster.state.connectedUsers = desired.connectedUsers.map((u) => ({ userId: u.userId, login: u.login, role: u.role }));
    changed ||= JSON.stringify(cluster.state.connectedUsers) !== before;
  }
  return changed;
}

/**
 * The inventory report that tells the platform what runs after a desired state was applied: a snapshot newer than
 * any sent before (`observedAtMs` past the last one), under a new message id (this report is not part of the
 * deterministic replay of a seed: it follows what the platform asked).
 */
export function inventoryAfterApply(hub: SimHub, lastObservedAtMs: number): SimMessage {
  const observedAtMs = Math.max(Date.now(), lastObservedAtMs + 1);
  return {
    kind: 'inventory',
    clusterUid: hub.state.uid,
    messageId: randomUUID(),
    payload: { hub: hub.state, spokes: hub.spokes.map((s) => s.state), managerEndpoint: hub.managerEndpoint, observedAtMs },
    sentAtMs: observedAtMs,
  };
}
