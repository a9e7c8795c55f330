import { CLUSTERS_CHANGED, type Bus, type ClustersChanged } from '@platform/bus';
import type { clustersV1 } from '@platform/proto';
import type { Logger, WriteCall } from '@platform/service-kit';

/** Any cluster may have changed: what a write announces when it cannot name what it changed. */
export const ANY_CLUSTER: ClustersChanged = { uids: [], owners: [], all: true };

/**
 * Sends CLUSTERS_CHANGED, for the inventory's own announcements (a hub recorded or taken back, a report applied) and
 * the write methods'. One that cannot be sent is logged: an app that misses it answers what it kept for at most its
 * cache's lifetime (ORG_CACHE_TTL_MS, INVENTORY_CACHE_TTL_MS).
 */
export function clustersChangedNotice(bus: Bus, log: Logger): (change: ClustersChanged) => Promise<void> {
  return (change) => bus.notify(CLUSTERS_CHANGED, change).catch((err) => log.warn({ err }, 'could not send a clusters notice'));
}

/** Methods whose notice the inventory sends itself (Clusters.createHub), naming the uid it made, which a failed call's answer does not carry. */
const ANNOUNCED_BY_INVENTORY: readonly string[] = ['createHub', 'enrollHub'];

/**
 * What a write of the ClustersService names, once it is over (announcingWrites): nothing more for a hub recorded (the
 * inventory announced it), the hubs a user's connection changed as its answer names them, and everything for a
 * write whose answer names nothing (a failed call, a write added later).
 */
export function clustersServiceChange(call: WriteCall): ClustersChanged | undefined {
  if (ANNOUNCED_BY_INVENTORY.includes(call.method)) return undefined;
  if (call.method === 'setUserConnection' && call.response) {
    const req = call.request as clustersV1.SetUserConnectionRequest;
    return { uids: (call.response as clustersV1.SetUserConnectionResponse).changedHubUids, owners: [`${req.ownerType}:${req.ownerId}`] };
  }
  return ANY_CLUSTER;
}

/**
 * The announcer of one of clusters' services for announcingWrites: sends what `changeOf` says a write changed, if
 * anything, awaited before the caller hears back. The cluster-set, feature-set and client-organization writes change
 * no cluster the inventory answers (their desired state, imports and role-refs have tables of their own; what agents
 * then report comes back through ingestion, which names it), so they name nothing precise and announce everything:
 * a safety net, rare beside the reads, that covers any of them that comes to change a cluster.
 */
export function announcingChanges(
  changed: (change: ClustersChanged) => Promise<void>,
  changeOf: (call: WriteCall) => ClustersChanged | undefined = () => ANY_CLUSTER,
): (call: WriteCall) => Promise<void> {
  return async (call) => {
    const change = changeOf(call);
    if (change) await changed(change);
  };
}
