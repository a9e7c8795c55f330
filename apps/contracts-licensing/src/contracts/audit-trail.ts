import type { contractsV1 } from '@platform/proto';
import { unix, type ContractsStore } from './contracts-store';
import type { ContractListing } from './listing';

/**
 * A contract's audit trail. Every change appends its event in the transaction of the change (the store's
 * `event`); this reads them back, oldest first.
 */
export class AuditTrail {
  constructor(
    private readonly store: ContractsStore,
    private readonly listing: ContractListing,
  ) {}

  async of(id: number, ownerId: number): Promise<contractsV1.AuditEvent[]> {
    await this.listing.contract(id, ownerId);
    return (await this.store.events(id)).map((e) => ({
      id: e.id,
      contractId: e.contract_id,
      addedBy: e.added_by,
      event: e.event,
      createdUnix: unix(e.created_at),
    }));
  }
}
