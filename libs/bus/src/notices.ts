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
 * of them: the organization, its teams and lists of teams; the other replicas of orgs-teams their organization rows),
 * or, as `only` says, their teams or members alone (docs/decisions.md, D116).
 */
export const ORGS_CHANGED = 'identity.orgs.changed';

export interface OrgsChanged {
  orgIds: number[];
  /** Any organization may have changed (a write that did not record which): drop everything kept of them. */
  all?: true;
  /**
   * What alone changed of the organizations named: their teams (and perhaps who is in them), or who is in them. Absent:
   * their rows may have changed too. A reader of an organization's row (its name, visibility, contact) keeps it across
   * such a change; one that keeps what the membership decides (who sees a private organization) or an organization's
   * teams drops what it keeps of them. A reader that does not know the field drops everything named, as before.
   */
  only?: 'teams' | 'members';
  /**
   * The rows of organizations named that the change left as they are, and nothing else of them changed (an edit of their
   * fields): the Organization message, its `version` one more than before. A reader may replace what it keeps of such an
   * organization by a row of a higher version instead of dropping it (an older row reaching it later changes nothing);
   * a reader that does not know the field drops what it keeps, as before. An organization named without a row is dropped.
   */
  rows?: OrgRowNotice[];
}

/** An organization's row in a notice: the Organization message of orgs-teams, with its `id` and `version`. */
export type OrgRowNotice = { id: number; version: number };

/** The rows an organizations notice carries, by organization id (none for a notice of its teams or members alone). */
export function orgRowsBrought(notice: unknown): Map<number, OrgRowNotice> {
  const n = notice as Partial<OrgsChanged>;
  if (n.all || n.only || !Array.isArray(n.rows)) return new Map();
  return new Map(n.rows.filter((r) => Number.isSafeInteger(r?.id) && Number.isSafeInteger(r?.version)).map((r) => [r.id, r]));
}

/**
 * `tags` of a notice (`org:7`, `members:7`) but those of the organizations whose new row it brings: a reader that takes
 * the rows (NoticeRule.fresh) replaces what it keeps of them instead of dropping it.
 */
