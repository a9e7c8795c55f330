import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { InputError, NotFoundError, ValidationError } from '@platform/errors';
import type { contractsV1 } from '@platform/proto';
import type { ContractClusterRow, ContractsStore } from './contracts-store';
import { enrolledElsewhere, notThisAccountsCluster, type Inventory } from './inventory';
import type { ContractListing } from './listing';
import { clusterUid } from './validation';

const MAX_TAGS = 50;
const MAX_TAG_LENGTH = 63;

/**
 * Clusters bound to contracts: binding (one contract, several clusters; one cluster, several contracts),
 * unbinding, naming and tagging a binding, the owner's clusters still to bind, and the clusters bound to active
 * contracts. Only the contract owner's own clusters, and clusters nobody enrolled, may be bound.
 */
export class ClusterBinding {
  constructor(
    private readonly db: Database,
    private readonly store: ContractsStore,
    private readonly listing: ContractListing,
    private readonly inventory: Inventory,
  ) {}

  /**
   * Binds clusters, all or nothing. 400 for an empty list, a cluster that is not a UUID, one named twice, one
   * already bound to this contract, or an unknown contract (the user routes give 400 for it); 403 for a cluster
   * another account enrolled.
   */
  async bind(
    id: number,
    ownerId: number,
    refs: contractsV1.ClusterReference[],
    actor: string,
  ): Promise<contractsV1.ContractClusterStatus[]> {
    if (refs.length === 0)
      throw new InputError('clusters: at least one cluster is required', [{ field: 'clusters', description: 'empty' }]);
    const wanted = refs.map((r, i) => ({
      uid: clusterUid(r.cluster, `clusters[${i}].cluster`),
      displayName: r.displayName,
      tags: tagsOf(r.tags),
    }));
    const uids = wanted.map((w) => w.uid);
    const twice = uids.find((u, i) => uids.indexOf(u) !== i);
    if (twice) throw new InputError(`clusters: ${twice} is given twice`);
    const found = await this.store.find(id, ownerId);
    if (!found) throw new InputError(`contract ${id} does not exist`);
    await this.refuseEnrolledElsewhere([found.owner_id], uids);
    await this.db.transaction(async (trx) => {
      const contract = await this.store.find(id, ownerId, trx, true);
      if (!contract) throw new InputError(`contract ${id} does not exist`);
      const bound = new Set((await this.store.clustersOf([id], trx)).map((c) => c.cluster_uid));
      const already = uids.find((u) => bound.has(u));
      if (already) throw new InputError(`cluster ${already} is already associated with contract ${id}`);
      await this.store.bind(
        wanted.map((w) => ({ contract_id: id, cluster_uid: w.uid, display_name: w.displayName, tags: w.tags })),
        trx,
      );
      for (const uid of uids) await this.store.event(id, actor, `cluster-bound: ${uid}`, trx);
    });
    return this.listing.clusters(id, ownerId);
  }

  /** The owner's inventory clusters not bound to the contract; 400 for an unknown contract. */
  async importable(id: number, ownerId: number): Promise<contractsV1.ImportableCluster[]> {
    const [found] = await this.store.withClusters({ id, ownerId });
    if (!found) throw new InputError(`contract ${id} does not exist`);
    const { contract } = found;
    const bound = new Set(found.clusters.map((c) => c.cluster_uid));
    const all = await this.inventory.clustersOf(contract.owner_type, contract.owner_id);
    return all
      .filter((c) => !bound.has(c.uid))
      .map((c) => ({
        uid: c.uid,
        name: c.name,
        displayName: c.displayName,
        provider: c.provider,
        kubernetesVersion: c.kubernetesVersion,
        nodeCount: c.nodeCount,
        statusJson: c.statusJson,
        hubUid: c.hubUid,
      }));
  }

