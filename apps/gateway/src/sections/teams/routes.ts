import { z } from 'zod';
import { InputError, NotFoundError, quote } from '@platform/errors';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { checkLengths, TEXT_LIMITS as L, type LengthCheck } from '@platform/service-kit';
import { PAGE_HEADERS, pageHeaders, pageOf, Paging } from '../../paging';
import { takenNameIs422 } from '../../gitea';
import * as p from '../../params';
import { recordedWith } from '../../audit';
import { sectionRoutes, type EdgeContext, type Grant, type Requirement, type Route } from '../../route';
import { organizationOfTeam, orgInPath, teamInPath, teamWithRolesInPath } from '../../targets';
import { UserJson, userJsonFor } from '../identity/presenters';
import { TeamJson, teamJson } from './presenters';

const route = sectionRoutes({ tag: 'Teams', backend: 'orgs-teams' });

// Teams and team members. Decisions (joining, the owner team): docs/authorization.md.

const roleIds = z.array(z.number().int().positive()).optional();
const units = z.array(z.string()).optional();
/**
 * Gitea's units_map (unit to access): its units are taken when `units` is not given; the team has one access to them
 * all, its permission, so the accesses named are not kept (docs/gitea-dialect.md).
 */
const unitsMap = z.record(z.string(), z.string().max(L.choice)).optional().meta({
  description: 'Gitea’s unit to access map: its keys are the units when `units` is not given (the team’s permission is their access)',
});
/** When each time-bound role ends; a role of assignedRoleIDs not named here is held for good. */
const roleUntil = z
  .record(
    z.string().regex(/^[1-9][0-9]*$/, { error: 'keys must be role ids' }),
    z.iso.datetime({ offset: true, error: 'must be an RFC 3339 date-time' }),
  )
  .optional()
  .meta({ description: 'role id to the RFC 3339 time the team holds that role until (each a role of assignedRoleIDs, in the future)' });

/** 422 for an end of a role not in assignedRoleIDs, or one already past: the ends belong to the roles being assigned. */
function checkRoleEnds(body: { assignedRoleIDs?: number[]; assignedRoleUntil?: Record<string, string> }, ctx: z.RefinementCtx): void {
  const now = Date.now();
  for (const [id, at] of Object.entries(body.assignedRoleUntil ?? {})) {
    if (!body.assignedRoleIDs?.includes(Number(id)))
      ctx.addIssue({ code: 'custom', path: ['assignedRoleUntil', id], message: `role ${id} is not in assignedRoleIDs` });
    else if (Date.parse(at) <= now)
      ctx.addIssue({ code: 'custom', path: ['assignedRoleUntil', id], message: `${at} has passed; an end must be in the future` });
  }
}
/** The type of a team created without one. */
export const DEFAULT_TEAM_TYPE = 'general';

/** Names, types, permissions and units are checked by the service (400); shapes, the description's length included, here (422). */
const CreateTeamOption = z
  .object({
    name: z.string(),
    // Gitea's clients know no team types: a team they create works on everything, as the owner team does.
    type: z
      .string()
      .default(DEFAULT_TEAM_TYPE)
      .meta({ description: `kubernetes or general (default ${DEFAULT_TEAM_TYPE})` }),
    description: z.string().max(L.description).optional(),
    permission: z.string().optional(),
    assignedRoleIDs: roleIds,
    assignedRoleUntil: roleUntil,
    units,
    units_map: unitsMap,
  })
  .superRefine(checkRoleEnds);
const EditTeamOption = z
  .object({
    name: z.string(),
    description: z.string().max(L.description).optional(),
    permission: z.string().optional(),
    assignedRoleIDs: roleIds,
    assignedRoleUntil: roleUntil,
    type: z.string().optional(),
    units,
    units_map: unitsMap,
  })
  .superRefine(checkRoleEnds);

