import { InputError } from '@platform/errors';
import type { Tuple } from './engine/types';

/** The model's object types a permission is checked on (apps/authz/model/platform.fga). */
export type ObjectType = 'site' | 'organization' | 'team' | 'role' | 'cluster' | 'contract' | 'robot_ac' | 'token';

/** Where a permission is checked: a relation on an object of a type. */
export interface PermissionTarget {
  objectType: ObjectType;
  relation: string;
}

/** One permission the spec names, and how the model answers it. */
export interface Permission extends PermissionTarget {
  /** The spec's name: `action:namespace` (e.g. `edit:org`) or `Namespace_Action` for the client-org ones. */
  name: string;
  namespace: string;
  action: string;
  description: string;
  /** Whether a custom role may carry it; only organization-level permissions may. */
  assignable: boolean;
  /** The organization relation a role's grant is written to (`role:<id>#assignee <grant> organization:<id>`). */
  grant?: string;
  /** Permissions that go with this one in the catalog: `required` ones are needed for it to be of use. */
  associated?: { namespace: string; action: string; required: boolean }[];
}

/** The one site object; site-admin permissions are checked on it. */
export const SITE_OBJECT = 'site:platform';

interface Row {
  name: string;
  objectType: ObjectType;
  relation: string;
  description: string;
  /** Set for permissions a custom role may carry: the organization relation it grants (default: `relation`). */
  role?: true | string;
  /** Names of associated permissions; a trailing `?` marks one as not required. */
  with?: string[];
}

