import type { authzRolesV1, authzV1 } from '@platform/proto';
import { rfc3339 } from './presenters';

/** The spec's RoleResponse (section 2.1): input says `teamIDs`, output `team_ids`; `owner_id` is the organization. */
export function roleJson(r: authzRolesV1.Role) {
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
export function allowedPermissionsJson(o: authzRolesV1.ObjectPermissions) {
  return { objectType: o.objectType, objectID: o.objectId, allowedPermissions: o.allowedPermissions };
}

/** The spec's VirtualPermissionsData: `associated` only on entries that have associations. */
export function permissionCatalogJson(c: authzV1.PermissionCatalogResponse) {
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
export function principalJson(p: authzRolesV1.Principal, name: string | undefined) {
  return {
    type: p.type,
    id: p.id,
    ...(name !== undefined && { name }),
    ...(p.type === 'user' && { teams: p.viaTeamIds }),
  };
}
