/**
 * How the custom-role form lays out the permission catalog (docs/custom-roles.md, "The role form"): by what a person
 * manages, not by the catalog's namespaces (which split one task over many boxes, `team-member` apart from
 * `team-members`), and the presets a role starts from, as Grafana's Viewer, Editor and Admin. Permissions are named as
 * the API names them (`action:namespace`); an entry of the catalog no group names falls under "Other permissions", so
 * a permission added to the catalog is offered at once.
 */

export interface PermissionGroup {
  title: string;
  /** What a person holding the group's permissions manages. */
  description: string;
  /** The permissions, as `action:namespace`, in the order shown. */
  permissions: string[];
}

export const PERMISSION_GROUPS: PermissionGroup[] = [
  {
    title: 'Members',
    description: 'Who is in the organization and its teams: adding and removing members, seeing who they are.',
    permissions: ['admin:org', 'add:team', 'remove:team', 'add:team-member', 'remove:team-member', 'list:team-members', 'view:team-member'],
  },
  {
    title: 'Teams',
    description: 'The organization’s teams: listing and viewing them, creating, editing and deleting them.',
    permissions: ['list:team', 'view:team', 'create:team', 'edit:team', 'delete:team'],
  },
  {
    title: 'Roles',
    description: 'Custom roles such as this one: viewing them and who holds them, creating, editing and deleting them.',
    permissions: ['view:role', 'viewer:role', 'create_role:org', 'edit:role', 'delete:role'],
  },
  {
    title: 'Clusters',
    description: 'The organization’s hub clusters: enrolling them.',
    permissions: ['create:cluster'],
  },
  {
    title: 'Contracts and licenses',
    description:
      'The organization’s contracts: reading them and their audit events, binding clusters, their preferences, and issuing licenses.',
    permissions: ['view_contracts:contract_mgmt', 'add_cluster:contract_mgmt', 'updated_preferences:contracts', 'issue-license:cluster'],
  },
  {
    title: 'Tokens',
    description: 'Credentials of the organization: its access tokens, message-bus tokens and the multi-cluster-manager sync token.',
    permissions: [
      'list:access-token',
      'delete:access-token',
      'list:bus-token',
      'revoke:bus-token',
      'view:sync-token',
      'create:manager-org-sync-token',
      'remove:manager-sync-token',
    ],
  },
  {
    title: 'Organization profile',
    description: 'The organization itself: its options, branding and avatar.',
    permissions: ['edit:org', 'edit_branding_options:org', 'view:avatar', 'update:avatar', 'delete:avatar'],
  },
];

/** Where a catalog entry no group names is offered. */
export const OTHER_GROUP: Omit<PermissionGroup, 'permissions'> = {
  title: 'Other permissions',
  description: 'Permissions of the catalog not sorted into the areas above.',
};

export interface RolePreset {
  name: string;
  description: string;
  /** The permissions it checks, as `action:namespace`; `'all'` for every permission of the catalog. */
  permissions: string[] | 'all';
}

/** Seeing everything a member may read, changing nothing; no credentials. */
const VIEWER = [
  'list:team',
  'view:team',
  'list:team-members',
  'view:team-member',
  'view:role',
  'viewer:role',
  'view_contracts:contract_mgmt',
  'view:avatar',
];

/**
 * The starting points the form offers. Viewer reads; Editor also changes the organization's own profile, its clusters
 * and contracts and issues licenses, but not who is in it, its teams, roles or credentials; Admin is every permission a
 * custom role may carry (all but changing the owners and deleting the organization, which stay with its owners).
 */
export const ROLE_PRESETS: RolePreset[] = [
  { name: 'Viewer', description: 'Sees teams, members, roles, contracts and the avatar; changes nothing.', permissions: VIEWER },
  {
    name: 'Editor',
    description: 'A viewer who also edits the organization’s profile, enrolls clusters, binds them to contracts and issues licenses.',
    permissions: [
      ...VIEWER,
      'edit:org',
      'edit_branding_options:org',
      'update:avatar',
      'delete:avatar',
      'create:cluster',
      'add_cluster:contract_mgmt',
      'updated_preferences:contracts',
      'issue-license:cluster',
    ],
  },
  {
    name: 'Admin',
    description:
      'Every permission a custom role may carry: members, teams, roles and tokens too; not the owners or deleting the organization.',
    permissions: 'all',
  },
];

/** The catalog's entries by group, in the groups' order, each group's in its own; empty groups left out. */
export function groupCatalog<P extends { namespace: string; action: string }>(
  catalog: P[],
): (Omit<PermissionGroup, 'permissions'> & { entries: P[] })[] {
  const named = (p: P) => `${p.action}:${p.namespace}`;
  const byName = new Map(catalog.map((p) => [named(p), p]));
  const placed = new Set(PERMISSION_GROUPS.flatMap((g) => g.permissions));
  const groups = PERMISSION_GROUPS.map(({ permissions, ...group }) => ({
    ...group,
    entries: permissions.map((name) => byName.get(name)).filter((p): p is P => p !== undefined),
  }));
  const rest = catalog.filter((p) => !placed.has(named(p)));
  return [...groups, { ...OTHER_GROUP, entries: rest }].filter((g) => g.entries.length > 0);
}
