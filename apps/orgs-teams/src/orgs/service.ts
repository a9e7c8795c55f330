import { orgsTeamsOrgsV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { OrgsContext } from './accounts';
import { Members } from './members';
import type { OrgAuthz } from './org-authz';
import { Organizations } from './organizations';
import { TeamMembers } from './team-members';
import { Teams } from './teams';

/** The OrganizationsService RPCs (spec sections 4.13 and 4.14). */
export function organizationsService(
  ctx: OrgsContext,
  authz: OrgAuthz,
): ServiceBinding<typeof orgsTeamsOrgsV1.OrganizationsServiceService> {
  const orgs = new Organizations(ctx, authz);
  const members = new Members(ctx);
  const teams = new Teams(ctx, authz);
  const teamMembers = new TeamMembers(ctx, teams);
  return bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    createOrg: (req, c) => orgs.create(req, c.requestId),
    getOrg: (req) => orgs.get(req.name, req.viewerId),
    editOrg: (req) => orgs.edit(req),
    deleteOrg: async (req, c) => (await orgs.delete(req.orgId, req.requesterId, c.requestId), {}),
    listMembers: async (req) => ({ members: await members.list(req) }),
    getMembership: (req) => members.membership(req),
    setMemberVisibility: async (req) => (await members.setVisibility(req.orgId, req.userId, req.public), {}),
    removeMember: async (req, c) => (await members.remove(req, c.requestId), {}),
    listTeams: async (req, c) => ({ teams: await teams.list(req.orgId, c.requestId) }),
    createTeam: (req, c) => teams.create(req, c.requestId),
    getTeam: (req, c) => teams.get(req.teamId, req.orgId || undefined, req.withRoles, c.requestId),
    editTeam: (req, c) => teams.edit(req, c.requestId),
    deleteTeam: async (req, c) => (await teams.delete(req.teamId, c.requestId), {}),
    listTeamMembers: async (req) => ({ members: await teamMembers.list(req.teamId) }),
    getTeamMember: (req) => teamMembers.get(req.teamId, req.username),
    addTeamMember: async (req, c) => ({ added: await teamMembers.add(req, c.requestId) }),
    removeTeamMember: async (req, c) => (await teamMembers.remove(req, c.requestId), {}),
  });
}