/** 400 for a name, type, permission or unit over its limit, as the service answers invalid ones (docs/limits.md). */
function checkTeamTexts(body: {
  name: string;
  type?: string;
  permission?: string;
  units?: string[];
  units_map?: Record<string, string>;
}): void {
  checkLengths([
    ['name', body.name, L.teamName],
    ['type', body.type, L.choice],
    ['permission', body.permission, L.choice],
    ...(unitsOf(body) ?? []).map((u, i): LengthCheck => [`units[${i}]`, u, L.teamUnit]),
  ]);
}

const wrapRoles = (ids: number[] | undefined, until: Record<string, string> | undefined) =>
  ids === undefined
    ? undefined
    : { roleIds: ids, until: Object.fromEntries(Object.entries(until ?? {}).map(([id, at]) => [Number(id), at])) };
/** The units a body names: `units`, else the keys of Gitea's `units_map`; neither leaves them as they are. */
const unitsOf = (body: { units?: string[]; units_map?: Record<string, string> }) =>
  body.units ?? (body.units_map && Object.keys(body.units_map));
const wrapUnits = (names: string[] | undefined) => (names === undefined ? undefined : { units: names });

const Org = z.object({ orgname: p.login });
const OrgTeam = Org.extend({ teamid: p.id });
const Team = z.object({ teamid: p.id });
const TeamMember = Team.extend({ username: p.login });

type TeamCtx = { target: orgsTeamsOrgsV1.Team };

/**
 * The owner team's members are the organization's owners: only owners and site admins may change them (a
 * custom role granting add/remove team members must not make its holder an owner). Leaving is still one's own.
 */
const OWNERS_ONLY: Requirement<'team', unknown, TeamCtx> = {
  anyOf: [
    {
      check: 'team `{teamid}` is not the owner team',
      holds: (_input, { target }) => target.permission !== 'owner',
      denied: 'the owner team',
    },
    { on: organizationOfTeam, permission: 'manage_owners:org' },
  ],
};

/** The ClusterRole auto-connect binds for owner-team members on the organization's clusters (docs/organizations-and-teams.md). */
export const OWNER_CLUSTER_ROLE = 'cluster-admin';

/**
 * Team auto-connect: what a membership change of the owner team asks of the user's connection to every hub of the
 * organization. orgs-teams makes the membership change and the connection one step (it calls the clusters service
 * and undoes the membership when that refuses); on other teams it asks nothing.
 */
function clusterConnection(connect: boolean): orgsTeamsOrgsV1.ClusterConnection {
  return { connect, role: OWNER_CLUSTER_ROLE };
}

/**
 * Takes a user out of a team, and when it is the owner team out of the organization's clusters too: one call,
 * so no former owner stays connected unseen (orgs-teams may refuse: last owner, 404, the clusters service's refusal).
 */
async function removeMember(ctx: EdgeContext, team: orgsTeamsOrgsV1.Team, user: { id: number; login: string }): Promise<void> {
  // By id when known (team actions name users by uid), else by login.
  await ctx.backends.orgsTeams.organizations.removeTeamMember({
    teamId: team.id,
    userId: user.id,
    username: user.id ? '' : user.login,
    disconnectClusters: team.permission === 'owner',
  });
}

/**
 * Putting a user into a team gives them the team's custom roles: whoever does it must hold every permission those
 * roles carry (docs/authorization.md, "No one gives more than they hold"); a team without roles gives nothing.
 */
const TEAM_ROLES = {
  describe: 'every permission of the custom roles of team `{teamid}`, on its organization',
  of: (_input: unknown, { target }: { target: orgsTeamsOrgsV1.Team }): Grant => ({
    orgId: target.organization!.id,
    teamIds: [target.id],
    what: `putting a user into team ${target.name}`,
  }),
};

/**
 * Gitea's team permission `admin` makes the team's members the organization's administrators (`is_admin` of
 * `GET /users/{u}/orgs/{org}/permissions`): what `admin:org` grants.
 */
