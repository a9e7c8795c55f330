import { z } from 'zod';
import { NotAllowedError } from '@platform/errors';
import { checkLengths, TEXT_LIMITS, type LengthCheck } from '@platform/service-kit';
import { allowedPermissionsJson, permissionCatalogJson, principalJson, roleJson } from '../presenters-authz';
import type { CheckTarget, Route, RouteContext } from '../route';
import { parseBody, parseId } from '../validation';

// Spec section 4.1. Every route needs a token and `?org=`, and the caller must be a member of that
// organization or a site admin (relation `access`, permission name `access:org`); the role routes add
// their relation.
// Statuses and decisions: docs/custom-roles.md.

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

// Over-long texts are invalid values, 400 as the authz service answers them (spec 4.1), not malformed bodies.
/** 400 for a role name, description or permission part over its limit (docs/limits.md). */
function checkRoleTexts(body: { name?: string; description?: string; permissions?: { namespace: string; action: string }[] }): void {
  checkLengths([
    ['name', body.name, TEXT_LIMITS.roleName],
    ['description', body.description, TEXT_LIMITS.description],
    ...(body.permissions ?? []).flatMap((p, i): LengthCheck[] => [
      [`permissions[${i}].namespace`, p.namespace, TEXT_LIMITS.permissionPart],
      [`permissions[${i}].action`, p.action, TEXT_LIMITS.permissionPart],
    ]),
  ]);
}

/** 400 for an objectType over its limit, named as the authz service names it (`objectType[2]` in a batch). */
function checkObjectTypes(objects: { objectType: string }[]): void {
  checkLengths(objects.map((o, i) => [`objectType${objects.length > 1 ? `[${i}]` : ''}`, o.objectType, TEXT_LIMITS.objectType]));
}

/** 403 unless the caller is a member of the `org` organization. */
async function requireMembership(ctx: RouteContext): Promise<void> {
  const { allowed } = await ctx.backends.authz.checkPermission(
    { userId: ctx.caller!.id, permission: 'access:org', objectId: ctx.org!.id },
    { requestId: ctx.requestId },
  );
  if (!allowed) throw new NotAllowedError('org membership required');
}

/** Membership of the `org` organization, then the route's relation on it. */
const memberOfOrg: CheckTarget = async (_req, ctx) => {
  await requireMembership(ctx);
  return ctx.org!.id;
};

/** Membership, then the role `{id}` of the `org` organization (404 when it has none), on which the route's relation is checked. */
const roleOfOrg: CheckTarget = async (req, ctx) => {
  await requireMembership(ctx);
  const id = parseId(req.params.id, 'id');
  await ctx.backends.authzRoles.getRole({ orgId: ctx.org!.id, id }, { requestId: ctx.requestId });
  return id;
};

