import { z } from 'zod';
import type { authzRolesV1, authzV1 } from '@platform/proto';
import { rfc3339 } from '../../presenters';

const PermissionJson = z.object({ namespace: z.string(), action: z.string() });

/** The spec's RoleResponse (section 2.1): input says `teamIDs`, output `team_ids`; `owner_id` is the organization. */
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

/** The spec's AuthObjectAllowedPermissions (section 2.1). */
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
