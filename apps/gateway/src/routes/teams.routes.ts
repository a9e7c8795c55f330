import { z } from 'zod';
import { InputError, NotAllowedError, NotFoundError, quote } from '@platform/errors';
import { checkLengths, TEXT_LIMITS as L, type LengthCheck } from '@platform/service-kit';
import { userJson } from '../presenters';
import { teamJson } from '../presenters-orgs';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { Route, RouteContext } from '../route';
import { parseBody, parseId } from '../validation';
import { orgFromPath, requirePermission, teamFromPath, teamOfPath } from './org-path';

const roleIds = z.array(z.number().int().positive()).optional();
const units = z.array(z.string()).optional();
/** Names, types, permissions and units are checked by the service (400); shapes, the description's length included, here (422). */
const CreateTeamOption = z.object({
  name: z.string(),
  type: z.string(),
  description: z.string().max(L.description).optional(),
  permission: z.string().optional(),
  assignedRoleIDs: roleIds,
  units,
});
const EditTeamOption = z.object({
  name: z.string(),
  description: z.string().max(L.description).optional(),
  permission: z.string().optional(),
  assignedRoleIDs: roleIds,
  type: z.string().optional(),
  units,
});

/** 400 for a name, type, permission or unit over its limit, as the service answers invalid ones (docs/limits.md). */
function checkTeamTexts(body: { name: string; type?: string; permission?: string; units?: string[] }): void {
  checkLengths([
    ['name', body.name, L.teamName],
    ['type', body.type, L.choice],
    ['permission', body.permission, L.choice],
    ...(body.units ?? []).map((u, i): LengthCheck => [`units[${i}]`, u, L.teamUnit]),
  ]);
}

const wrapRoles = (ids: number[] | undefined) => (ids === undefined ? undefined : { roleIds: ids });
const wrapUnits = (names: string[] | undefined) => (names === undefined ? undefined : { units: names });

/** `?autoConnectClusters=` must be a boolean when present. */
function autoConnectClusters(value: unknown): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InputError('autoConnectClusters must be true or false', [{ field: 'autoConnectClusters', description: 'not a boolean' }]);
}

const TEAM_ACTIONS = ['join', 'leave', 'remove', 'add'] as const;

/**
 * POST /orgs/{orgname}/teams/{teamid}/action/{action}, checked with `<action>:team`. `uid` is required by
 * every action; `join` and `leave` act on the caller (uid must be the caller's id); `add` adds the user
 * named by `uname` when given, else `uid`; `remove` removes `uid`. Changing the members of the owner team
 * also takes `manage_owners:org` (see ownersOnly).
 */
/**
 * The owner team's members are the organization's owners: only owners and site admins may change them (a
 * custom role granting add/remove team members must not make its holder an owner). Leaving is still one's own.
 */
async function ownersOnly(ctx: RouteContext, team: orgsTeamsOrgsV1.Team): Promise<void> {
  if (team.permission === 'owner') await requirePermission(ctx, 'manage_owners:org', team.organization!.id);
}

function teamAction(action: (typeof TEAM_ACTIONS)[number]): Route {
  return {
    method: 'post',
    path: `/orgs/:orgname/teams/:teamid/action/${action}`,
    summary: `Team action ${action} (query uid, and uname for add)`,
    auth: 'token',
    check: { permission: `${action}:team`, on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const uid = parseId(req.query.uid, 'uid');
      const team = await teamOfPath(req, ctx);
      const opts = { requestId: ctx.requestId };
      const self = uid === ctx.caller!.id;
      const { orgs } = ctx.backends;
      switch (action) {
        case 'join':
          if (!self) throw new NotAllowedError('join acts on yourself: uid must be your own id');
          await ownersOnly(ctx, team);
          await orgs.addTeamMember({ teamId: team.id, userId: uid, username: '', conflictIfMember: true }, opts);
          break;
        case 'leave':
          if (!self) throw new NotAllowedError('leave acts on yourself: uid must be your own id');
          await orgs.removeTeamMember({ teamId: team.id, userId: uid, username: '' }, opts);
          break;
        case 'add': {
          await ownersOnly(ctx, team);
          const uname = typeof req.query.uname === 'string' ? req.query.uname : '';
          // Longer than any login: no such user, without asking orgs-teams.
          if (uname.length > L.login) throw new NotFoundError(`user ${quote(uname)} does not exist`);
          await orgs.addTeamMember({ teamId: team.id, userId: uname ? 0 : uid, username: uname, conflictIfMember: true }, opts);
          break;
        }
        case 'remove':
          await ownersOnly(ctx, team);
          await orgs.removeTeamMember({ teamId: team.id, userId: uid, username: '' }, opts);
          break;
      }
      return { status: 200 };
    },
  };
}

