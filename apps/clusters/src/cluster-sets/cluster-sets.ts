import type { Database, Outbox } from '@platform/db';
import { isUniqueViolation } from '@platform/db';
import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import type { clusterSetsV1, clustersV1 } from '@platform/proto';
import { ClustersStore, type ClusterRow } from '../inventory/clusters-store';
import { isClusterName, toMessage } from '../inventory/clusters';
import { LATEST_RELEASE } from '../catalog/catalog';
import { DESIRED_STATE_EFFECT, type DesiredStateChange } from '../desired-state/desired-state';
import { ClusterSetsStore, type ClusterSetRow } from './cluster-sets-store';
import { isUuid } from '@platform/proto';

/** The role-ref the creator of a set holds on it (the multi-cluster manager's set admin ClusterRole). */
export const SET_ADMIN_ROLE_REF = 'open-cluster-management:managedclusterset:admin';
const MAX_CLUSTERS_PER_CALL = 1000;

/**
 * Cluster sets of a hub (docs/cluster-sets.md). Changes to a set run in one transaction that locks
 * the hub's row, so two changes of one hub's sets never interleave (a cluster cannot end up checked free by
 * two adds at once; the primary key on the member's cluster would refuse the second anyway).
 */
export class ClusterSets {
  private readonly clusters: ClustersStore;
  private readonly store: ClusterSetsStore;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
  ) {
    this.clusters = ClustersStore.create(db);
    this.store = ClusterSetsStore.create(db);
  }

  async list(hubUid: string): Promise<clusterSetsV1.ClusterSet[]> {
    const hub = await this.hub(hubUid);
    return (await this.store.setsWithCounts(hub.id)).map((s) => ({ name: s.name, title: s.title, clusters: s.clusters }));
  }

  async create(req: clusterSetsV1.ClusterSetChange): Promise<clusterSetsV1.ClusterSet> {
    if (!isClusterName(req.name)) {
      throw new InputError(`cluster set name "${req.name.slice(0, 80)}" must be a DNS label`, [
        { field: 'clusterSet', description: 'must be a DNS label' },
      ]);
    }
    try {
      return await this.outbox.run(async (trx, stage) => {
        const hub = await this.hub(req.hubUid, trx);
        if (await this.store.setByName(hub.id, req.name, trx)) throw new ConflictError(`cluster set "${req.name}" already exists`);
        const set = await this.store.insertSet(hub.id, req.name, LATEST_RELEASE, trx);
        stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
        const ids = await this.addable(hub, set, req.clusters, trx);
        await this.store.addMembers(set.id, ids, trx);
        if (req.actor) await this.store.grantRole(set.id, SET_ADMIN_ROLE_REF, req.actor, trx);
        return { name: set.name, title: set.title, clusters: ids.length };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`cluster set "${req.name}" already exists`);
      throw err;
    }
  }

  async delete(hubUid: string, name: string): Promise<clusterSetsV1.ClusterSet> {
    return this.outbox.run(async (trx, stage) => {
      const hub = await this.hub(hubUid, trx);
      const set = await this.set(hub, name, trx);
      // Its clusters leave the desired state: the agent keeps what they run, the platform no longer manages it.
      stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
      const members = await this.store.members(set.id, trx);
      await this.store.deleteSet(set.id, trx);
      return { name: set.name, title: set.title, clusters: members.length };
    });
  }

  async add(req: clusterSetsV1.ClusterSetChange): Promise<clusterSetsV1.ClusterSet> {
    return this.outbox.run(async (trx, stage) => {
      const hub = await this.hub(req.hubUid, trx);
      const set = await this.set(hub, req.name, trx);
      stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
      await this.store.addMembers(set.id, await this.addable(hub, set, req.clusters, trx, true), trx);
      return this.summary(set, trx);
    });
  }

  async remove(req: clusterSetsV1.ClusterSetChange): Promise<clusterSetsV1.ClusterSet> {
    return this.outbox.run(async (trx, stage) => {
      const hub = await this.hub(req.hubUid, trx);
      const set = await this.set(hub, req.name, trx);
      stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
      const names = checkNames(req.clusters, true);
      const members = new Map((await this.store.members(set.id, trx)).map((c) => [c.name, c.id]));
      const missing = names.filter((n) => !members.has(n));
      if (missing.length) throw new InputError(`not in cluster set "${set.name}": ${missing.join(', ')}`, clustersViolation);
      await this.store.removeMembers(
        set.id,
        names.map((n) => members.get(n)!),
        trx,
      );
      return this.summary(set, trx);
    });
  }

  async members(hubUid: string, name: string): Promise<clustersV1.Cluster[]> {
    const hub = await this.hub(hubUid);
    const set = await this.set(hub, name);
    const members = await this.store.members(set.id);
    const features = await this.clusters.featuresOf(members.map((m) => m.id));
    return members.map((m) =>
      toMessage(
        m,
        hub.uid,
        features.filter((f) => f.cluster_id === m.id),
      ),
    );
  }

  /** The names of the hub's managed clusters in no set: a cluster is in one set at most. */
  async addableNames(hubUid: string, name: string): Promise<string[]> {
    const hub = await this.hub(hubUid);
    await this.set(hub, name);
    return (await this.store.managedClusters(hub.id)).filter((c) => c.cluster_set === null).map((c) => c.name);
  }

  async managedClusters(hubUid: string): Promise<clusterSetsV1.ManagedCluster[]> {
    const hub = await this.hub(hubUid);
    const rows = await this.store.managedClusters(hub.id);
    const features = await this.clusters.featuresOf(rows.map((r) => r.id));
    return rows.map((r) => ({
      cluster: toMessage(
        r,
        hub.uid,
        features.filter((f) => f.cluster_id === r.id),
      ),
      clusterSet: r.cluster_set ?? '',
    }));
  }

  async setNames(hubUid: string, clientOrgOnly: boolean): Promise<string[]> {
    const hub = await this.hub(hubUid);
    return clientOrgOnly ? this.store.clientOrgEligibleNames(hub) : this.store.setNames(hub.id);
  }

  /** Role-ref name → the logins holding it on the set. */
  async authInfo(hubUid: string, name: string): Promise<Record<string, string[]>> {
    const hub = await this.hub(hubUid);
    const set = await this.set(hub, name);
    const info: Record<string, string[]> = {};
    for (const b of await this.store.roleBindings(set.id)) (info[b.role_ref] ??= []).push(b.login);
    return info;
  }

  /** Namespace → the names of the sets bound to it. */
  async boundNamespaces(hubUid: string): Promise<Record<string, string[]>> {
    const hub = await this.hub(hubUid);
    const out: Record<string, string[]> = {};
    for (const b of await this.store.bindings(hub.id)) (out[b.namespace] ??= []).push(b.name);
    return out;
  }

  /** Binds (or unbinds) a namespace of the hub to a set: 400 when the namespace or the set does not exist. */
  async bind(req: clusterSetsV1.NamespaceBinding, bound: boolean): Promise<Record<string, string[]>> {
    const hub = await this.hub(req.hubUid);
    const set = await this.store.setByName(hub.id, req.clusterSet);
    if (!set)
      throw new InputError(`cluster set "${req.clusterSet.slice(0, 80)}" does not exist`, [
        { field: 'clusterSet', description: 'no such set' },
      ]);
    const namespaces = await this.clusters.namespacesOf(hub.id);
    if (!namespaces.some((n) => n.name === req.namespace)) {
      throw new InputError(`namespace "${req.namespace.slice(0, 80)}" does not exist on the hub`, [
        { field: 'namespace', description: 'no such namespace on the hub' },
      ]);
    }
    if (bound) await this.store.bind(set.id, req.namespace);
    else await this.store.unbind(set.id, req.namespace);
    return this.boundNamespaces(req.hubUid);
  }

  /** The hub (not a managed cluster) of a UID; within a transaction its row is locked, so changes of its sets go one at a time. */
  async hub(uid: string, trx?: Parameters<ClustersStore['byUid']>[1]): Promise<ClusterRow> {
    const lower = uid.toLowerCase();
    const row = !isUuid(lower) ? undefined : trx ? await this.clusters.lockByUid(lower, trx) : await this.clusters.byUid(lower);
    if (!row || row.hub_id !== null) throw new NotFoundError(`hub cluster ${uid.slice(0, 80)} not found`);
    return row;
  }

  async set(hub: ClusterRow, name: string, trx?: Parameters<ClustersStore['byUid']>[1]): Promise<ClusterSetRow> {
    const set = await this.store.setByName(hub.id, name, trx);
    if (!set) throw new NotFoundError(`cluster set "${name.slice(0, 80)}" not found`);
    return set;
  }

  private async summary(set: ClusterSetRow, trx: Parameters<ClustersStore['byUid']>[1]): Promise<clusterSetsV1.ClusterSet> {
    return { name: set.name, title: set.title, clusters: (await this.store.members(set.id, trx)).length };
  }

  /** The ids of the named clusters, each a managed cluster of the hub in no set; 400 naming the others. */
  private async addable(
    hub: ClusterRow,
    set: ClusterSetRow,
    clusters: string[],
    trx: Parameters<ClustersStore['byUid']>[1],
    required = false,
  ): Promise<number[]> {
    const names = checkNames(clusters, required);
    if (!names.length) return [];
    const managed = new Map((await this.store.managedClusters(hub.id, trx)).map((c) => [c.name, c]));
    const unknown = names.filter((n) => !managed.has(n));
    if (unknown.length) throw new InputError(`not managed clusters of hub "${hub.name}": ${unknown.join(', ')}`, clustersViolation);
    const taken = names.filter((n) => managed.get(n)!.cluster_set !== null);
    if (taken.length) {
      const where = taken.map((n) =>
        managed.get(n)!.cluster_set === set.name ? `${n} (already in this set)` : `${n} (in set ${managed.get(n)!.cluster_set})`,
      );
      throw new InputError(`clusters already in a cluster set: ${where.join(', ')}`, clustersViolation);
    }
    return names.map((n) => managed.get(n)!.id);
  }
}

const clustersViolation = [{ field: 'clusters', description: 'see message' }];

/** The distinct names of a request; at least one when required. */
function checkNames(names: string[], required: boolean): string[] {
  const distinct = [...new Set(names)];
  if (required && !distinct.length) throw new InputError('clusters must name at least one cluster', clustersViolation);
  if (distinct.length > MAX_CLUSTERS_PER_CALL)
    throw new InputError(`at most ${MAX_CLUSTERS_PER_CALL} clusters at a time`, clustersViolation);
  return distinct;
}