/** Names of the principals: team names from the organization's teams, logins of users; left out when unknown. */
async function principalNames(ctx: RouteContext, teams: number[], users: number[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const opts = { requestId: ctx.requestId };
  if (teams.length) {
    const { teams: all } = await ctx.backends.orgs.listTeams({ orgId: ctx.org!.id }, opts);
    for (const t of all) names.set(`team:${t.id}`, t.name);
  }
  if (users.length) {
    // A user deleted since being added to a team keeps its entry, without a name.
    const found = await ctx.backends['orgs-teams'].getUsers({ ids: users }, opts);
    for (const u of found.users) names.set(`user:${u.id}`, u.login);
  }
  return names;
}

export const authzRoutes: Route[] = [
  {
    method: 'get',
    path: '/authz/objects/:objectType/:objID/allowed-permissions',
    summary: 'Relations the caller holds on one object (user, organization, team, cluster, contract, robot_ac, token)',
    auth: 'token',
    org: 'required',
    check: { permission: 'access:org', on: 'org', denied: 'org membership required' },
    service: 'authz',
    async handle(req, ctx) {
      const objectId = parseId(req.params.objID, 'objID');
      checkObjectTypes([{ objectType: String(req.params.objectType) }]);
      const { objects } = await ctx.backends.authzRoles.allowedPermissions(
        { userId: ctx.caller!.id, objects: [{ objectType: String(req.params.objectType), objectId }] },
        { requestId: ctx.requestId },
      );
      return { body: allowedPermissionsJson(objects[0]) };
    },
  },
  {
    method: 'post',
    path: '/authz/objects/allowed-permissions',
    summary: 'Relations the caller holds on each of many objects, in request order',
    auth: 'token',
    org: 'required',
    check: { permission: 'access:org', on: 'org', denied: 'org membership required' },
    service: 'authz',
    async handle(req, ctx) {
      const body = parseBody(AuthObjectIdentifiers, req.body);
      checkObjectTypes(body);
      const { objects } = await ctx.backends.authzRoles.allowedPermissions(
        { userId: ctx.caller!.id, objects: body.map((o) => ({ objectType: o.objectType, objectId: o.objectID })) },
        { requestId: ctx.requestId },
      );
      return { body: objects.map(allowedPermissionsJson) };
    },
  },
  {
    method: 'get',
    path: '/authz/roles/available_permissions',
    summary: 'The permission catalog: what a custom role may carry',
    auth: 'token',
    org: 'required',
    check: { permission: 'access:org', on: 'org', denied: 'org membership required' },
    service: 'authz',
    async handle(_req, ctx) {
      return { body: permissionCatalogJson(await ctx.backends.authz.permissionCatalog({}, { requestId: ctx.requestId })) };
    },
  },
  {
    method: 'get',
    path: '/authz/roles',
    summary: 'The custom roles of the organization',
    auth: 'token',
    org: 'required',
    check: { permission: 'access:org', on: 'org', denied: 'org membership required' },
    service: 'authz',
    async handle(_req, ctx) {
      const { roles } = await ctx.backends.authzRoles.listRoles({ orgId: ctx.org!.id }, { requestId: ctx.requestId });
      return { body: roles.map(roleJson) };
    },
  },
  {
    method: 'post',
    path: '/authz/roles',
    summary: 'Create a custom role',
    auth: 'token',
    org: 'required',
    check: { permission: 'create_role:org', on: memberOfOrg },
    service: 'authz',
    async handle(req, ctx) {
      const body = parseBody(CreateRoleRequest, req.body);
      checkRoleTexts(body);
      const role = await ctx.backends.authzRoles.createRole(
        {
          orgId: ctx.org!.id,
          name: body.name,
          description: body.description ?? '',
          permissions: body.permissions,
          teamIds: body.teamIDs ?? [],
        },
        { requestId: ctx.requestId },
      );
      return { status: 201, body: roleJson(role) };
    },
  },
  {
    method: 'get',
    path: '/authz/roles/:id',
    summary: 'One custom role',
    auth: 'token',
    org: 'required',
    check: { permission: 'view:role', on: roleOfOrg },
    service: 'authz',
    async handle(req, ctx) {
      const role = await ctx.backends.authzRoles.getRole(
        { orgId: ctx.org!.id, id: parseId(req.params.id, 'id') },
        { requestId: ctx.requestId },
      );
      return { body: roleJson(role) };
    },
  },
  {
    method: 'put',
    path: '/authz/roles/:id',
    summary: 'Update a custom role; supplied fields replace the current values',
    auth: 'token',
    org: 'required',
    check: { permission: 'edit:role', on: roleOfOrg },
    service: 'authz',
    async handle(req, ctx) {
      const body = parseBody(UpdateRoleRequest, req.body);
      checkRoleTexts(body);
      const role = await ctx.backends.authzRoles.updateRole(
        {
          orgId: ctx.org!.id,
          id: parseId(req.params.id, 'id'),
          name: body.name,
          description: body.description,
          permissions: body.permissions && { permissions: body.permissions },
          teamIds: body.teamIDs && { teamIds: body.teamIDs },
        },
        { requestId: ctx.requestId },
      );
      return { body: roleJson(role) };
    },
  },
  {
    method: 'delete',
    path: '/authz/roles/:id',
    summary: 'Delete a custom role and every grant it carried',
    auth: 'token',
    org: 'required',
    check: { permission: 'delete:role', on: roleOfOrg },
    service: 'authz',
    async handle(req, ctx) {
      await ctx.backends.authzRoles.deleteRole({ orgId: ctx.org!.id, id: parseId(req.params.id, 'id') }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
  {
    method: 'get',
    path: '/authz/roles/:id/principals',
    summary: 'The teams a custom role is assigned to and the users it reaches through them',
    auth: 'token',
    org: 'required',
    check: { permission: 'viewer:role', on: roleOfOrg },
    service: 'authz',
    async handle(req, ctx) {
      const { principals } = await ctx.backends.authzRoles.listPrincipals(
        { orgId: ctx.org!.id, id: parseId(req.params.id, 'id') },
        { requestId: ctx.requestId },
      );
      const ids = (type: string) => principals.filter((p) => p.type === type).map((p) => p.id);
      const names = await principalNames(ctx, ids('team'), ids('user'));
      return { body: principals.map((p) => principalJson(p, names.get(`${p.type}:${p.id}`))) };
    },
  },
];
