/**
 * The screens of one organization, as tabs every org screen shows above its content (`OrgNav`), each with the relation
 * on the organization (docs/permissions.md) that its screen's routes check, and who holds it in words: a tab is shown
 * only to a caller holding it, as allowed-permissions answers, so a member is not offered screens the API would refuse
 * them (403), and a screen opened by its URL anyway is the "no access" page, saying who it is for.
 */

type Can = (relation: string) => boolean;

export const ORG_TABS: [segment: string, label: string, shown: (can: Can) => boolean, who: (org: string) => string][] = [
  ['', 'Members', () => true, (org) => `the members of ${org}`],
  ['teams', 'Teams', (can) => can('list_team'), (org) => `those who may list the teams of ${org}`],
  ['roles', 'Roles', (can) => can('view_role'), (org) => `those who may view the custom roles of ${org}`],
  ['tokens', 'Bus tokens', (can) => can('list_bus_token') || can('list_access_token'), (org) => `those who may list the tokens of ${org}`],
  ['access', 'Who has access', (can) => can('manage_owners'), (org) => `the owners of ${org} and site admins`],
  ['service-accounts', 'Service accounts', (can) => can('manage_owners'), (org) => `the owners of ${org} and site admins`],
  ['clusters', 'Clusters', (can) => can('access'), (org) => `the members of ${org} and site admins`],
  ['contracts', 'Contracts', (can) => can('access'), (org) => `the members of ${org} and site admins`],
  ['notifications', 'Notifications', (can) => can('manage_owners'), (org) => `the owners of ${org} and site admins`],
  ['usage', 'Usage', (can) => can('manage_owners'), (org) => `the owners of ${org} and site admins`],
  [
    'settings',
    'Settings',
    (can) => can('edit') || can('update_avatar') || can('delete_avatar') || can('delete'),
    (org) => `those who may edit ${org}, change its avatar or delete it`,
  ],
];

export type OrgTab = (typeof ORG_TABS)[number];

/**
 * The organization and the tab whose own screen a console path is (`/orgs/demo/usage` → demo's Usage). A page under a
 * tab (a team, a hub, a service account) is not: its routes check relations on its own object.
 */
export function orgTabOf(pathname: string): { org: string; tab: OrgTab } | undefined {
  const m = /^\/orgs\/([^/]+)(?:\/([^/]*))?\/?$/.exec(pathname);
  const tab = m && ORG_TABS.find(([segment]) => segment === (m[2] ?? ''));
  return m && tab ? { org: decodeURIComponent(m[1]), tab } : undefined;
}
