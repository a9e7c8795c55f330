import type { Database } from '@platform/db';
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

const idOf = (ref: string, type: string): number | undefined => {
  const m = new RegExp(`^${type}:(\\d+)(#member)?$`).exec(ref);
  return m ? Number(m[1]) : undefined;
};

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
  const [orgs, teams, members] = await Promise.all([
    orgIds.size
      ? db
          .table('accounts')
          .whereRaw('id = any(?::bigint[])', [[...orgIds]])
          .where({ type: ACCOUNT_TYPE.organization })
          .pluck('id')
      : [],
    teamIds.size
      ? db
          .table('teams')
          .whereRaw('id = any(?::bigint[])', [[...teamIds]])
          .select('id', 'org_id', 'permission')
      : [],
    // As two arrays, not a list of row values: an import reconciles thousands of memberships at once, and a long
    // row-value list is one deep expression per pair (it exhausts the embedded database's stack).
    pairs.length
      ? db
          .table('team_users')
          .whereRaw('(team_id, uid) in (select * from unnest(?::bigint[], ?::bigint[]))', [pairs.map((p) => p[0]), pairs.map((p) => p[1])])
          .select('team_id', 'uid')
      : [],
  ]);
  const called = new Set<string>(orgs.map((id: number) => tupleKey(orgOnSite(id))));
  for (const team of teams as { id: number; org_id: number; permission: string }[]) {
    for (const t of teamOfOrg(team.org_id, team.id)) called.add(tupleKey(t));
    if (team.permission === OWNER_PERMISSION) called.add(tupleKey(ownerTeamOfOrg(team.org_id, team.id)));
  }
  for (const m of members as { team_id: number; uid: number }[]) called.add(tupleKey(teamMember(m.team_id, m.uid)));
  return called;
}
