import type { Database } from '@platform/db';
import type { ObjectStorage } from '@platform/object-storage';
import type { Logger } from '@platform/service-kit';
import { AuditTrail } from './audit-trail';
import { ClusterBinding } from './cluster-binding';
import { ContractsStore } from './contracts-store';
import { ContractDocuments } from './documents';
import { ContractLifecycle } from './lifecycle';
import { ContractListing } from './listing';
import type { Inventory } from './inventory';

export type { ContractView } from './cluster-status';

/**
 * Contracts (docs/contracts.md), one part per concern: their life (lifecycle), reading them and the status of
 * their clusters (listing), binding clusters to them (binding), their documents, and their audit trail. `ownerId`
 * scopes a call to one account's contracts (0: any owner, the site-admin routes); another owner's contract is
 * NotFound.
 */
export interface Contracts {
  lifecycle: ContractLifecycle;
  listing: ContractListing;
  binding: ClusterBinding;
  documents: ContractDocuments;
  auditTrail: AuditTrail;
}

export function createContracts(db: Database, storage: ObjectStorage, inventory: Inventory, log: Logger): Contracts {
  const store = ContractsStore.create(db);
  const listing = new ContractListing(store, inventory, log);
  const documents = new ContractDocuments(db, storage, listing, log);
  return {
    lifecycle: new ContractLifecycle(db, store, listing, documents),
    listing,
    binding: new ClusterBinding(db, store, listing, inventory),
    documents,
    auditTrail: new AuditTrail(store, listing),
  };
}