export function besidesRowsBrought(tags: string[] | 'all', notice: unknown): string[] | 'all' {
  const rows = orgRowsBrought(notice);
  return tags === 'all' || rows.size === 0 ? tags : tags.filter((t) => !rows.has(Number(t.slice(t.indexOf(':') + 1))));
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

/** The organizations a notice names whose rows may have changed (`org:7`): none when their teams or members alone did. */
export function orgRowsNamed(notice: unknown): string[] | 'all' {
  return (notice as Partial<OrgsChanged>).only ? [] : orgsNamed(notice);
}

/** The organizations a notice names whose teams may have changed (`org:7`): none when who is in them alone did. */
export function orgTeamsNamed(notice: unknown): string[] | 'all' {
  return (notice as Partial<OrgsChanged>).only === 'members' ? [] : orgsNamed(notice);
}

/**
 * authz: relationship tuples were written or deleted (any write method of authz's services, answered or not: a member,
 * team, role or organization changed). The notice names what the write touched, so that a reader drops only what
 * depends on it (docs/decisions.md, "tuple notices name what they touched"):
 * - `tags`: for every tuple written or deleted, its object (`team:12`), its object and relation (`team:12#member`), its
 *   object's type (`team:*`, which answers that looked for objects of a type carry) and its user's object
 *   (`@organization:7`, which answers that looked for the tuples of a user carry). authz's answers to the platform's
 *   apps say which of these they were read from (`dependsOn`), and are kept under them: an answer that read one
 *   relation of an object (`team:12#maintainer`) outlives a write of another (`team:12#member`), as OpenFGA's check
 *   cache, keyed by object and relation, does.
 * - `relations`: set when `tags` name each tuple's object and relation. An answer read from one relation of an object
 *   also carries `team:12#*`, which a notice without it (from an authz that named objects alone, during a rolling
 *   upgrade) names for each object it names, so such a notice still drops every answer read from that object.
 * - `orgs`: the organizations the touched objects belong to (a team's, a role's, a cluster's owner), for what is kept
 *   by organization (an organization as a viewer sees it, its lists of teams, its custom roles).
 * - `all`: the write could not be named (the site's admins changed, which reach every organization; a write too large
 *   to list; an object whose organization is not known): drop everything.
 * A notice without `tags` (from an authz that does not name its writes) means `all`.
 */
export const TUPLES_CHANGED = 'authz.tuples.changed';

export interface TuplesChanged {
  tags?: string[];
  relations?: true;
  orgs?: number[];
  all?: true;
}

/** The tag every answer of authz whose reads are not known carries (an OpenFGA server's): any tuple notice drops it. */
export const ANY_TUPLE = 'tuples:any';

/** The tags of one tuple a tuple notice names: its object, its object and relation, its object's type and its user's object. */
export function tupleTags(tuple: { user: string; relation: string; object: string }): string[] {
  const type = tuple.object.slice(0, tuple.object.indexOf(':'));
  const hash = tuple.user.indexOf('#');
  return [tuple.object, `${tuple.object}#${tuple.relation}`, `${type}:*`, `@${hash < 0 ? tuple.user : tuple.user.slice(0, hash)}`];
}

/** The tags an answer read from the tuples on `object#relation` carries: the relation's, and every relation's (`#*`). */
export const relationTags = (object: string, relation: string): [string, string] => [`${object}#${relation}`, `${object}#*`];

/** An object's tag (`team:12`), as opposed to a type's (`team:*`), a user's (`@user:3`) or a relation's (`team:12#member`). */
const isObjectTag = (tag: string) => !tag.startsWith('@') && !tag.endsWith(':*') && !tag.includes('#');

/** What a tuple notice makes stale among answers kept under authz's `dependsOn` tags, or 'all'. */
export function tuplesNamed(notice: unknown): string[] | 'all' {
  const n = notice as Partial<TuplesChanged>;
  if (n.all || !Array.isArray(n.tags)) return 'all';
  if (n.relations) return [...n.tags, ANY_TUPLE];
  // Named by object alone: every relation of each object may have changed.
  return [...n.tags, ...n.tags.filter(isObjectTag).map((tag) => `${tag}#*`), ANY_TUPLE];
}

/** The organizations a tuple notice names (`org:7`), or 'all'. */
export function tupleOrgsNamed(notice: unknown): string[] | 'all' {
  const n = notice as Partial<TuplesChanged>;
  return n.all || !Array.isArray(n.orgs) ? 'all' : n.orgs.map((id) => `org:${Number(id)}`);
}

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

/** What the notices of the subjects that name what they changed name (KeptRead.about); any other subject names nothing. */
export const NOTICE_NAMES: Readonly<Record<string, (notice: unknown) => string[] | 'all'>> = {
  [ACCOUNTS_CHANGED]: accountsNamed,
  [ORGS_CHANGED]: orgsNamed,
  // The accounts whose sign-in state changed, or all of them when the write did not record which.
  [SIGNIN_CHANGED]: (notice) => {
    const ids = (notice as Partial<SignInChanged>).userIds ?? [];
    return ids.length ? ids.map((id) => `account:${Number(id)}`) : 'all';
  },
  // What was read from (authz's `dependsOn` tags) and the organizations touched, for answers kept by either.
  [TUPLES_CHANGED]: (notice) => {
    const tags = tuplesNamed(notice);
    const orgs = tupleOrgsNamed(notice);
    return tags === 'all' || orgs === 'all' ? 'all' : [...tags, ...orgs];
  },
};

/** Most names (ids, tags) a notice merged from several carries; past it the notices go apart. */
const MAX_MERGED_NAMES = 5_000;

/** The union of two lists of names, or undefined when it would be longer than a merged notice may name. */
function union<T>(a: readonly T[], b: readonly T[]): T[] | undefined {
  const all = [...new Set([...a, ...b])];
  return all.length > MAX_MERGED_NAMES ? undefined : all;
}

/** A notice that names nothing (it says its owner's answers all changed): two are one. */
const same = (a: unknown) => a;

/**
 * How two notices of one subject sent close together become one that drops what both drop (NoticeStream sends a
 * subject's notices one at a time and merges those that wait: see coalesced-sends.ts). Each merge is a notice of the
 * same subject as every reader of it already reads, so readers of any version understand it; it may drop more than
 * the two would (an organization's row with another's teams), never less. A subject missing here is sent as it comes.
 */
export const NOTICE_MERGES: Readonly<Record<string, (a: any, b: any) => unknown>> = {
  [ACCOUNTS_CHANGED]: (a: AccountsChanged, b: AccountsChanged): AccountsChanged | undefined => {
    if (a.all || b.all) return { userIds: [], all: true };
    const userIds = union(a.userIds, b.userIds);
    return userIds && { userIds };
  },
  [ORGS_CHANGED]: (a: OrgsChanged, b: OrgsChanged): OrgsChanged | undefined => {
    if (a.all || b.all) return { orgIds: [], all: true };
    const orgIds = union(a.orgIds, b.orgIds);
    if (!orgIds) return undefined;
    // Teams changed covers members changed; anything else, or a row, is no `only`.
    const only = !a.only || !b.only ? undefined : a.only === b.only ? a.only : 'teams';
    if (only) return { orgIds, only };
    // A row stays only for an organization that every notice naming it brings a row of (the newer one): named without
    // one, something else of it changed, which only dropping it covers.
    const [rowsA, rowsB] = [orgRowsBrought(a), orgRowsBrought(b)];
    const rows: OrgRowNotice[] = [];
    for (const id of orgIds) {
      const [ra, rb] = [rowsA.get(id), rowsB.get(id)];
      const namedWithout = (a.orgIds.includes(id) && !ra) || (b.orgIds.includes(id) && !rb);
      if (namedWithout) continue;
      const newer = ra && rb ? (rb.version > ra.version ? rb : ra) : (ra ?? rb);
      if (newer) rows.push(newer);
    }
    return rows.length ? { orgIds, rows } : { orgIds };
  },
  // An empty list names every account.
  [SIGNIN_CHANGED]: (a: SignInChanged, b: SignInChanged): SignInChanged | undefined => {
    if (!a.userIds?.length || !b.userIds?.length) return { userIds: [] };
    const userIds = union(a.userIds, b.userIds);
    return userIds && { userIds };
  },
  [TUPLES_CHANGED]: (a: TuplesChanged, b: TuplesChanged): TuplesChanged | undefined => {
    if (a.all || b.all || !Array.isArray(a.tags) || !Array.isArray(b.tags)) return { all: true };
    const tags = union(a.tags, b.tags);
    if (!tags) return undefined;
    // Without `orgs` a notice names every organization; without `relations` its object tags stand for every relation.
    const orgs = Array.isArray(a.orgs) && Array.isArray(b.orgs) ? union(a.orgs, b.orgs) : undefined;
    return { tags, ...(a.relations && b.relations ? { relations: true as const } : {}), ...(orgs ? { orgs } : {}) };
  },
  [CLUSTERS_CHANGED]: (a: ClustersChanged, b: ClustersChanged): ClustersChanged | undefined => {
    if (a.all || b.all) return { uids: [], owners: [], all: true };
    const uids = union(a.uids, b.uids);
    const owners = union(a.owners, b.owners);
    return uids && owners && { uids, owners };
  },
  [METRICSPROXY_CHANGED]: (a: MetricsproxyChanged, b: MetricsproxyChanged): MetricsproxyChanged | undefined => {
    if (a.all || b.all) return { registrations: [], all: true };
    const byKey = new Map([...a.registrations, ...b.registrations].map((r) => [`${r.ownerId}/${r.clusterUid}`, r]));
    return byKey.size > MAX_MERGED_NAMES ? undefined : { registrations: [...byKey.values()] };
  },
  [ORGS_TEAMS_OTHER_CHANGED]: same,
  [CONTRACTS_CHANGED]: same,
  [BILLING_CHANGED]: same,
  [MARKETPLACE_CHANGED]: same,
};