/** Teams and team members (spec section 4.14). */
export const teamsRoutes: Route[] = [
  {
    method: 'get',
    path: '/orgs/:orgname/teams',
    summary: 'Teams of an organization',
    auth: 'token',
    check: { permission: 'list:team', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const { teams } = await ctx.backends.orgs.listTeams({ orgId: await orgFromPath(req, ctx) }, { requestId: ctx.requestId });
      return { body: teams.map(teamJson) };
    },
  },
  {
    method: 'post',
    path: '/orgs/:orgname/teams',
    summary: 'Create a team',
    auth: 'token',
    check: { permission: 'create:team', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const body = parseBody(CreateTeamOption, req.body);
      checkTeamTexts(body);
      const team = await ctx.backends.orgs.createTeam(
        {
          orgId: await orgFromPath(req, ctx),
          name: body.name,
          type: body.type,
          description: body.description ?? '',
          permission: body.permission ?? '',
          units: wrapUnits(body.units),
          roleIds: wrapRoles(body.assignedRoleIDs),
        },
        { requestId: ctx.requestId },
      );
      return { status: 201, body: teamJson(team) };
    },
  },
  ...TEAM_ACTIONS.map(teamAction),
  {
    method: 'post',
    path: '/orgs/:orgname/teams/:teamid/action/:action',
    summary: 'Any other team action: 400',
    auth: 'token',
    service: 'orgs-teams',
    async handle(req) {
      throw new InputError(`unknown team action ${quote(req.params.action)}; use one of ${TEAM_ACTIONS.join(', ')}`);
    },
  },
  {
    method: 'get',
    path: '/teams/:teamid',
    summary: 'A team',
    auth: 'token',
    check: { permission: 'view:team', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const team = await ctx.backends.orgs.getTeam(
        { teamId: await teamFromPath(req, ctx), orgId: 0, withRoles: true },
        { requestId: ctx.requestId },
      );
      return { body: teamJson(team) };
    },
  },
  {
    method: 'patch',
    path: '/teams/:teamid',
    summary: 'Edit a team (the owner team keeps its name and permission)',
    auth: 'token',
    check: { permission: 'edit:team', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const body = parseBody(EditTeamOption, req.body);
      checkTeamTexts(body);
      const team = await ctx.backends.orgs.editTeam(
        {
          teamId: await teamFromPath(req, ctx),
          name: body.name,
          description: body.description,
          permission: body.permission,
          type: body.type,
          units: wrapUnits(body.units),
          roleIds: wrapRoles(body.assignedRoleIDs),
        },
        { requestId: ctx.requestId },
      );
      return { body: teamJson(team) };
    },
  },
  {
    method: 'delete',
    path: '/teams/:teamid',
    summary: 'Delete a team (never the owner team)',
    auth: 'token',
    check: { permission: 'delete:team', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      await ctx.backends.orgs.deleteTeam({ teamId: await teamFromPath(req, ctx) }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
  {
    method: 'get',
    path: '/teams/:teamid/members',
    summary: 'Members of a team',
    auth: 'token',
    check: { permission: 'list:team-members', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const { members } = await ctx.backends.orgs.listTeamMembers({ teamId: await teamFromPath(req, ctx) }, { requestId: ctx.requestId });
      return { body: members.map(userJson) };
    },
  },
  {
    method: 'get',
    path: '/teams/:teamid/members/:username',
    summary: 'A member of a team (404 when not a member)',
    auth: 'token',
    check: { permission: 'view:team-member', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const user = await ctx.backends.orgs.getTeamMember(
        { teamId: await teamFromPath(req, ctx), username: String(req.params.username) },
        { requestId: ctx.requestId },
      );
      return { body: userJson(user) };
    },
  },
  {
    method: 'put',
    path: '/teams/:teamid/members/:username',
    summary: 'Add a member to a team (adding a member again changes nothing)',
    auth: 'token',
    check: { permission: 'add:team-member', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      autoConnectClusters(req.query.autoConnectClusters);
      await ownersOnly(ctx, await teamOfPath(req, ctx));
      await ctx.backends.orgs.addTeamMember(
        { teamId: await teamFromPath(req, ctx), userId: 0, username: String(req.params.username), conflictIfMember: false },
        { requestId: ctx.requestId },
      );
      return { status: 204 };
    },
  },
  {
    method: 'delete',
    path: '/teams/:teamid/members/:username',
    summary: 'Remove a member from a team',
    auth: 'token',
    check: { permission: 'remove:team-member', on: teamFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      await ownersOnly(ctx, await teamOfPath(req, ctx));
      await ctx.backends.orgs.removeTeamMember(
        { teamId: await teamFromPath(req, ctx), userId: 0, username: String(req.params.username) },
        { requestId: ctx.requestId },
      );
      return { status: 204 };
    },
  },
];
