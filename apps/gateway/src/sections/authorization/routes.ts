import { z } from 'zod';
import { NotFoundError } from '@platform/errors';
import { checkLengths, TEXT_LIMITS, type LengthCheck } from '@platform/service-kit';
import { madeFrom } from '@platform/bus';
import type { authzV1 } from '@platform/proto';
import { accountsOf, teamNamesOf, type AccountName } from '../../kept-accounts';
import * as p from '../../params';
import { JsonText, sectionRoutes, type EdgeContext, type Requirement } from '../../route';
import { roleOfOrg } from '../../targets';
import {
  AllowedPermissionsJson,
  allowedPermissionsJson,
  PermissionCatalogJson,
  permissionCatalogJson,
  PrincipalJson,
  principalJson,
  RoleJson,
  roleJson,
  WhoHasAccessJson,
  whoHasAccessJson,
} from './presenters';

const route = sectionRoutes({ tag: 'Authorization', backend: 'authz' });
const roleRoute = sectionRoutes({ tag: 'Custom roles', backend: 'authz' });

// Authorization under `/authz`: custom roles, the permission catalog and what a caller holds. Every route needs
// a token and `?org=`, and the caller must be a member of that organization or a site admin (`access:org`); the
// role routes add their relation. Statuses and decisions: docs/custom-roles.md. Over-long texts are invalid
// values, 400 as the authz service answers them.

const PermissionInput = z.object({ namespace: z.string().min(1), action: z.string().min(1) });
const Ids = z.array(z.number().int());
// JSON clients send null for "not given"; it means the same as leaving the field out.
const absent = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const CreateRoleRequest = z.object({
  name: z.string().min(1),
  permissions: z.array(PermissionInput),
  description: absent(z.string()),
  teamIDs: absent(Ids),
});

const UpdateRoleRequest = z.object({
  name: absent(z.string().min(1)),
  description: absent(z.string()),
  permissions: absent(z.array(PermissionInput)),
  teamIDs: absent(Ids),
});

const AuthObjectIdentifiers = z.array(z.object({ objectType: z.string(), objectID: z.number().int() }));

/** 400 for a role name, description or permission part over its limit (docs/limits.md). */
function checkRoleTexts(body: { name?: string; description?: string; permissions?: { namespace: string; action: string }[] }): void {
  checkLengths([
    ['name', body.name, TEXT_LIMITS.roleName],
    ['description', body.description, TEXT_LIMITS.description],
    ...(body.permissions ?? []).flatMap((perm, i): LengthCheck[] => [
      [`permissions[${i}].namespace`, perm.namespace, TEXT_LIMITS.permissionPart],
      [`permissions[${i}].action`, perm.action, TEXT_LIMITS.permissionPart],
    ]),
  ]);
}

/** 400 for an objectType over its limit, named as the authz service names it (`objectType[2]` in a batch). */
function checkObjectTypes(objects: { objectType: string }[]): void {
  checkLengths(objects.map((o, i) => [`objectType${objects.length > 1 ? `[${i}]` : ''}`, o.objectType, TEXT_LIMITS.objectType]));
}

/** The "org membership" gate of every `/authz` route: members of the `org` organization, and site admins. */
const MEMBERSHIP: Requirement<'role'> = { on: 'org', permission: 'access:org', denied: 'org membership required' };
const RoleId = z.object({ id: p.id });

/**
 * A role may carry only what its writer holds, and be given to teams only by whoever holds all it carries
 * (docs/authorization.md, "No one gives more than they hold"): a new permission set is given as such; new teams
 * alone give the role's current permissions. A name or a description, or teams taken away, give nothing.
 */
const ROLE_GRANTS = 'every permission the role will carry, on the organization, when `permissions` or a non-empty `teamIDs` is sent';

/**
 * Names of the principals: team names from the organization's teams, logins of users; left out when unknown. Both come
 * from orgs-teams' read model (@platform/orgs-teams-client), so naming them costs no call once read.
 */
async function principalNames(
  ctx: EdgeContext,
  orgId: number,
  teams: number[],
  users: number[],
): Promise<{ teams: Map<number, string>; users: Map<number, string> }> {
  const [teamNames, accounts] = await Promise.all([
    teams.length ? teamNamesOf(ctx, orgId) : new Map<number, string>(),
    // A user deleted since being added to a team keeps its entry, without a name; a service account holding the role
    // directly is named too.
    users.length ? accountsOf(ctx, users) : new Map<number, AccountName>(),
  ]);
  return { teams: teamNames, users: new Map([...accounts.values()].map((u) => [u.id, u.login])) };
}

