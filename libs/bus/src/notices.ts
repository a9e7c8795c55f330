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
 * clusters: these hubs are gone (a hub whose recording was taken back when its owner could not be written to authz),
 * so an owner's hub of that name may now be another one. The gateways drop what they resolved for them.
 */
export const HUBS_CHANGED = 'clusters.hubs.changed';

export interface HubsChanged {
  uids: string[];
}
