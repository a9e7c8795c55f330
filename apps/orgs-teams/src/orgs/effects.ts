import type { Database, EffectContext, EffectHandler, EffectInStatement, StageEffect, StatementColumn } from '@platform/db';
import { UnavailableError } from '@platform/errors';
import { changed } from '../changes';
import { tupleKey, type Tuple } from '../relationships';
import { CLUSTER_CONNECTION_EFFECT, clusterConnectionEffect, type ClusterConnections } from './cluster-connections';
import type { OrgAuthz, RoleUntil } from './org-authz';
import { ownedOrgTuples, teamOfOrg, tuplesCalledFor } from './tuples';

/**
 * What orgs-teams' changes need done outside its own rows, as outbox effects (libs/db outbox): each one is
 * idempotent, so the relay may apply it again after a crash, and each one that can be undone says how.
 */
export interface TupleChange {
  /** The tuples the change touched; each is written or deleted as the rows call for when applied. */
  tuples: Tuple[];
  /**
   * The change left rows that call for every one of these tuples (a create, an add). Applied right after its commit, the
   * tuples are written without reading the rows first; they are read after the write all the same (reconcileTuples).
   */
  calledFor?: true;
}

/**
 * A team's custom roles replaced (`roleIds`, with the ends of time-bound ones in `until`), and what they were
 * (`previous`, `previousUntil`), so the change can be undone.
 */
export interface TeamRolesChange {
  orgId: number;
  teamId: number;
  roleIds: number[];
  previous: number[];
  until?: RoleUntil;
  previousUntil?: RoleUntil;
}

/**
 * An organization made with its owner team and its creator in it, by the one statement that wrote them (its ids are
 * that statement's): the tuples those rows call for (ownedOrgTuples).
 */
export interface OrgCreated {
  orgId: number;
  ownerTeamId: number;
  creatorId: number;
}

/** A team made in an organization, by the one statement that wrote it: the tuples its row calls for (teamOfOrg). */
export interface TeamCreated {
  orgId: number;
  teamId: number;
}

export const EFFECT = {
  tuples: 'authz.tuples',
  orgCreated: 'authz.org-created',
  teamCreated: 'authz.team-created',
  teamRoles: 'authz.team-roles',
  orgRolesDeleted: 'authz.org-roles-deleted',
  avatarDiscarded: 'avatars.discarded',
  /** Staged by earlier versions only, which announced accounts through the outbox; entries of it may still wait. */
  accountsChanged: 'identity.accounts-changed',
  clusterConnection: CLUSTER_CONNECTION_EFFECT,
} as const;

/**
 * Stages bringing these tuples in line with the rows, once the change committed (nothing when none); `calledFor` when
 * the change's rows call for every one of them (TupleChange).
 */
export function stageTuples(stage: StageEffect, tuples: Tuple[], calledFor?: { calledFor: true }): void {
  if (tuples.length) stage(EFFECT.tuples, { tuples, ...calledFor } satisfies TupleChange);
}

/** Bringing these tuples in line with rows that call for every one of them, for a change written by one statement. */
export function tuplesInStatement(tuples: Tuple[]): EffectInStatement {
  return { kind: EFFECT.tuples, payload: { tuples, calledFor: true } satisfies TupleChange };
}

/** The effect of an organization's creation, its ids the columns of the statement that makes them. */
export function orgCreated(made: { orgId: StatementColumn; ownerTeamId: StatementColumn; creatorId: number }): EffectInStatement {
  return { kind: EFFECT.orgCreated, payload: made };
}

/**
 * The effects of a team's creation, its id the column of the statement that makes it: its tuples first (authz attaches
 * roles only to a team of the organization), then its custom roles when it has any.
 */
export function teamCreated(orgId: number, teamId: StatementColumn, roleIds: number[], until: RoleUntil): EffectInStatement[] {
  const created: EffectInStatement = { kind: EFFECT.teamCreated, payload: { orgId, teamId } };
  if (!roleIds.length && !Object.keys(until).length) return [created];
  return [created, { kind: EFFECT.teamRoles, payload: { orgId, teamId, roleIds, until, previous: [] } }];
}

/** Stages replacing a team's custom roles (nothing when they stay the same). */
export function stageTeamRoles(stage: StageEffect, change: TeamRolesChange): void {
  const same =
    change.roleIds.length === change.previous.length &&
    change.roleIds.every((id) => change.previous.includes(id)) &&
    sameEnds(change.until ?? {}, change.previousUntil ?? {});
  if (!same) stage(EFFECT.teamRoles, change);
}

