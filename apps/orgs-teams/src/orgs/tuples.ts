import type { Tuple } from '../relationships';

/** The site object every organization hangs off, so site admins reach it. */
const SITE = 'site:platform';

// The relationships orgs-teams keeps in authz for organizations and teams (the shared contract of issue 4).

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