/** The principals a who-has-access answer names, and whether a custom role gives any of its grants. */
function principalsIn(answer: authzV1.WhoHasAccessResponse): { userIds: number[]; teamIds: number[]; withRoles: boolean } {
  const paths = answer.permissions.flatMap((perm) => perm.users.flatMap((u) => u.paths));
  return {
    userIds: [...new Set(answer.permissions.flatMap((perm) => perm.users.map((u) => u.userId)))],
    teamIds: [...new Set(paths.map((x) => x.teamId).filter(Boolean))],
    withRoles: paths.some((x) => x.roleId),
  };
}

// A who-has-access answer runs to kilobytes (every permission of an organization, each with its users and their
// grants): its principals and its JSON are made once from the kept answers they come from, and again when any of
// those changes (madeFrom).
const principalsOf = madeFrom<ReturnType<typeof principalsIn>>();
const whoHasAccessText = madeFrom<JsonText>();

export const authorizationRoutes = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/objects/:objectType/:objID/allowed-permissions',
    summary: 'Relations the caller holds on one object (user, organization, team, cluster, contract, robot_ac, token)',
    auth: 'token',
    org: 'required',
    params: z.object({ objectType: p.segment, objID: p.id }),
    requires: [MEMBERSHIP],
    response: { status: 200, schema: AllowedPermissionsJson },
    async handle({ params }, { kept, caller }) {
      checkObjectTypes([params]);
      const { objects } = await kept.authz.roles.allowedPermissions({
        userId: caller.id,
        objects: [{ objectType: params.objectType, objectId: params.objID }],
      });
      return { body: allowedPermissionsJson(objects[0]) };
    },
  }),
  route({
    method: 'post',
    // A question asked by POST (its body is a list): it changes nothing, so reading is enough.
    scope: 'read:organization',
    path: '/authz/objects/allowed-permissions',
    // A question asked by POST: it changes nothing.
    audit: false,
    summary: 'Relations the caller holds on each of many objects, in request order',
    auth: 'token',
    org: 'required',
    requires: [MEMBERSHIP],
    body: { schema: AuthObjectIdentifiers },
    response: { status: 200, schema: z.array(AllowedPermissionsJson) },
    async handle({ body }, { kept, caller }) {
      checkObjectTypes(body);
      const { objects } = await kept.authz.roles.allowedPermissions({
        userId: caller.id,
        objects: body.map((o) => ({ objectType: o.objectType, objectId: o.objectID })),
      });
      return { body: objects.map(allowedPermissionsJson) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/objects/:objectType/:objID/access',
    // For org owners and site admins: an organization, or a contract or cluster it owns (404 otherwise); docs/authorization.md.
    summary:
      'Who has access: every user holding each permission of the organization, one of its contracts or clusters, and the grants that give it',
    auth: 'token',
    org: 'required',
    params: z.object({ objectType: z.enum(['organization', 'contract', 'cluster']), objID: p.segment }),
    requires: [MEMBERSHIP, { on: 'org', permission: 'manage_owners:org', denied: 'org owner or site admin required' }],
    response: { status: 200, schema: WhoHasAccessJson },
    async handle({ params }, ctx) {
      const { kept, org } = ctx;
      const object = `${params.objectType}:${params.objID}`;
      const notFound = () => new NotFoundError(`${params.objectType} ${params.objID} not found in this organization`);
      // Only this organization's own objects: another's contract or cluster is not found here. A contract's owner is
      // contracts-licensing's to say (authz keeps none: it is handed to each question), and handed to authz with it.
      let owner: string | undefined;
      if (params.objectType === 'contract') {
        const id = Number(params.objID);
        if (!Number.isSafeInteger(id) || id <= 0) throw notFound();
        await kept.contractsLicensing.contracts.getContract({ id, ownerId: org.id, actor: ctx.caller.login }).catch((err: unknown) => {
          throw err instanceof NotFoundError ? notFound() : err;
        });
        owner = `organization:${org.id}`;
      } else {
        const owned =
          params.objectType === 'organization'
            ? params.objID === String(org.id)
            : (
                await kept.authz.authz.check({
                  tuple: { user: `organization:${org.id}`, relation: 'owner', object },
                  contextualTuples: [],
                })
              ).allowed;
        if (!owned) throw notFound();
      }
      const answer = await kept.authz.authz.whoHasAccess({ object, owner });
      const { userIds, teamIds, withRoles } = principalsOf([answer], () => principalsIn(answer));
      const [names, roles] = await Promise.all([
        principalNames(ctx, org.id, teamIds, userIds),
        withRoles ? kept.authz.roles.listRoles({ orgId: org.id }) : undefined,
      ]);
      const teamNames = teamIds.map((id) => names.teams.get(id));
      const logins = userIds.map((id) => names.users.get(id));
      return {
        body: whoHasAccessText([answer, object, roles, ...teamNames, ...logins], () => {
          const json = whoHasAccessJson(object, answer, {
            users: names.users,
            teams: names.teams,
            roles: new Map((roles?.roles ?? []).map((r) => [r.id, r.name])),
          });
          return new JsonText(Buffer.from(JSON.stringify(json)));
        }),
      };
    },
  }),
  roleRoute({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/roles/available_permissions',
    summary: 'The permission catalog: what a custom role may carry',
    auth: 'token',
    org: 'required',
    requires: [MEMBERSHIP],
    response: { status: 200, schema: PermissionCatalogJson },
    async handle(_input, { kept }) {
      return { body: permissionCatalogJson(await kept.authz.authz.permissionCatalog({})) };
    },
  }),
  roleRoute({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/roles',
    summary: 'The custom roles of the organization',
    auth: 'token',
    org: 'required',
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(RoleJson) },
    async handle(_input, { kept, org }) {
      const { roles } = await kept.authz.roles.listRoles({ orgId: org.id });
      return { body: roles.map(roleJson) };
    },
  }),
  roleRoute({
    method: 'post',
    scope: 'write:organization',
    path: '/authz/roles',
    summary: 'Create a custom role',
    auth: 'token',
    org: 'required',
    requires: [MEMBERSHIP, { on: 'org', permission: 'create_role:org' }],
    body: { schema: CreateRoleRequest },
    gives: { describe: ROLE_GRANTS, of: ({ body }, { org }) => ({ orgId: org.id, permissions: body.permissions, what: 'this role' }) },
    response: { status: 201, schema: RoleJson },
    async handle({ body }, { backends, org }) {
      checkRoleTexts(body);
      const role = await backends.authz.roles.createRole({
        orgId: org.id,
        name: body.name,
        description: body.description ?? '',
        permissions: body.permissions,
        teamIds: body.teamIDs ?? [],
      });
      return { body: roleJson(role) };
    },
  }),
  roleRoute({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/roles/:id',
    summary: 'One custom role',
    auth: 'token',
    org: 'required',
    params: RoleId,
    target: roleOfOrg,
    requires: [MEMBERSHIP, { on: 'target', permission: 'view:role' }],
    response: { status: 200, schema: RoleJson },
    async handle(_input, { target }) {
      return { body: roleJson(target) };
    },
  }),
  roleRoute({
    method: 'put',
    scope: 'write:organization',
    path: '/authz/roles/:id',
    summary: 'Update a custom role; supplied fields replace the current values',
    auth: 'token',
    org: 'required',
    params: RoleId,
    target: roleOfOrg,
    requires: [MEMBERSHIP, { on: 'target', permission: 'edit:role' }],
    body: { schema: UpdateRoleRequest },
    gives: {
      describe: ROLE_GRANTS,
      of: ({ body }, { org, target }) =>
        body.permissions
          ? { orgId: org.id, permissions: body.permissions, what: `role ${target.id}` }
          : body.teamIDs?.length
            ? { orgId: org.id, roleIds: [target.id], what: `role ${target.id}` }
            : undefined,
    },
    response: { status: 200, schema: RoleJson },
    async handle({ body }, { backends, org, target }) {
      checkRoleTexts(body);
      const role = await backends.authz.roles.updateRole({
        orgId: org.id,
        id: target.id,
        name: body.name,
        description: body.description,
        permissions: body.permissions && { permissions: body.permissions },
        teamIds: body.teamIDs && { teamIds: body.teamIDs },
      });
      return { body: roleJson(role) };
    },
  }),
  roleRoute({
    method: 'delete',
    scope: 'write:organization',
    path: '/authz/roles/:id',
    summary: 'Delete a custom role and every grant it carried',
    auth: 'token',
    org: 'required',
    params: RoleId,
    target: roleOfOrg,
    requires: [MEMBERSHIP, { on: 'target', permission: 'delete:role' }],
    response: { status: 204 },
    async handle(_input, { backends, org, target }) {
      await backends.authz.roles.deleteRole({ orgId: org.id, id: target.id });
      return {};
    },
  }),
  roleRoute({
    method: 'get',
    scope: 'read:organization',
    path: '/authz/roles/:id/principals',
    summary: 'The teams a custom role is assigned to and the users it reaches through them',
    auth: 'token',
    org: 'required',
    params: RoleId,
    target: roleOfOrg,
    requires: [MEMBERSHIP, { on: 'target', permission: 'viewer:role' }],
    response: { status: 200, schema: z.array(PrincipalJson) },
    async handle(_input, ctx) {
      const { principals } = await ctx.kept.authz.roles.listPrincipals({ orgId: ctx.org.id, id: ctx.target.id });
      const ids = (type: string) => principals.filter((x) => x.type === type).map((x) => x.id);
      const names = await principalNames(ctx, ctx.org.id, ids('team'), ids('user'));
      return { body: principals.map((x) => principalJson(x, (x.type === 'team' ? names.teams : names.users).get(x.id))) };
    },
  }),
];
