import { orgsTeamsOrgsV1 } from '@platform/proto';
import { bindService, versionOf, withNames, type CallContext, type ServiceBinding } from '@platform/service-kit';
import { OrgImport } from './import/org-import';
import type { ImportRoles } from './import/import-roles';
import type { OrgsContext } from './orgs-context';
import { Members } from './members';
import type { OrgAuthz } from './org-authz';
import { Organizations } from './organizations';
import { TeamMembers } from './team-members';
import { Teams } from './teams';

/** The OrganizationsService methods that change nothing; every other one is announced (changes.ts). */
export const ORGANIZATIONS_READS: readonly (keyof typeof orgsTeamsOrgsV1.OrganizationsServiceService)[] = [
  'getVersion',
  'getOrg',
  'listMembers',
  'getMembership',
  'listTeams',
  'getTeam',
  'listTeamMembers',
  'getTeamMember',
  'listOrgs',
  'listUserOrgs',
  'searchTeams',
  'getOrgPermissions',
  'listUserTeams',
];

/** The OrganizationsService RPCs. */
export function organizationsService(
  context: OrgsContext,
  authz: OrgAuthz,
  importRoles: ImportRoles,
): ServiceBinding<typeof orgsTeamsOrgsV1.OrganizationsServiceService> {
  const orgs = new Organizations(context, authz);
  const members = new Members(context);
  const teams = new Teams(context, authz);
  const teamMembers = new TeamMembers(context, teams);
  const orgImport = new OrgImport(context, importRoles);
  const binding = bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    createOrg: (req, ctx) => orgs.create(req, ctx),
    getOrg: (req) => orgs.get(req.name, req.viewerId),
    editOrg: (req) => orgs.edit(req),
    deleteOrg: async (req, ctx) => (await orgs.delete(req.orgId, req.requesterId, ctx), {}),
    listMembers: (req) => members.list(req),
    getMembership: (req) => members.membership(req),
    setMemberVisibility: async (req) => (await members.setVisibility(req.orgId, req.userId, req.public), {}),
    removeMember: async (req, ctx) => (await members.remove(req, ctx), {}),
    listTeams: (req, ctx) => teams.list(req, ctx),
    createTeam: (req, ctx) => teams.create(req, ctx),
    getTeam: (req, ctx) => teams.get(req.teamId, req.orgId || undefined, req.withRoles, ctx),
    editTeam: (req, ctx) => teams.edit(req, ctx),
    deleteTeam: async (req, ctx) => (await teams.delete(req.teamId, ctx), {}),
    listTeamMembers: (req) => teamMembers.list(req),
    getTeamMember: (req) => teamMembers.get(req.teamId, req.username),
    addTeamMember: (req, ctx) => teamMembers.add(req, ctx),
    removeTeamMember: async (req, ctx) => (await teamMembers.remove(req, ctx), {}),
    listOrgs: (req) => orgs.list(req),
    listUserOrgs: (req) => orgs.listOfUser(req),
    searchTeams: (req, ctx) => teams.search(req, ctx),
    getOrgPermissions: (req) => orgs.permissions(req),
    listUserTeams: (req, ctx) => teams.listOfUser(req, ctx),
    importOrgs: (req, ctx) => orgImport.importOrgs(req, ctx),
  });
  // Every public method that takes an organization takes its id or its name, as the REST routes name it by name:
  // the id is filled in before the policy asks about it. A service account resolves a name as it may see it.
  const viewer = (ctx: CallContext) => (ctx.caller?.kind === 'account' ? ctx.caller.account.id : 'app');
  return withNames(binding, {
    getOrg: (req, ctx) => orgs.nameOf(req, viewer(ctx)),
    listMembers: (req, ctx) => orgs.byIdOrName(req, viewer(ctx)),
    getMembership: (req, ctx) => orgs.byIdOrName(req, viewer(ctx)),
    listTeams: (req, ctx) => orgs.byIdOrName(req, viewer(ctx)),
    getTeam: (req, ctx) => orgs.byIdOrName(req, viewer(ctx)),
  });
}
