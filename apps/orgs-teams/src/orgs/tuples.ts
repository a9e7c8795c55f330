import type { Knex } from 'knex';
import { insertTuples, literal, type TupleRowSql } from '@platform/authz-client';
import type { Database } from '@platform/db';
import { changed } from '../changes';
import { ACCOUNT_TYPE } from '../identity/identity';
import { tupleKey, type Tuple } from '../relationships';
import { OWNER_PERMISSION } from './rows';

/** The site object every organization hangs off, so site admins reach it. */
const SITE = 'site:platform';

// The relationships orgs-teams keeps in authz for organizations and teams (the contract shared with authz).

/** The organization exists on the site. */
export const orgOnSite = (orgId: number): Tuple => ({ user: SITE, relation: 'site', object: `organization:${orgId}` });

/** A team belongs to its organization, and its members are members of the organization. */
export const teamOfOrg = (orgId: number, teamId: number): Tuple[] => [
  { user: `organization:${orgId}`, relation: 'organization', object: `team:${teamId}` },
  { user: `team:${teamId}#member`, relation: 'member', object: `organization:${orgId}` },
];

/** The owner team's members own the organization. */
export const ownerTeamOfOrg = (orgId: number, teamId: number): Tuple => ({
  user: `team:${teamId}#member`,
  relation: 'owner',
  object: `organization:${orgId}`,
});

/** A user is a member of a team. */
export const teamMember = (teamId: number, uid: number): Tuple => ({ user: `user:${uid}`, relation: 'member', object: `team:${teamId}` });

/** A new organization's tuples: on the site, its owner team, and the creator in that team. */
export const ownedOrgTuples = (orgId: number, ownerTeamId: number, creatorId: number): Tuple[] => [
  orgOnSite(orgId),
  ...teamOfOrg(orgId, ownerTeamId),
  ownerTeamOfOrg(orgId, ownerTeamId),
  teamMember(ownerTeamId, creatorId),
];

/**
 * ownedOrgTuples as rows of authz's table written by the statement that makes the organization (D134): its columns
 * `org.id` and `team.id`, the creator a bound parameter of the statement (`?`, one).
 */
export const ownedOrgTupleRows = (): TupleRowSql[] => {
  const org = 'org.id::text';
  const team = 'team.id::text';
  return [
    {
      objectType: literal('organization'),
      objectId: org,
      relation: literal('site'),
      userType: literal('site'),
      userId: literal('platform'),
      userRelation: literal(''),
      from: 'org',
    },
    {
      objectType: literal('team'),
      objectId: team,
      relation: literal('organization'),
      userType: literal('organization'),
      userId: org,
      userRelation: literal(''),
      from: 'org, team',
    },
    {
      objectType: literal('organization'),
      objectId: org,
      relation: literal('member'),
      userType: literal('team'),
      userId: team,
      userRelation: literal('member'),
      from: 'org, team',
    },
    {
      objectType: literal('organization'),
      objectId: org,
      relation: literal('owner'),
      userType: literal('team'),
      userId: team,
      userRelation: literal('member'),
      from: 'org, team',
    },
    {
      objectType: literal('team'),
      objectId: team,
      relation: literal('member'),
      userType: literal('user'),
      userId: '?::text',
      userRelation: literal(''),
      from: 'team',
    },
  ];
};

/** teamOfOrg as rows of authz's table written by the statement that makes the team: its CTE `team` (the new row). */
export const teamOfOrgRows = (): TupleRowSql[] => [
  {
    objectType: literal('team'),
    objectId: 'team.id::text',
    relation: literal('organization'),
    userType: literal('organization'),
    userId: 'team.org_id::text',
    userRelation: literal(''),
    from: 'team',
  },
  {
    objectType: literal('organization'),
    objectId: 'team.org_id::text',
    relation: literal('member'),
    userType: literal('team'),
    userId: 'team.id::text',
    userRelation: literal('member'),
    from: 'team',
  },
];

/** teamMember as a row of authz's table written by the statement that adds the member: its CTE `team` (the new membership). */
export const teamMemberRows = (): TupleRowSql[] => [
  {
    objectType: literal('team'),
    objectId: 'team.team_id::text',
    relation: literal('member'),
    userType: literal('user'),
    userId: 'team.uid::text',
    userRelation: literal(''),
    from: 'team',
  },
];