const ADMIN_PERMISSION = { namespace: 'org', action: 'admin' };

/**
 * What a team's creation or edit gives: every permission of the custom roles in `assignedRoleIDs` (`[]` gives
 * nothing), and `admin:org` with `permission: admin`. Whoever makes the change must hold all of it.
 */
const TEAM_GRANTS = {
  describe: 'every permission of the roles in `assignedRoleIDs`, and `admin:org` for `permission: admin`, on the organization',
  of: (orgId: number, body: { assignedRoleIDs?: number[]; permission?: string }): Grant | undefined => {
    const roleIds = body.assignedRoleIDs?.length ? body.assignedRoleIDs : undefined;
    const admin = body.permission === 'admin';
    if (!roleIds && !admin) return undefined;
    const what = [...(roleIds ? ['assignedRoleIDs'] : []), ...(admin ? ['permission admin'] : [])].join(' and ');
    return { orgId, roleIds, permissions: admin ? [ADMIN_PERMISSION] : undefined, what };
  },
};

const TEAM_ACTIONS = ['join', 'leave', 'remove', 'add'] as const;

/** `join` and `leave` act on the caller: `uid` must be the caller's own id. */
const uidIsCaller = (action: string): Requirement<'team', { query: { uid: number } }, { caller: { id: number } }> => ({
  check: 'uid is the caller',
  holds: ({ query }, { caller }) => query.uid === caller.id,
  denied: `${action} acts on yourself: uid must be your own id`,
});

/**
 * POST /orgs/{orgname}/teams/{teamid}/action/{action}, checked with `<action>:team`. `uid` is required by
 * every action; `join` and `leave` act on the caller (uid must be the caller's id); `add` adds the user
 * named by `uname` when given, else `uid`; `remove` removes `uid`.
 */
function teamAction(action: (typeof TEAM_ACTIONS)[number]): Route {
  const self = action === 'join' || action === 'leave';
  return route({
    method: 'post',
    scope: 'write:organization',
    path: `/orgs/:orgname/teams/:teamid/action/${action}`,
    summary: `Team action ${action} (query uid${action === 'add' ? ', and uname' : ''})`,
    auth: 'token',
    params: OrgTeam,
    query: z.object({ uid: p.id, uname: z.string().optional() }),
    target: teamInPath,
    requires: [{ on: 'target', permission: `${action}:team` }],
    ...((action === 'join' || action === 'add') && { gives: TEAM_ROLES }),
    checks: [...(self ? [uidIsCaller(action)] : []), ...(action === 'leave' ? [] : [OWNERS_ONLY])],
    response: { status: 200 },
    async handle({ query }, ctx) {
      const { organizations } = ctx.backends.orgsTeams;
      const team = ctx.target;
      if (action === 'join' || action === 'add') {
        const uname = action === 'add' ? (query.uname ?? '') : '';
        // Longer than any login: no such user, without asking orgs-teams.
        if (uname.length > L.login) throw new NotFoundError(`user ${quote(uname)} does not exist`);
        await organizations.addTeamMember({ teamId: team.id, userId: uname ? 0 : query.uid, username: uname, conflictIfMember: true });
      } else {
        await removeMember(ctx, team, { id: query.uid, login: '' });
      }
      return {};
    },
  });
}

