import { z } from 'zod';
import type { authzRolesV1, authzV1 } from '@platform/proto';
import { rfc3339 } from '../../presenters';

const PermissionJson = z.object({ namespace: z.string(), action: z.string() });

/** The spec's RoleResponse: input says `teamIDs`, output `team_ids`; `owner_id` is the organization. */
export const RoleJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    owner_id: z.number().int(),
    description: z.string(),
    permissions: z.array(PermissionJson),
    team_ids: z.array(z.number().int()),
    created_at: z.string().meta({ format: 'date-time' }),
    updated_at: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'RoleResponse' });

export function roleJson(r: authzRolesV1.Role): z.input<typeof RoleJson> {
  return {
    id: r.id,
    name: r.name,
    owner_id: r.orgId,
    description: r.description,
    permissions: r.permissions.map(({ namespace, action }) => ({ namespace, action })),
    team_ids: r.teamIds,
    created_at: rfc3339(r.createdUnix),
    updated_at: rfc3339(r.updatedUnix),
  };
}

/** The spec's AuthObjectAllowedPermissions. */
export const AllowedPermissionsJson = z
  .object({ objectType: z.string(), objectID: z.number().int(), allowedPermissions: z.array(z.string()) })
  .meta({ id: 'AuthObjectAllowedPermissions' });

export function allowedPermissionsJson(o: authzRolesV1.ObjectPermissions): z.input<typeof AllowedPermissionsJson> {
  return { objectType: o.objectType, objectID: o.objectId, allowedPermissions: o.allowedPermissions };
}

/** The spec's VirtualPermissionsData: `associated` only on entries that have associations. */
export const PermissionCatalogJson = z
  .object({
    permissions: z.array(
      z.object({
        namespace: z.string(),
        action: z.string(),
        description: z.string(),
        associated: z.array(z.object({ namespace: z.string(), action: z.string(), required: z.boolean() })).optional(),
      }),
    ),
  })
  .meta({ id: 'VirtualPermissionsData' });

export function permissionCatalogJson(c: authzV1.PermissionCatalogResponse): z.input<typeof PermissionCatalogJson> {
  return {
    permissions: c.permissions.map((p) => ({
      namespace: p.namespace,
      action: p.action,
      description: p.description,
      ...(p.associated.length > 0 && {
        associated: p.associated.map((a) => ({ namespace: a.namespace, action: a.action, required: a.required })),
      }),
    })),
  };
}

/**
 * One principal of a role (the spec leaves the shape open, docs/custom-roles.md): a team the role is assigned
 * to, or a user who is a member of such a team. `name` is the team name or the user's login when it could be
 * resolved; `teams` (users only) lists the assigned teams through which the role reaches the user.
 */
export const PrincipalJson = z
  .object({
    type: z.enum(['team', 'user']),
    id: z.number().int(),
    name: z.string().optional(),
    teams: z.array(z.number().int()).optional(),
  })
  .meta({ id: 'RolePrincipal' });

export function principalJson(p: authzRolesV1.Principal, name: string | undefined): z.input<typeof PrincipalJson> {
  return {
    type: p.type as 'team' | 'user',
    id: p.id,
    ...(name !== undefined && { name }),
    ...(p.type === 'user' && { teams: p.viaTeamIds }),
  };
}

/** One way a user holds a permission: as an owner, a site admin, through a custom role, or another relation. */
const AccessPathJson = z.object({
  kind: z.enum(['owner', 'site_admin', 'role', 'relation']),
  relation: z.string().optional().meta({ description: 'For `relation`: the relation held, e.g. `member`' }),
  team_id: z.number().int().optional(),
  team_name: z.string().optional(),
  role_id: z.number().int().optional(),
  role_name: z.string().optional(),
  until: z.string().optional().meta({ format: 'date-time', description: 'When a time-bound team role ends' }),
});

export const WhoHasAccessJson = z
  .object({
    object: z.string().meta({ description: '`organization:<id>`, `contract:<id>` or `cluster:<uuid>`' }),
    permissions: z.array(
      z.object({
        permission: z.string().meta({ description: 'The catalog’s name (`edit:org`, `view:role`), or the relation’s when it has none' }),
        description: z.string().meta({ description: 'What it lets one do: the catalog’s description, or the relation in words' }),
        relation: z.string(),
        users: z.array(z.object({ id: z.number().int(), login: z.string().optional(), paths: z.array(AccessPathJson) })),
      }),
    ),
  })
  .meta({ id: 'WhoHasAccessResponse' });

type Names = { users: Map<number, string>; teams: Map<number, string>; roles: Map<number, string> };

export function whoHasAccessJson(object: string, r: authzV1.WhoHasAccessResponse, names: Names): z.input<typeof WhoHasAccessJson> {
  return {
    object,
    permissions: r.permissions.map((p) => ({
      permission: p.permission,
      description: p.description,
      relation: p.relation,
      users: p.users.map((u) => ({
        id: u.userId,
        login: names.users.get(u.userId),
        paths: u.paths.map((path) => {
          const [kind, relation] = path.kind.split(':') as [z.infer<typeof AccessPathJson>['kind'], string | undefined];
          return {
            kind,
            ...(relation && { relation }),
            ...(path.teamId && { team_id: path.teamId, team_name: names.teams.get(path.teamId) }),
            ...(path.roleId && { role_id: path.roleId, role_name: names.roles.get(path.roleId) }),
            ...(path.until && { until: path.until }),
          };
        }),
      })),
    })),
  };
}