/**
 * A write's tuples put in authz's table by the write's own statement (D134) when `on`: the statement's `tuples` CTE, and
 * once it has run, the notice authz would have sent. Nothing when off: the write's outbox entry carries them instead.
 */
export const tuplesByStatement = (on: boolean, rows: () => TupleRowSql[]) => ({
  cte: on ? ` tuples as (${insertTuples(rows())}),` : '',
  announce(tuples: () => Tuple[], orgId: number): void {
    if (on) changed.tuples(tuples(), [orgId]);
  },
});

const idOf = (ref: string, type: string): number | undefined => {
  const m = new RegExp(`^${type}:(\\d+)(#member)?$`).exec(ref);
  return m ? Number(m[1]) : undefined;
};

/** A row of tuplesCalledFor's statement: an organization, a team with its organization, or a membership. */
interface CalledRow {
  org: number | string | null;
  team: number | string | null;
  team_org: number | string | null;
  permission: string | null;
  uid: number | string | null;
}

/**
 * Which of these tuples the rows call for now: the organization exists, the team is the organization's
 * (its owner team, for `owner`), the user is in the team. The outbox's tuple effects write exactly these and
 * delete the rest, so applying one late or twice still leaves the tuples matching the rows.
 */
export async function tuplesCalledFor(db: Database, tuples: Tuple[]): Promise<Set<string>> {
  const orgIds = new Set<number>();
  const teamIds = new Set<number>();
  const pairs: [number, number][] = [];
  for (const t of tuples) {
    const team = idOf(t.object, 'team') ?? idOf(t.user, 'team');
    if (t.relation === 'site') orgIds.add(idOf(t.object, 'organization')!);
    else if (t.relation === 'member' && team !== undefined && t.user.startsWith('user:')) pairs.push([team, idOf(t.user, 'user')!]);
    else if (team !== undefined) teamIds.add(team);
    else throw new Error(`orgs-teams keeps no tuple like ${tupleKey(t)}`);
  }
  // One statement, whatever the tuples name: each part reads one table, and a row says which by the columns it fills.
  const q = (table: string) => db.table(table);
  const none = (type: string, as: string) => db.knex.raw(`null::${type} as ${as}`);
  const parts: Knex.QueryBuilder[] = [];
  if (orgIds.size)
    parts.push(
      q('accounts')
        .whereRaw('id = any(?::bigint[])', [[...orgIds]])
        .where({ type: ACCOUNT_TYPE.organization })
        .select('id as org', none('bigint', 'team'), none('bigint', 'team_org'), none('text', 'permission'), none('bigint', 'uid')),
    );
  if (teamIds.size)
    parts.push(
      q('teams')
        .whereRaw('id = any(?::bigint[])', [[...teamIds]])
        .select(none('bigint', 'org'), 'id as team', 'org_id as team_org', db.knex.raw('permission::text'), none('bigint', 'uid')),
    );
  // As two arrays, not a list of row values: an import reconciles thousands of memberships at once, and a long
  // row-value list is one deep expression per pair (it exhausts the embedded database's stack).
  if (pairs.length)
    parts.push(
      q('team_users')
        .whereRaw('(team_id, uid) in (select * from unnest(?::bigint[], ?::bigint[]))', [pairs.map((p) => p[0]), pairs.map((p) => p[1])])
        .select(none('bigint', 'org'), 'team_id as team', none('bigint', 'team_org'), none('text', 'permission'), 'uid'),
    );
  // Not in parentheses: a statement that starts with `select` is a read to whatever tells reads from writes (the
  // embedded database's result cache, the announcement of the call's changes).
  const rows: CalledRow[] = parts.length ? await parts[0].unionAll(parts.slice(1)) : [];
  const called = new Set<string>();
  for (const r of rows) {
    if (r.org !== null) called.add(tupleKey(orgOnSite(Number(r.org))));
    else if (r.uid !== null) called.add(tupleKey(teamMember(Number(r.team), Number(r.uid))));
    else {
      for (const t of teamOfOrg(Number(r.team_org), Number(r.team))) called.add(tupleKey(t));
      if (r.permission === OWNER_PERMISSION) called.add(tupleKey(ownerTeamOfOrg(Number(r.team_org), Number(r.team))));
    }
  }
  return called;
}
