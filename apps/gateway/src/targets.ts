import type { authzRolesV1, orgsTeamsOrgsV1 } from '@platform/proto';
import type { ObjectResolver, Target } from './route';

/**
 * The objects routes act on. The edge resolves a row's target once, before the checks on it, and hands it
 * to the handler; 404 when it does not exist or the caller may not see it.
 */

/**
 * The organization `{orgname}` as the caller may see it: 404 when it does not exist or is invisible to the
 * caller (a private organization to non-members, a limited one to anonymous callers).
 */
export const orgInPath: Target<'organization', orgsTeamsOrgsV1.Organization, { orgname: string }> = {
  type: 'organization',
  describe: 'organization `{orgname}`',
  resolve: ({ orgname }, ctx) => ctx.kept.orgsTeams.organizations.getOrg({ name: orgname, viewerId: ctx.caller?.id ?? 0 }),
  id: (org) => org.id,
};

/**
 * The team `{teamid}`; under `/orgs/{orgname}/` it must also belong to that organization, which the caller
 * must be able to see. 404 otherwise.
 */
export const teamInPath: Target<'team', orgsTeamsOrgsV1.Team, { teamid: number; orgname?: string }> = teamTarget(false);

/**
 * The same team with its custom roles, for the row that answers the team itself: the one call that resolves it
 * also gives the answer, instead of a second call after the check.
 */
export const teamWithRolesInPath = teamTarget(true);

function teamTarget(withRoles: boolean): Target<'team', orgsTeamsOrgsV1.Team, { teamid: number; orgname?: string }> {
  return {
    type: 'team',
    describe: 'team `{teamid}`',
    async resolve({ teamid, orgname }, ctx) {
      const orgId = orgname === undefined ? 0 : (await orgInPath.resolve({ orgname }, ctx)).id;
      // Without its roles, kept by orgs-teams' read model: a team's route makes the one call of its operation.
      return ctx.kept.orgsTeams.organizations.getTeam({ teamId: teamid, orgId, withRoles });
    },
    id: (team) => team.id,
  };
}

/** The custom role `{id}` of the `org` organization; 404 when that organization has none with this id. */
export const roleOfOrg: Target<'role', authzRolesV1.Role, { id: number }> = {
  type: 'role',
  describe: 'custom role `{id}` of the `org` organization',
  resolve: ({ id }, ctx) => {
    const orgId = ctx.org!.id;
    // Kept by authz's read model (@platform/authz-client): a role's row makes the one call of its operation or none.
    return ctx.kept.authz.roles.getRole({ orgId, id });
  },
  id: (role) => role.id,
};

/** The organization of the target team, for requirements on it (the owner team's members are its owners). */
export const organizationOfTeam: ObjectResolver<unknown, { target: orgsTeamsOrgsV1.Team }> = {
  describe: 'the organization of team `{teamid}`',
  resolve: async (_input, { target }) => ({ type: 'organization', id: target.organization!.id }),
};
