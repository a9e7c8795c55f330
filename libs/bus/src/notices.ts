/**
 * The notices services send each other (Bus.notify / Bus.listen): broadcasts stored nowhere, for caches to
 * drop what may have changed. A listener that was disconnected must assume it missed some.
 */

/** orgs-teams: these accounts' tokens may no longer authenticate as before (a token deleted, the account gone). */
export const ACCOUNTS_CHANGED = 'identity.accounts.changed';

export interface AccountsChanged {
  userIds: number[];
}

/**
 * orgs-teams: these organizations' rows or their teams changed, or they are gone (the other replicas drop them from
 * their organization caches, and their pages of teams).
 */
export const ORGS_CHANGED = 'identity.orgs.changed';

export interface OrgsChanged {
  orgIds: number[];
}

/**
 * authz: relationship tuples were written or deleted (a member, team, role or organization changed). One change can
 * alter answers about objects it does not name (a team's roles reach every permission of the organization), so every
 * replica drops all the authorization decisions it keeps.
 */
export const TUPLES_CHANGED = 'authz.tuples.changed';

export type TuplesChanged = Record<string, never>;

/**
 * clusters: these clusters changed or are gone (an inventory report applied, a hub recorded or taken back), and the
 * set of clusters of these owners (`organization:7`, `user:3`) may have changed. Whoever keeps what the inventory
 * answered (the gateways' resolved hubs, contracts' clusters) drops it.
 */
export const CLUSTERS_CHANGED = 'clusters.changed';

export interface ClustersChanged {
  uids: string[];
  owners: string[];
}

/**
 * contracts-licensing: a contract, its bindings or a license issued under it may have changed (any write it answered,
 * committed or not). Whoever keeps what contracts-licensing answered (the gateways' issued licenses and contract counts
 * of the billing dashboard) drops all of it: contract writes are rare beside the reads, and naming what each one
 * touched would be a second place to get wrong.
 */
export const CONTRACTS_CHANGED = 'contracts.changed';

export type ContractsChanged = Record<string, never>;