// The table. Site-admin permissions live on the site object and are never assignable; organization-level
// permissions are, except deleting the organization, which stays with its owners.
const TABLE: Row[] = [
  // Organizations.
  { name: 'edit:org', objectType: 'organization', relation: 'edit', description: 'Edit the organization', role: true },
  { name: 'delete:org', objectType: 'organization', relation: 'delete', description: 'Delete the organization' },
  { name: 'admin:org', objectType: 'organization', relation: 'admin', description: 'Administer organization membership', role: true },
  {
    name: 'edit_branding_options:org',
    objectType: 'organization',
    relation: 'edit_branding_options',
    description: 'Edit the branding options',
    role: true,
  },
  // "Org membership required" of the spec's route descriptions: the member relation.
  { name: 'member:org', objectType: 'organization', relation: 'member', description: 'Be a member of the organization' },
  // Not in the spec: the membership gate of the /authz routes, which site admins pass too.
  {
    name: 'access:org',
    objectType: 'organization',
    relation: 'access',
    description: 'Act within the organization (members and site admins)',
  },
  // The spec's "org ownership" (owners and site admins, never a custom role): changing the owners.
  {
    name: 'manage_owners:org',
    objectType: 'organization',
    relation: 'manage_owners',
    description: 'Change the owners of the organization',
  },
  // Custom roles.
  {
    name: 'create_role:org',
    objectType: 'organization',
    relation: 'create_role',
    description: 'Create custom roles',
    role: true,
    with: ['view:role'],
  },
  { name: 'view:role', objectType: 'role', relation: 'view', description: 'View custom roles', role: 'view_role' },
  { name: 'edit:role', objectType: 'role', relation: 'edit', description: 'Edit custom roles', role: 'edit_role', with: ['view:role'] },
  {
    name: 'delete:role',
    objectType: 'role',
    relation: 'delete',
    description: 'Delete custom roles',
    role: 'delete_role',
    with: ['view:role'],
  },
  {
    name: 'viewer:role',
    objectType: 'role',
    relation: 'viewer',
    description: 'View the users and teams a custom role is assigned to',
    role: 'view_role_principals',
    with: ['view:role'],
  },
  // Teams.
  { name: 'list:team', objectType: 'organization', relation: 'list_team', description: 'List the teams', role: true },
  {
    name: 'create:team',
    objectType: 'organization',
    relation: 'create_team',
    description: 'Create teams',
    role: true,
    with: ['view:team'],
  },
  { name: 'view:team', objectType: 'team', relation: 'view', description: 'View teams', role: 'view_team' },
  { name: 'edit:team', objectType: 'team', relation: 'edit', description: 'Edit teams', role: 'edit_team', with: ['view:team'] },
  { name: 'delete:team', objectType: 'team', relation: 'delete', description: 'Delete teams', role: 'delete_team', with: ['view:team'] },
  { name: 'join:team', objectType: 'team', relation: 'join', description: 'Join a team of one’s organization' },
  { name: 'leave:team', objectType: 'team', relation: 'leave', description: 'Leave a team one is a member of' },
  {
    name: 'add:team',
    objectType: 'team',
    relation: 'add',
    description: 'Add a user to a team',
    role: 'add_team_member',
    with: ['view:team'],
  },
  {
    name: 'remove:team',
    objectType: 'team',
    relation: 'remove',
    description: 'Remove a user from a team',
    role: 'remove_team_member',
    with: ['view:team'],
  },
  {
    name: 'add:team-member',
    objectType: 'team',
    relation: 'add_member',
    description: 'Add team members',
    role: 'add_team_member',
    with: ['view:team'],
  },
  {
    name: 'remove:team-member',
    objectType: 'team',
    relation: 'remove_member',
    description: 'Remove team members',
    role: 'remove_team_member',
    with: ['view:team'],
  },
  { name: 'list:team-members', objectType: 'team', relation: 'list_members', description: 'List team members', role: 'view_team' },
  { name: 'view:team-member', objectType: 'team', relation: 'view_member', description: 'View a team member', role: 'view_team' },
  // Avatar, sync tokens, access tokens and message-bus tokens.
  { name: 'view:avatar', objectType: 'organization', relation: 'view_avatar', description: 'View the avatar', role: true },
  {
    name: 'update:avatar',
    objectType: 'organization',
    relation: 'update_avatar',
    description: 'Update the avatar',
    role: true,
    with: ['view:avatar'],
  },
  {
    name: 'delete:avatar',
    objectType: 'organization',
    relation: 'delete_avatar',
    description: 'Delete the avatar',
    role: true,
    with: ['view:avatar'],
  },
  {
    name: 'view:sync-token',
    objectType: 'organization',
    relation: 'view_sync_token',
    description: 'View the multi-cluster-manager sync token',
    role: true,
  },
  {
    name: 'create:manager-org-sync-token',
    objectType: 'organization',
    relation: 'create_manager_org_sync_token',
    description: 'Create the multi-cluster-manager sync token',
    role: true,
    with: ['view:sync-token'],
  },
  {
    name: 'remove:manager-sync-token',
    objectType: 'organization',
    relation: 'remove_manager_sync_token',
    description: 'Remove the multi-cluster-manager sync token',
    role: true,
    with: ['view:sync-token'],
  },
  { name: 'list:access-token', objectType: 'organization', relation: 'list_access_token', description: 'List access tokens', role: true },
  {
    name: 'delete:access-token',
    objectType: 'organization',
    relation: 'delete_access_token',
    description: 'Delete access tokens',
    role: true,
    with: ['list:access-token'],
  },
  { name: 'list:bus-token', objectType: 'organization', relation: 'list_bus_token', description: 'List message-bus tokens', role: true },
  {
    name: 'revoke:bus-token',
    objectType: 'organization',
    relation: 'revoke_bus_token',
    description: 'Revoke message-bus tokens',
    role: true,
    with: ['list:bus-token'],
  },
  // The organization's contracts and clusters.
  {
    name: 'view_contracts:contract_mgmt',
    objectType: 'organization',
    relation: 'view_contracts_mgmt',
    description: 'View contracts and their audit events',
    role: true,
  },
  {
    name: 'add_cluster:contract_mgmt',
    objectType: 'organization',
    relation: 'add_cluster_contract',
    description: 'Assign clusters to contracts',
    role: true,
    with: ['view_contracts:contract_mgmt'],
  },
  {
    name: 'create:cluster',
    objectType: 'organization',
    relation: 'create_cluster',
    description: 'Enroll hub clusters of the organization',
    role: true,
  },
  {
    name: 'updated_preferences:contracts',
    objectType: 'contract',
    relation: 'updated_preferences',
    description: 'Update contract preferences',
    role: 'updated_preferences',
    with: ['view_contracts:contract_mgmt'],
  },
  {
    name: 'issue-license:cluster',
    objectType: 'cluster',
    relation: 'issue_license',
    description: 'Issue licenses for clusters',
    role: 'issue_license',
    with: ['view_contracts:contract_mgmt?'],
  },
  // Site administration: contracts, usage and dashboard, site settings.
  ...siteAdmin([
    ['view_contracts', 'View all contracts'],
    ['create_contracts', 'Create contracts'],
    ['update_contracts', 'Update contracts'],
    ['delete_contracts', 'Delete contracts'],
    ['extend_contracts', 'Extend contracts'],
    ['revoke_contracts', 'Revoke contracts'],
    ['add_cluster', 'Bind clusters to contracts'],
    ['remove_cluster', 'Unbind clusters from contracts'],
    ['issue_license', 'Issue licenses for contract clusters'],
    ['update_cluster_name', 'Rename contract clusters'],
    ['update_cluster_tags', 'Tag contract clusters'],
    ['view_usage_analytics', 'View usage reports'],
    ['view_licensed_users', 'View licensed users, clusters, licenses and products'],
    ['view_system_outages', 'View and record system outages'],
    ['view_marketplace_usage', 'View and manage marketplace subscriptions'],
    ['edit_allowed_domains', 'Edit the allowed email domains'],
    ['update_user_registration', 'Enable or disable user registration'],
  ]),
  // Site administration itself: the Gitea-compatible admin routes (POST /admin/users).
  { name: 'admin:site', objectType: 'site', relation: 'admin', description: 'Administer the site (create users)' },
  // Client organizations.
  {
    name: 'Organization_SiteAdminCanViewClientOrg',
    objectType: 'site',
    relation: 'view_client_org',
    description: 'View client organizations',
  },
  {
    name: 'Organization_SiteAdminCanCreateClientOrg',
    objectType: 'site',
    relation: 'create_client_org',
    description: 'Create client organizations',
  },
  {
    name: 'Organization_SiteAdminCanAddClusterToClientOrg',
    objectType: 'site',
    relation: 'add_cluster_to_client_org',
    description: 'Add clusters to client organizations',
  },
  {
    name: 'Organization_SiteAdminCanRemoveClusterFromClientOrg',
    objectType: 'site',
    relation: 'remove_cluster_from_client_org',
    description: 'Remove clusters from client organizations',
  },
  {
    name: 'Organization_SiteAdminCanDeleteClientOrg',
    objectType: 'site',
    relation: 'delete_client_org',
    description: 'Delete client organizations',
  },
];

