/**
 * The notices services send each other (Bus.notify / Bus.listen): broadcasts stored nowhere, for caches to
 * drop what may have changed. A listener that was disconnected must assume it missed some.
 */

/**
 * orgs-teams: these accounts changed (a row, a token, a credential), or they are gone: what is kept of them (who their
 * tokens belong to, the account, organizations as they see them) is dropped. Sent after every orgs-teams write that
 * recorded changing them (docs/decisions.md, D83).
 */
export const ACCOUNTS_CHANGED = 'identity.accounts.changed';

export interface AccountsChanged {
  userIds: number[];
  /**
   * Any account may have changed (a write that did not record which): drop everything kept of orgs-teams' accounts.
   * `userIds` is then empty. A reader that does not know this field drops nothing, so readers update first.
   */
  all?: true;
}

/**
 * orgs-teams: something else its readers keep whole changed: the site's settings, allowed domains, group mappings,
 * external identities, organization avatars or the audit trail (whoever keeps those answers drops them all). Apart from
 * the accounts and organizations notices so that an audited request does not drop every reader's tokens.
 */
export const ORGS_TEAMS_OTHER_CHANGED = 'identity.other.changed';

export type OrgsTeamsOtherChanged = Record<string, never>;

/**
 * orgs-teams: these accounts' sign-in state changed: a token's or a session's last use, a session begun or ended, a
 * second factor's code or recovery code spent, a sign-in lockout begun or lifted. What shows that state (token lists,
 * sessions, second factors, the site admin's user list with lockouts) is dropped; who a token belongs to is not, so a
 * token's use once a minute does not cost its readers their tokens.
 */
export const SIGNIN_CHANGED = 'identity.signin.changed';

export interface SignInChanged {
  /** The accounts recorded; empty when the write did not record which (every reader drops all it keeps of sign-in state). */
  userIds: number[];
}

/**
 * orgs-teams: these organizations' rows, members or teams changed, or they are gone (every reader drops what it keeps
 * of them: the organization, its teams and lists of teams; the other replicas of orgs-teams their organization rows).
 */
export const ORGS_CHANGED = 'identity.orgs.changed';

export interface OrgsChanged {
  orgIds: number[];
  /** Any organization may have changed (a write that did not record which): drop everything kept of them. */
  all?: true;
}

/** The tags of the accounts a notice names (`account:3`), or 'all' for the notice meaning every one. */
export function accountsNamed(notice: unknown): string[] | 'all' {
  const n = notice as Partial<AccountsChanged>;
  return n.all ? 'all' : (n.userIds ?? []).map((id) => `account:${Number(id)}`);
}

/** The tags of the organizations a notice names (`org:7`), or 'all' for the notice meaning every one. */
export function orgsNamed(notice: unknown): string[] | 'all' {
  const n = notice as Partial<OrgsChanged>;
  return n.all ? 'all' : (n.orgIds ?? []).map((id) => `org:${Number(id)}`);
}

/**
 * authz: relationship tuples may have been written or deleted (any write method of authz's services, answered or not:
 * a member, team, role or organization changed). One change can alter answers about objects it does not name (a
 * team's roles reach every permission of the organization), so every reader drops all it keeps of authz's answers.
 */
export const TUPLES_CHANGED = 'authz.tuples.changed';

export type TuplesChanged = Record<string, never>;

/**
 * clusters: these clusters changed or are gone (an inventory report applied, a hub recorded or taken back), and the
 * set of clusters of these owners (`organization:7`, `user:3`) may have changed; or, with `all`, any cluster may have
 * (a write that cannot name what it changed). Whoever keeps what the inventory answered (the gateways' resolved hubs,
 * contracts' clusters) drops it.
 */
export const CLUSTERS_CHANGED = 'clusters.changed';

export interface ClustersChanged {
  uids: string[];
  owners: string[];
  /** Any cluster and any owner's set of clusters may have changed: drop everything kept. */
  all?: true;
}

/**
 * contracts-licensing: a contract, its bindings or a license issued under it may have changed (any write it answered,
 * committed or not). Whoever keeps what contracts-licensing answered (the gateways' issued licenses and contract counts
 * of the billing dashboard) drops all of it: contract writes are rare beside the reads, and naming what each one
 * touched would be a second place to get wrong.
 */
export const CONTRACTS_CHANGED = 'contracts.changed';

export type ContractsChanged = Record<string, never>;

/**
 * metricsproxy: the registrations of these clusters of these owners changed or are gone (any write method, answered or
 * not: a backend registered or unregistered, on either flavor); or, with `all`, any registration may have (a write
 * whose request names none). Whoever keeps what metricsproxy answered (the gateways' backends of the metrics auth hook)
 * drops what is named, every project of a cluster named.
 */
export const METRICSPROXY_CHANGED = 'metricsproxy.changed';

export interface MetricsproxyChanged {
  /** By the owner's account id and the cluster's UID (lower-case). */
  registrations: { ownerId: number; clusterUid: string }[];
  /** Any registration may have changed: drop everything kept. `registrations` is then empty. */
  all?: true;
}

/**
 * billing-dashboard: what its dashboard answers may have changed: agent reports applied (usage, licensed products,
 * resource events), or a write it answered (a system outage recorded). Whoever keeps what billing-dashboard answered
 * drops all of it: its answers are aggregates over many reports, so naming which ones a report touched would be a
 * second query engine to get wrong.
 */
export const BILLING_CHANGED = 'billing.changed';

export type BillingChanged = Record<string, never>;

/**
 * marketplace-listener: what its dashboard rows answer may have changed: a write it answered (an installer created, a
 * subscription revoked, usage reported), a marketplace notification processed (a binding, a provisioning state, an
 * audit entry), or an outbox effect that recorded a subscriber; also sent when it starts, as its settings (which its
 * configuration warnings show) may have changed with it. Whoever keeps what marketplace-listener answered drops all of
 * it: its writes are rare beside the dashboard's reads.
 */
export const MARKETPLACE_CHANGED = 'marketplace.changed';

export type MarketplaceChanged = Record<string, never>;
