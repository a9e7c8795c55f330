import type { Knex } from 'knex';
import { NotFoundError } from '@platform/errors';
import type { contractsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import { boundClusterStatus, unboundClusterStatus, type ContractView } from './cluster-status';
import type { ContractFilter, ContractRow, ContractsStore, ContractWithClusters } from './contracts-store';
import { memoInventory, type Inventory } from './inventory';
import { clusterUid } from './validation';

/**
 * Reading contracts: the lists, one contract, the clusters bound to one, and a cluster's status. Each read is one
 * statement (the store's `withClusters`); the inventory is asked once for the clusters of the answer.
 */
export class ContractListing {
  constructor(
    private readonly store: ContractsStore,
    private readonly inventory: Inventory,
    private readonly log: Logger,
  ) {}

  async list(filter: ContractFilter): Promise<ContractView[]> {
    return this.views(
      await this.store.withClusters({
        ...filter,
        boundTo: filter.boundTo ? clusterUid(filter.boundTo) : undefined,
        notBoundTo: filter.notBoundTo ? clusterUid(filter.notBoundTo) : undefined,
      }),
    );
  }

  /** The contract with the status of its clusters, or NotFound (also for another owner's contract). */
  async get(id: number, ownerId: number): Promise<ContractView> {
    return (await this.views([await this.withClusters(id, ownerId)]))[0];
  }

  async clusters(id: number, ownerId: number): Promise<contractsV1.ContractClusterStatus[]> {
    return (await this.get(id, ownerId)).clusters;
  }

  /** The contract as a change just left it; the row it answered when the contract is gone since. */
  async afterChange(row: ContractRow): Promise<ContractView> {
    const [found] = await this.store.withClusters({ id: row.id, ownerId: 0 });
    return (await this.views([found ?? { contract: row, clusters: [] }]))[0];
  }

  /** The contract with its bindings, or NotFound (also for another owner's contract). */
  async withClusters(id: number, ownerId: number): Promise<ContractWithClusters> {
    const [found] = await this.store.withClusters({ id, ownerId });
    if (!found) throw new NotFoundError(`contract ${id} does not exist`);
    return found;
  }

  /** The contract, or NotFound (also for another owner's contract); `lock` holds it until the transaction ends. */
  async contract(id: number, ownerId: number, trx?: Knex.Transaction, lock = false): Promise<ContractRow> {
    const row = await this.store.find(id, ownerId, trx, lock);
    if (!row) throw new NotFoundError(`contract ${id} does not exist`);
    return row;
  }

  /** A cluster's status as bound to the owner's active contracts (the first binding), or to `contractId`. */
  async clusterStatus(ownerId: number, cluster: string, contractId: number): Promise<contractsV1.ContractClusterStatus> {
    return (await this.batchStatus(ownerId, [cluster], contractId))[0];
  }

  async batchStatus(ownerId: number, clusters: string[], contractId: number): Promise<contractsV1.ContractClusterStatus[]> {
    const uids = clusters.map((c, i) => clusterUid(c, `clusters[${i}]`));
    const candidates = contractId
      ? [await this.withClusters(contractId, ownerId)]
      : await this.store.withClusters({ ownerId, activeOnly: true });
    const inventory = memoInventory(this.inventory, uids);
    return Promise.all(
      uids.map(async (uid) => {
        for (const { contract, clusters: bound } of candidates) {
          const cc = bound.find((b) => b.cluster_uid === uid);
          if (cc) return boundClusterStatus(contract, cc, inventory, this.log);
        }
        return unboundClusterStatus(uid, await inventory.cluster(uid), ownerId);
      }),
    );
  }

  /** Contracts with the status of their clusters, the inventory asked once for all of them. */
  private async views(contracts: ContractWithClusters[]): Promise<ContractView[]> {
    const inventory = memoInventory(
      this.inventory,
      contracts.flatMap(({ clusters }) => clusters.map((cc) => cc.cluster_uid)),
    );
    return Promise.all(
      contracts.map(async ({ contract, clusters }) => ({
        contract,
        clusters: await Promise.all(clusters.map((cc) => boundClusterStatus(contract, cc, inventory, this.log))),
      })),
    );
  }
}