function siteAdmin(entries: [string, string][]): Row[] {
  return entries.map(([relation, description]) => ({ name: `${relation}:site_admin`, objectType: 'site', relation, description }));
}

/** `edit:org` gives namespace org, action edit; `Organization_SiteAdminCanViewClientOrg` gives Organization, SiteAdminCanViewClientOrg. */
function splitName(name: string): { namespace: string; action: string } {
  const colon = name.lastIndexOf(':');
  if (colon > 0) return { action: name.slice(0, colon), namespace: name.slice(colon + 1) };
  const underscore = name.indexOf('_');
  return { namespace: name.slice(0, underscore), action: name.slice(underscore + 1) };
}

/** Every permission of the spec, in catalog order. */
export const PERMISSIONS: readonly Permission[] = TABLE.map((row) => {
  const { namespace, action } = splitName(row.name);
  const grant = row.role === true ? row.relation : row.role;
  const associated = row.with?.map((w) => ({ ...splitName(w.replace(/\?$/, '')), required: !w.endsWith('?') }));
  return {
    name: row.name,
    namespace,
    action,
    description: row.description,
    objectType: row.objectType,
    relation: row.relation,
    assignable: grant !== undefined,
    ...(grant !== undefined && { grant }),
    ...(associated && { associated }),
  };
});

const BY_NAME = new Map(PERMISSIONS.map((p) => [p.name, p]));
const ASSIGNABLE = new Map(PERMISSIONS.filter((p) => p.assignable).map((p) => [`${p.namespace}\u0000${p.action}`, p]));

/** The object type and relation a spec permission name is checked as; unknown names are an input error. */
export function resolvePermission(name: string): PermissionTarget {
  const p = BY_NAME.get(name);
  if (!p) throw new InputError(`unknown permission '${name}'`);
  return { objectType: p.objectType, relation: p.relation };
}

/** The permission catalog (GET /authz/roles/available_permissions): exactly what a custom role may carry. */
export function permissionCatalog(): { namespace: string; action: string; description: string; associated?: Permission['associated'] }[] {
  return [...ASSIGNABLE.values()].map(({ namespace, action, description, associated }) => ({
    namespace,
    action,
    description,
    ...(associated && { associated }),
  }));
}

/** Whether a custom role may carry namespace/action. */
export function isAssignable(namespace: string, action: string): boolean {
  return ASSIGNABLE.has(`${namespace}\u0000${action}`);
}

/** The catalog entries of the pairs a role may carry, each once, in catalog order; other pairs are left out. */
export function assignableOf(pairs: { namespace: string; action: string }[]): Permission[] {
  const wanted = new Set(pairs.map((p) => `${p.namespace}\u0000${p.action}`));
  return [...ASSIGNABLE].filter(([key]) => wanted.has(key)).map(([, p]) => p);
}

/** The permissions checked on objects of a type (what allowed-permissions reports on). */
export function permissionsOn(objectType: ObjectType): Permission[] {
  return PERMISSIONS.filter((p) => p.objectType === objectType);
}

/**
 * The tuples that give a role's assignees its permissions in its organization, one per distinct grant.
 * Unknown or unassignable permissions are an input error.
 */
export function roleGrantTuples(
  roleId: number | string,
  orgId: number | string,
  permissions: { namespace: string; action: string }[],
): Tuple[] {
  const grants = new Set<string>();
  for (const { namespace, action } of permissions) {
    const p = ASSIGNABLE.get(`${namespace}\u0000${action}`);
    if (!p) throw new InputError(`permission ${namespace}/${action} cannot be assigned to a role`);
    grants.add(p.grant!);
  }
  return [...grants].map((relation) => ({ user: `role:${roleId}#assignee`, relation, object: `organization:${orgId}` }));
}