export const teamRoutes: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/teams',
    summary: "The caller's teams across organizations, by name, each with its organization (Gitea's GET /user/teams)",
    auth: 'token',
    query: Paging,
    response: { status: 200, schema: z.array(TeamJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { teams, total } = await ctx.kept.orgsTeams.organizations.listUserTeams({ userId: ctx.caller.id, page });
      return { body: teams.map(teamJson), headers: pageHeaders(ctx, page, total) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/teams',
    summary: 'Teams of an organization, owner team first, then by name',
    auth: 'token',
    params: Org,
    query: Paging,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'list:team' }],
    response: { status: 200, schema: z.array(TeamJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { teams, total } = await ctx.kept.orgsTeams.organizations.listTeams({ orgId: ctx.target.id, page });
      return { body: teams.map(teamJson), headers: pageHeaders(ctx, page, total) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/teams/search',
    summary: 'Search the teams of an organization by name (and description unless include_desc=false), as Gitea answers: {ok, data}',
    auth: 'token',
    params: Org,
    query: Paging.extend({
      q: z.string().max(L.teamName).optional().meta({ description: 'text the name (or description) contains, any case' }),
      // Gitea searches descriptions too unless told not to.
      include_desc: z
        .enum(['true', 'false'], { error: 'must be true or false' })
        .optional()
        .transform((v) => v !== 'false'),
    }),
    target: orgInPath,
    requires: [{ on: 'target', permission: 'list:team' }],
    response: {
      status: 200,
      schema: z.object({ ok: z.boolean(), data: z.array(TeamJson) }).meta({ id: 'TeamSearchResults' }),
      headers: PAGE_HEADERS,
    },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { teams, total } = await ctx.kept.orgsTeams.organizations.searchTeams({
        orgId: ctx.target.id,
        q: query.q?.trim() ?? '',
        includeDesc: query.include_desc,
        page,
      });
      return { body: { ok: true, data: teams.map(teamJson) }, headers: pageHeaders(ctx, page, total) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/teams',
    summary: 'Create a team',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'create:team' }],
    body: { schema: CreateTeamOption },
    gives: { describe: TEAM_GRANTS.describe, of: ({ body }, { target }) => TEAM_GRANTS.of(target.id, body) },
    response: { status: 201, schema: TeamJson },
    errors: [{ status: 422, description: 'when the organization has a team of that name (any case), as Gitea answers' }],
    async handle({ body }, { backends, target, audit }) {
      checkTeamTexts(body);
      const created = backends.orgsTeams.organizations.createTeam({
        orgId: target.id,
        name: body.name,
        type: body.type,
        description: body.description ?? '',
        permission: body.permission ?? '',
        units: wrapUnits(unitsOf(body)),
        roleIds: wrapRoles(body.assignedRoleIDs, body.assignedRoleUntil),
        audit: audit?.event,
      });
      return { body: teamJson(recordedWith(audit, await takenNameIs422(created, 'name'))) };
    },
  }),
  ...TEAM_ACTIONS.map(teamAction),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/teams/:teamid/action/:action',
    summary: 'Any other team action: 400',
    auth: 'token',
    params: z.object({ orgname: p.login, teamid: z.string(), action: p.segment }),
    response: { status: 200 },
    async handle({ params }) {
      throw new InputError(`unknown team action ${quote(params.action)}; use one of ${TEAM_ACTIONS.join(', ')}`);
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/teams/:teamid',
    summary: 'A team',
    auth: 'token',
    params: Team,
    target: teamWithRolesInPath,
    requires: [{ on: 'target', permission: 'view:team' }],
    response: { status: 200, schema: TeamJson },
    async handle(_input, { target }) {
      return { body: teamJson(target) };
    },
  }),
  route({
    method: 'patch',
    scope: 'write:organization',
    path: '/teams/:teamid',
    summary: 'Edit a team (the owner team keeps its name and permission)',
    auth: 'token',
    params: Team,
    target: teamInPath,
    requires: [{ on: 'target', permission: 'edit:team' }],
    body: { schema: EditTeamOption },
    // The owner team is the organization's owners: only owners and site admins change it, whatever else a role grants.
    checks: [OWNERS_ONLY],
    gives: { describe: TEAM_GRANTS.describe, of: ({ body }, { target }) => TEAM_GRANTS.of(target.organization!.id, body) },
    response: { status: 200, schema: TeamJson },
    async handle({ body }, { backends, target }) {
      checkTeamTexts(body);
      const team = await backends.orgsTeams.organizations.editTeam({
        teamId: target.id,
        name: body.name,
        description: body.description,
        permission: body.permission,
        type: body.type,
        units: wrapUnits(unitsOf(body)),
        roleIds: wrapRoles(body.assignedRoleIDs, body.assignedRoleUntil),
      });
      return { body: teamJson(team) };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/teams/:teamid',
    summary: 'Delete a team (never the owner team)',
    auth: 'token',
    params: Team,
    target: teamInPath,
    requires: [{ on: 'target', permission: 'delete:team' }],
    response: { status: 204 },
    async handle(_input, { backends, target }) {
      await backends.orgsTeams.organizations.deleteTeam({ teamId: target.id });
      return {};
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/teams/:teamid/members',
    summary: 'Members of a team, by login',
    auth: 'token',
    params: Team,
    query: Paging,
    target: teamInPath,
    requires: [{ on: 'target', permission: 'list:team-members' }],
    response: { status: 200, schema: z.array(UserJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { members, total } = await ctx.kept.orgsTeams.organizations.listTeamMembers({ teamId: ctx.target.id, page });
      return { body: members.map((u) => userJsonFor(u, ctx.caller)), headers: pageHeaders(ctx, page, total) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/teams/:teamid/members/:username',
    summary: 'A member of a team (404 when not a member)',
    auth: 'token',
    params: TeamMember,
    target: teamInPath,
    requires: [{ on: 'target', permission: 'view:team-member' }],
    response: { status: 200, schema: UserJson },
    async handle({ params }, { kept, caller, target }) {
      const member = await kept.orgsTeams.organizations.getTeamMember({ teamId: target.id, username: params.username });
      return { body: userJsonFor(member, caller) };
    },
  }),
  route({
    method: 'put',
    scope: 'write:organization',
    path: '/teams/:teamid/members/:username',
    summary: 'Add a member to a team (adding a member again changes nothing)',
    auth: 'token',
    params: TeamMember,
    // Absent is not false here: absent leaves the user's cluster connection as it is, `false` removes it.
    query: z.object({ autoConnectClusters: z.enum(['true', 'false'], { error: 'must be true or false' }).optional() }),
    target: teamInPath,
    requires: [{ on: 'target', permission: 'add:team-member' }],
    gives: TEAM_ROLES,
    checks: [OWNERS_ONLY],
    response: { status: 204 },
    async handle({ params, query }, ctx) {
      const team = ctx.target;
      // autoConnectClusters on the owner team: the new owner is connected to the organization's clusters (or, with
      // false, disconnected), and a user this call made an owner leaves the team again when the connection cannot be
      // recorded; on other teams the flag is accepted and changes nothing (docs/organizations-and-teams.md).
      const connect = team.permission === 'owner' && query.autoConnectClusters !== undefined;
      const added = await ctx.backends.orgsTeams.organizations.addTeamMember({
        teamId: team.id,
        userId: 0,
        username: params.username,
        conflictIfMember: false,
        clusterConnection: connect ? clusterConnection(query.autoConnectClusters === 'true') : undefined,
        audit: ctx.audit?.event,
      });
      recordedWith(ctx.audit, added);
      return {};
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/teams/:teamid/members/:username',
    summary: 'Remove a member from a team',
    auth: 'token',
    params: TeamMember,
    target: teamInPath,
    requires: [{ on: 'target', permission: 'remove:team-member' }],
    checks: [OWNERS_ONLY],
    response: { status: 204 },
    async handle({ params }, ctx) {
      // On the owner team a user who is not a member is answered as a read of the member answers it (404 naming the team).
      const user =
        ctx.target.permission === 'owner'
          ? await ctx.kept.orgsTeams.organizations.getTeamMember({ teamId: ctx.target.id, username: params.username })
          : { id: 0, login: params.username };
      await removeMember(ctx, ctx.target, { id: user.id, login: user.login });
      return {};
    },
  }),
];
