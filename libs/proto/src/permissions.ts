// GENERATED from apps/authz/src/permissions.ts; do not edit by hand.
// Regenerate: npx tsx --tsconfig tsconfig.base.json apps/authz/src/catalog-doc.ts

/** Every permission name the authz service checks, and the object type it is checked on. */
export const PERMISSION_OBJECT_TYPES = {
  'edit:org': 'organization',
  'delete:org': 'organization',
  'admin:org': 'organization',
  'edit_branding_options:org': 'organization',
  'member:org': 'organization',
  'access:org': 'organization',
  'manage_owners:org': 'organization',
  'create_role:org': 'organization',
  'view:role': 'role',
  'edit:role': 'role',
  'delete:role': 'role',
  'viewer:role': 'role',
  'list:team': 'organization',
  'create:team': 'organization',
  'view:team': 'team',
  'edit:team': 'team',
  'delete:team': 'team',
  'join:team': 'team',
  'leave:team': 'team',
  'add:team': 'team',
  'remove:team': 'team',
  'add:team-member': 'team',
  'remove:team-member': 'team',
  'list:team-members': 'team',
  'view:team-member': 'team',
  'view:avatar': 'organization',
  'update:avatar': 'organization',
  'delete:avatar': 'organization',
  'view:sync-token': 'organization',
  'create:manager-org-sync-token': 'organization',
  'remove:manager-sync-token': 'organization',
  'list:access-token': 'organization',
  'delete:access-token': 'organization',
  'list:bus-token': 'organization',
  'revoke:bus-token': 'organization',
  'view_contracts:contract_mgmt': 'organization',
  'add_cluster:contract_mgmt': 'organization',
  'create:cluster': 'organization',
  'updated_preferences:contracts': 'contract',
  'issue-license:cluster': 'cluster',
  'view_contracts:site_admin': 'site',
  'create_contracts:site_admin': 'site',
  'update_contracts:site_admin': 'site',
  'delete_contracts:site_admin': 'site',
  'extend_contracts:site_admin': 'site',
  'revoke_contracts:site_admin': 'site',
  'add_cluster:site_admin': 'site',
  'remove_cluster:site_admin': 'site',
  'issue_license:site_admin': 'site',
  'update_cluster_name:site_admin': 'site',
  'update_cluster_tags:site_admin': 'site',
  'view_usage_analytics:site_admin': 'site',
  'view_licensed_users:site_admin': 'site',
  'view_system_outages:site_admin': 'site',
  'view_marketplace_usage:site_admin': 'site',
  'edit_allowed_domains:site_admin': 'site',
  'update_user_registration:site_admin': 'site',
  'admin:site': 'site',
  Organization_SiteAdminCanViewClientOrg: 'site',
  Organization_SiteAdminCanCreateClientOrg: 'site',
  Organization_SiteAdminCanAddClusterToClientOrg: 'site',
  Organization_SiteAdminCanRemoveClusterFromClientOrg: 'site',
  Organization_SiteAdminCanDeleteClientOrg: 'site',
} as const;

/** A permission name of the authz catalog. */
export type PermissionName = keyof typeof PERMISSION_OBJECT_TYPES;

/** The object types permissions are checked on. */
export type PermissionObjectType = (typeof PERMISSION_OBJECT_TYPES)[PermissionName];

/** The permission names checked on objects of type T. */
export type PermissionOn<T extends PermissionObjectType> = {
  [K in PermissionName]: (typeof PERMISSION_OBJECT_TYPES)[K] extends T ? K : never;
}[PermissionName];
