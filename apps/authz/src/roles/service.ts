import { unixSeconds } from '@platform/db';
import { authzRolesV1 } from '@platform/proto';
import { bindService, serviceLimits, TEXT_LIMITS as L, versionOf, withLimits, type ServiceBinding } from '@platform/service-kit';
import { AllowedPermissions } from './allowed-permissions';
import type { Roles } from './roles';
import type { StoredRole } from './roles-store';
import { withDependsOn, wroteRow } from '../engine/recorded';

/** The Role message of a stored role. */
export function toRole(r: StoredRole): authzRolesV1.Role {
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    description: r.description,
    permissions: r.permissions.map(({ namespace, action }) => ({ namespace, action })),
    teamIds: r.team_ids,
    createdUnix: unixSeconds(r.created_at),
    updatedUnix: unixSeconds(r.updated_at),
  };
}

const permissionLimits = (at: string) => ({ [`${at}[].namespace`]: L.permissionPart, [`${at}[].action`]: L.permissionPart });

/**
 * Field limits the server checks before a handler runs (docs/limits.md); Roles checks names (after trimming)
 * and descriptions again where it stores them.
 */
const ROLES_LIMITS = serviceLimits(authzRolesV1.RolesServiceService, {
  createRole: { description: L.description, ...permissionLimits('permissions') },
  updateRole: { description: L.description, ...permissionLimits('permissions.permissions') },
  allowedPermissions: { 'objects[].objectType': L.objectType },
  checkGrant: permissionLimits('permissions'),
});

/**
 * The RolesService methods that change nothing; every other one is announced as a tuple change (tuples-changed.ts),
 * a role's rename too (its row is named as its parent tuple would be, `wroteRow`): readers keep the roles they resolve
 * under the same notice.
 */
export const ROLES_READS: readonly (keyof typeof authzRolesV1.RolesServiceService)[] = [
  'getVersion',
  'getRole',
  'listRoles',
  'listPrincipals',
  'allowedPermissions',
  'checkGrant',
  'listTeamRoles',
];

/** The RolesService RPCs (proto/platformadmin/authz/v1/roles.proto). */
export function rolesService(roles: Roles, allowed: AllowedPermissions): ServiceBinding<typeof authzRolesV1.RolesServiceService> {
  const [binding] = withLimits([ROLES_LIMITS], [rolesBinding(roles, allowed)]);
  return binding;
}

function rolesBinding(roles: Roles, allowed: AllowedPermissions): ServiceBinding<typeof authzRolesV1.RolesServiceService> {
  return bindService(authzRolesV1.RolesServiceService, {
    getVersion: async () => versionOf('authz'),
    createRole: async (req) => {
      const role = await roles.create(req);
      wroteRow(`role:${role.id}`, `organization:${req.orgId}`);
      return toRole(role);
    },
    getRole: async (req) => toRole(await roles.get(req.orgId, req.id)),
    listRoles: async (req) => ({ roles: (await roles.list(req.orgId)).map(toRole), maxRolesPerTeam: roles.maxRolesPerTeam }),
    updateRole: async (req) => (
      wroteRow(`role:${req.id}`, `organization:${req.orgId}`),
      toRole(
        await roles.update({
          orgId: req.orgId,
          id: req.id,
          name: req.name,
          description: req.description,
          permissions: req.permissions?.permissions,
          teamIds: req.teamIds?.teamIds,
        }),
      )
    ),
    deleteRole: async (req) => (wroteRow(`role:${req.id}`, `organization:${req.orgId}`), await roles.delete(req.orgId, req.id), {}),
    listPrincipals: async (req) => ({ principals: await roles.principals(req.orgId, req.id) }),
    allowedPermissions: async (req) => ({ objects: await allowed.of(req.userId, req.objects) }),
    assignTeamRoles: async (req) => ({ roleIds: await roles.assignTeamRoles(req.teamId, req.orgId, req.roleIds, req.until?.until) }),
    deleteOrgRoles: async (req) => {
      const roleIds = await roles.deleteOrgRoles(req.orgId);
      for (const id of roleIds) wroteRow(`role:${id}`, `organization:${req.orgId}`);
      return { roleIds };
    },
    checkGrant: async (req, ctx) => {
      const { value, dependsOn } = await withDependsOn(ctx, () =>
        roles.missingGrants(req.userId, req.orgId, { permissions: req.permissions, roleIds: req.roleIds, teamIds: req.teamIds }),
      );
      return { missing: value, dependsOn };
    },
    async listTeamRoles(req) {
      const [byTeam, until] = await Promise.all([roles.listTeamRoles(req.teamIds), roles.teamRolesUntil(req.teamIds)]);
      return {
        teamRoles: Object.fromEntries([...byTeam].map(([team, roleIds]) => [team, { roleIds }])),
        teamRolesUntil: Object.fromEntries([...until].map(([team, ends]) => [team, { until: Object.fromEntries(ends) }])),
      };
    },
  });
}
