import type { AccountLookup, BusAccountRef } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { NotFoundError } from '@platform/errors';
import { orgTokensV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { ClustersStore } from '../inventory/clusters-store';

/** A bus account as ingestion sees it: the organization whose system admin holds it, and the hub it was issued for. */
export interface ClusterBusAccount extends BusAccountRef {
  /** The organization owning the account (0 when none does: such an account may report about nothing). */
  ownerId: number;
  /** The hub UID the account was issued for at enrollment (`bus_accounts.cluster_id`). */
  clusterId: string;
}

/** Where bus accounts are found: orgs-teams' `GetBusAccountByKey`. */
export type BusAccountSource = Pick<PromiseClient<typeof orgTokensV1.OrgTokensServiceService>, 'getBusAccountByKey'>;

/** The orgs-teams client ingestion asks for bus accounts. */
export function orgTokensClient(address: string): PromiseClient<typeof orgTokensV1.OrgTokensServiceService> {
  return createClient(orgTokensV1.OrgTokensServiceService, address, { name: 'orgs-teams', deadlineMs: 5_000 });
}

/**
 * The account lookup of `open` for clusters' ingestion: accounts come from orgs-teams, ownership from the
 * inventory. An account may report about the hub it was issued for and about that hub's managed clusters,
 * as long as the inventory records the hub under the account's organization. Errors other than NotFound
 * (orgs-teams or the database down) propagate, so the message is redelivered.
 */
export class BusAccounts implements AccountLookup {
  private readonly store: ClustersStore;

  constructor(
    private readonly source: BusAccountSource,
    db: Database,
  ) {
    this.store = ClustersStore.create(db);
  }

  async accountOf(busPubKey: string): Promise<ClusterBusAccount | undefined> {
    try {
      const { account, orgId } = await this.source.getBusAccountByKey({ busPubKey });
      if (!account) return undefined;
      return {
        busPubKey: account.busPubKey,
        revoked: account.revoked,
        id: Number(account.id),
        ownerId: Number(orgId),
        clusterId: account.clusterId.toLowerCase(),
      };
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  async mayReportFor(ref: BusAccountRef, clusterUID: string): Promise<boolean> {
    const account = ref as ClusterBusAccount;
    if (!account.ownerId || !account.clusterId) return false;
    const row = await this.store.byUid(clusterUID);
    if (!row || row.owner_type !== 'organization' || Number(row.owner_id) !== account.ownerId) return false;
    if (row.hub_id === null) return row.uid === account.clusterId;
    const hub = await this.store.byId(row.hub_id);
    return hub?.uid === account.clusterId;
  }
}
