import { NotFoundError } from '@platform/errors';
import type { AccountLookup, BusAccountRef } from './envelope';

/**
 * The account lookup every consuming service uses (clusters for inventory, billing-dashboard for the billing
 * kinds), so the rule of who may report about which cluster is written once (docs/agent-protocol.md). Each
 * service supplies where accounts and clusters are found: clusters reads its own inventory, billing-dashboard
 * asks clusters over gRPC.
 */

/** A bus account as ingestion sees it: the organization whose system admin holds it, and the hub it was issued for. */
export interface ClusterBusAccount extends BusAccountRef {
  /** The organization owning the account (0 when none does: such an account may report about nothing). */
  ownerId: number;
  /** The hub UID the account was issued for at enrollment (`bus_accounts.cluster_id`), lower-case. */
  clusterId: string;
}

/** What the inventory says about a cluster, as far as ownership goes. */
export interface ClusterOwnership {
  uid: string;
  ownerType: string;
  ownerId: number;
  /** The hub's UID for a managed cluster; empty for a hub. */
  hubUid: string;
}

/** Finds the bus account holding a public key (revoked or not); undefined when none does. Other errors propagate (redelivery). */
export type BusAccountSource = (busPubKey: string) => Promise<ClusterBusAccount | undefined>;

/** Finds a cluster (hub or managed) by UID; undefined when the inventory has none. */
export type ClusterSource = (clusterUID: string) => Promise<ClusterOwnership | undefined>;

/**
 * Whether an account may report about a cluster: the hub it was issued for, or one of that hub's managed
 * clusters, and only while the inventory records the cluster under the organization holding the account.
 */
export function accountMayReportFor(account: ClusterBusAccount, cluster: ClusterOwnership | undefined): boolean {
  if (!cluster || !account.ownerId || !account.clusterId) return false;
  if (cluster.ownerType !== 'organization' || cluster.ownerId !== account.ownerId) return false;
  return (cluster.hubUid || cluster.uid).toLowerCase() === account.clusterId;
}

/**
 * `open`'s account lookup over the two sources. `forBatch()` gives a view that asks each source once per key
 * for the messages of one batch (a hub's reports share one sender and a few clusters), and forgets after the
 * batch, so a revoked account is refused from the next batch on.
 */
export class BusAccountDirectory implements AccountLookup {
  constructor(
    private readonly accounts: BusAccountSource,
    private readonly clusters: ClusterSource,
  ) {}

  accountOf(busPubKey: string): Promise<ClusterBusAccount | undefined> {
    return this.accounts(busPubKey);
  }

  async mayReportFor(ref: BusAccountRef, clusterUID: string): Promise<boolean> {
    return accountMayReportFor(ref as ClusterBusAccount, await this.clusters(clusterUID));
  }

  /** A lookup that remembers every answer (and failure) for as long as it is kept: one batch. */
  forBatch(): AccountLookup {
    return new BusAccountDirectory(memo(this.accounts), memo(this.clusters));
  }
}

function memo<T>(source: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const answers = new Map<string, Promise<T>>();
  return (key) => {
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = source(key)));
    return answer;
  };
}

/** The part of orgs-teams' OrgTokensService client the account source needs. */
export interface BusAccountClient {
  getBusAccountByKey(req: { busPubKey: string }): Promise<{
    account?: { id: number | bigint | string; busPubKey: string; revoked: boolean; clusterId: string };
    orgId: number | bigint | string;
  }>;
}

/**
 * Accounts from orgs-teams (`OrgTokensService.GetBusAccountByKey`): the account holding a key and the
 * organization whose system admin holds it. NotFound means no account; any other error propagates.
 */
export function busAccountsOf(client: BusAccountClient): BusAccountSource {
  return async (busPubKey) => {
    try {
      const { account, orgId } = await client.getBusAccountByKey({ busPubKey });
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
  };
}