/** Whether two sets of ends name the same roles ending at the same instants. */
function sameEnds(a: RoleUntil, b: RoleUntil): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && Date.parse(a[Number(k)]) === Date.parse(b[Number(k)]));
}

/** The handlers of orgs-teams' effects. */
export function orgEffects(
  db: Database,
  authz: OrgAuthz,
  discardAvatar: (orgId: number, key: string) => Promise<void>,
  clusters: ClusterConnections,
): Record<string, EffectHandler> {
  const tuples: EffectHandler<TupleChange> = {
    apply: (c, call, applied) => reconcileTuples(db, authz, c.tuples, call, tuplesCalledFor, applied?.afterCommit && c.calledFor),
    // Applied again after an undo put the rows back, it brings the tuples back in line with them.
    invert: (c) => c,
  };
  const created: EffectHandler<OrgCreated> = {
    apply: (c, call, applied) =>
      tuples.apply({ tuples: ownedOrgTuples(c.orgId, c.ownerTeamId, c.creatorId), calledFor: true }, call, applied),
    // As the tuples' effect: applied again after an undo removed the rows, it removes the tuples.
    invert: (c) => c,
  };
  const teamMade: EffectHandler<TeamCreated> = {
    apply: (c, call, applied) => tuples.apply({ tuples: teamOfOrg(c.orgId, c.teamId), calledFor: true }, call, applied),
    invert: (c) => c,
  };
  const teamRoles: EffectHandler<TeamRolesChange> = {
    apply: async (c, call) => void (await authz.assignTeamRoles(c.orgId, c.teamId, c.roleIds, c.until, call)),
    invert: (c) => ({ ...c, roleIds: c.previous, previous: c.roleIds, until: c.previousUntil, previousUntil: c.until }),
  };
  const orgRolesDeleted: EffectHandler<{ orgId: number }> = {
    apply: (c, call) => authz.deleteOrgRoles(c.orgId, call),
  };
  const avatarDiscarded: EffectHandler<{ orgId: number; key: string }> = {
    apply: (c) => discardAvatar(c.orgId, c.key),
  };
  // An entry an earlier version left: its accounts are recorded, so whatever applies it announces them (changes.ts).
  const accountsChangedNotice: EffectHandler<{ userIds: number[] }> = {
    apply: async (c) => changed.accounts(c.userIds),
  };
  return {
    [EFFECT.tuples]: tuples,
    [EFFECT.orgCreated]: created,
    [EFFECT.teamCreated]: teamMade,
    [EFFECT.teamRoles]: teamRoles,
    [EFFECT.orgRolesDeleted]: orgRolesDeleted,
    [EFFECT.avatarDiscarded]: avatarDiscarded,
    [EFFECT.accountsChanged]: accountsChangedNotice,
    [EFFECT.clusterConnection]: clusterConnectionEffect(db, clusters),
  };
}

const RECONCILE_ROUNDS = 5;

/**
 * Writes the tuples the rows call for (`calledFor` reads which) and deletes the others, then reads the rows again:
 * when another change moved them meanwhile, its own write may have landed before ours, so we go again until they
 * hold still. Whichever reconcile writes last has read the newest rows, so the tuples end matching them.
 * `allCalledFor`: the change applying this right after its commit left rows calling for every tuple, so the first
 * round writes them all without reading the rows (the read after the write still tells whether another change moved them).
 */
export async function reconcileTuples(
  db: Database,
  authz: Pick<OrgAuthz, 'write'>,
  touched: Tuple[],
  call: EffectContext,
  calledFor: (db: Database, tuples: Tuple[]) => Promise<Set<string>>,
  allCalledFor?: boolean,
): Promise<void> {
  const tuples = [...new Map(touched.map((t) => [tupleKey(t), t])).values()];
  let called = allCalledFor ? new Set(tuples.map(tupleKey)) : await calledFor(db, tuples);
  for (let round = 0; round < RECONCILE_ROUNDS; round++) {
    const writes = tuples.filter((t) => called.has(tupleKey(t)));
    const deletes = tuples.filter((t) => !called.has(tupleKey(t)));
    await authz.write(writes, deletes, call, { idempotent: true });
    const now = await calledFor(db, tuples);
    if (now.size === called.size && [...now].every((k) => called.has(k))) return;
    called = now;
  }
  throw new UnavailableError('the memberships kept changing while their authorization was written; it will be retried');
}