  async unbind(ref: contractsV1.ContractClusterRef): Promise<void> {
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      await this.store.unbind(cc.id, trx);
      await this.store.event(ref.id, ref.actor, `cluster-unbound: ${cc.cluster_uid}`, trx);
    });
  }

  async rename(ref: contractsV1.ContractClusterRef, name: string): Promise<void> {
    const clean = name.trim();
    if (!clean || clean.length > 255)
      throw new ValidationError('clusterName: 1 to 255 characters', [{ field: 'clusterName', description: 'empty or too long' }]);
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      await this.store.renameCluster(cc.id, clean, trx);
      await this.store.event(ref.id, ref.actor, `cluster-renamed: ${cc.cluster_uid} to ${clean}`, trx);
    });
  }

  /**
   * Replaces the tag set of a bound cluster and syncs it to every contract bound to the same cluster UUID: of
   * every owner on the admin side (`ownerId` 0), of the owner's own contracts otherwise. Each contract whose
   * tags change gets an audit event.
   */
  async setTags(ref: contractsV1.ContractClusterRef, tags: string[]): Promise<void> {
    const clean = tagsOf(tags);
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      const same = await this.store.bindingsOf(cc.cluster_uid, ref.ownerId, trx);
      await this.store.setTags(
        same.map((b) => b.id),
        clean,
        trx,
      );
      for (const contractId of new Set(same.map((b) => b.contract_id)))
        await this.store.event(contractId, ref.actor, `cluster-tags: ${cc.cluster_uid} [${clean.join(', ')}]`, trx);
    });
  }

  /** Binds one cluster to several contracts of the owner, all or nothing; a contract it is bound to already stays as it is. */
  async assign(req: contractsV1.AssignClusterRequest): Promise<void> {
    const uid = clusterUid(req.cluster, 'clusterId');
    const ids = [...new Set(req.contractIds)];
    if (ids.length === 0)
      throw new InputError('contractIds: at least one contract is required', [{ field: 'contractIds', description: 'empty' }]);
    const owners: number[] = [];
    for (const id of ids) {
      const contract = await this.store.find(id, req.ownerId);
      if (!contract) throw new InputError(`contract ${id} does not exist`);
      owners.push(contract.owner_id);
    }
    await this.refuseEnrolledElsewhere(owners, [uid]);
    await this.db.transaction(async (trx) => {
      for (const id of ids) {
        const contract = await this.store.find(id, req.ownerId, trx, true);
        if (!contract) throw new InputError(`contract ${id} does not exist`);
      }
      const bound = new Set((await this.store.clustersOf(ids, trx)).filter((c) => c.cluster_uid === uid).map((c) => c.contract_id));
      const fresh = ids.filter((id) => !bound.has(id));
      await this.store.bind(
        fresh.map((id) => ({ contract_id: id, cluster_uid: uid, display_name: req.displayName, tags: [] })),
        trx,
      );
      for (const id of fresh) await this.store.event(id, req.actor, `cluster-bound: ${uid}`, trx);
    });
  }

  /**
   * For each cluster UUID, how many active contracts of any owner bind it (the dashboard's noOfAssociatedContracts):
   * "associated" as in AssociatedClusters, active contracts only; with when the first counted contract of each ends.
   * At most 1,000 UUIDs; a bad one is 400.
   */
  async countClusterContracts(clusters: string[]): Promise<contractsV1.ClusterContractCounts> {
    if (clusters.length > 1000) throw new InputError('at most 1000 clusters at a time');
    const uids = [...new Set(clusters.map((c) => clusterUid(c)))];
    const counted = await this.store.activeContractCounts(uids);
    return {
      counts: Object.fromEntries(uids.map((uid) => [uid, counted.get(uid)?.count ?? 0])),
      endsUnix: Object.fromEntries([...counted].map(([uid, c]) => [uid, c.endsUnix])),
    };
  }

  /** Per cluster bound to the owner's active contracts: those contracts, its display name and tags. */
  async associated(ownerId: number): Promise<contractsV1.AssociatedCluster[]> {
    const contracts = await this.store.withClusters({ ownerId, activeOnly: true });
    // Oldest binding first, across the contracts: the first display name given wins, the last tags do.
    const bindings = contracts.flatMap((c) => c.clusters).sort((a, b) => a.id - b.id);
    const byCluster = new Map<string, contractsV1.AssociatedCluster>();
    for (const b of bindings) {
      const entry = byCluster.get(b.cluster_uid) ?? { cluster: b.cluster_uid, displayName: '', tags: [], associatedContractIds: [] };
      entry.associatedContractIds.push(b.contract_id);
      entry.displayName ||= b.display_name;
      entry.tags = b.tags;
      byCluster.set(b.cluster_uid, entry);
    }
    return [...byCluster.values()];
  }

  /** 403 when one of the clusters is enrolled by an account other than one of these contract owners (docs/licensing.md). */
  private async refuseEnrolledElsewhere(ownerIds: number[], uids: string[]): Promise<void> {
    const clusters = await Promise.all(uids.map((uid) => this.inventory.cluster(uid)));
    uids.forEach((uid, i) => {
      if (ownerIds.some((ownerId) => enrolledElsewhere(clusters[i], ownerId))) throw notThisAccountsCluster(uid);
    });
  }

  /** A binding of the contract (scoped to the owner); NotFound otherwise. */
  private async binding(ref: contractsV1.ContractClusterRef, trx: Knex.Transaction): Promise<ContractClusterRow> {
    await this.listing.contract(ref.id, ref.ownerId, trx, true);
    const cc = await this.store.cluster(ref.id, ref.ccId, trx);
    if (!cc) throw new NotFoundError(`contract ${ref.id} has no cluster ${ref.ccId}`);
    return cc;
  }
}

/** Tags: trimmed, distinct, at most 50 of at most 63 characters (400 otherwise). */
function tagsOf(tags: string[]): string[] {
  const clean = [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
  if (clean.length > MAX_TAGS || clean.some((t) => t.length > MAX_TAG_LENGTH))
    throw new ValidationError(`tags: at most ${MAX_TAGS} tags of at most ${MAX_TAG_LENGTH} characters`, [
      { field: 'tags', description: 'too many or too long' },
    ]);
  return clean;
}
