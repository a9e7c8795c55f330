import type { contractsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import type { BoundCluster, ContractRow } from './contracts-store';
import { ownedBy, type Inventory, type InventoryCluster } from './inventory';

/** A contract with the status of each cluster bound to it. */
export interface ContractView {
  contract: ContractRow;
  clusters: contractsV1.ContractClusterStatus[];
}

/**
 * The status of a binding: whether the inventory has the cluster under the contract's owner, its name, and the
 * owner's other active contracts on the same cluster granting some of the same features.
 */
export async function boundClusterStatus(
  contract: ContractRow,
  cc: BoundCluster,
  inventory: Inventory,
  log: Logger,
): Promise<contractsV1.ContractClusterStatus> {
  let inv: InventoryCluster | undefined;
  let error = '';
  try {
    inv = await inventory.cluster(cc.cluster_uid);
  } catch (err) {
    // The inventory being away does not fail the contract's answer: the status says so.
    error = `cluster inventory unavailable: ${(err as Error).message}`;
    log.warn({ err, cluster: cc.cluster_uid }, 'cluster inventory unavailable for a contract cluster status');
  }
  const duplicates: contractsV1.DuplicateContractFeatures[] = [];
  for (const other of cc.others) {
    const overlap = other.features.filter((f) => contract.features.includes(f));
    if (overlap.length > 0) duplicates.push({ contractId: other.id, product: other.product, features: overlap });
  }
  return {
    id: cc.id,
    contractId: cc.contract_id,
    cluster: cc.cluster_uid,
    displayName: cc.display_name,
    clusterStatus: {
      isImported: ownedBy(inv, contract.owner_id),
      // The inventory's name of the cluster (renaming sets the binding's displayName); another account's cluster
      // lends the binding nothing of its own (its name stays with its owner).
      name: ownedBy(inv, contract.owner_id) ? inv.name : '',
      tags: cc.tags,
      associatedContractId: cc.contract_id,
    },
    duplicateContractFeatures: duplicates,
    error,
  };
}

/** The status of a cluster no candidate contract binds: imported when the inventory shows it to the owner (0: anyone). */
export function unboundClusterStatus(uid: string, inv: InventoryCluster | undefined, ownerId: number): contractsV1.ContractClusterStatus {
  const visible = !!inv && (!ownerId || ownedBy(inv, ownerId));
  return {
    id: 0,
    contractId: 0,
    cluster: uid,
    displayName: '',
    clusterStatus: { isImported: visible, name: visible ? inv.name : '', tags: [], associatedContractId: 0 },
    duplicateContractFeatures: [],
    error: '',
  };
}
