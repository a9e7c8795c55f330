import { NavLink, useLocation } from 'react-router';
import { useOrgAllowed } from '../areas/orgs/api';
import { Refusal } from './no-access';

type Can = (relation: string) => boolean;

/**
 * The screens of one organization, as tabs every org screen shows above its content, each with the relation on the
 * organization (docs/permissions.md) that its screen's routes check, and who holds it in words: a tab is shown only
 * to a caller holding it, as allowed-permissions answers, so a member is not offered screens the API would refuse them
 * (403), and a screen opened by its URL anyway is the "no access" page, not a screen drawn around a refusal.
 */
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

/**
 * The tab whose own screen a console path is (`/orgs/demo/usage` → Usage). A page under a tab (a team, a hub, a
 * service account) is not: its routes check relations on its own object, and its refusal is the API's.
 */
function tabOf(pathname: string, base: string): (typeof ORG_TABS)[number] | undefined {
  const rest = pathname === base ? '' : pathname.startsWith(`${base}/`) ? pathname.slice(base.length + 1).replace(/\/$/, '') : undefined;
  return rest === undefined ? undefined : ORG_TABS.find(([segment]) => segment === rest);
}

export function OrgNav({ org }: { org: string }) {
  const base = `/orgs/${encodeURIComponent(org)}`;
  const can = useOrgAllowed(org);
  const tab = tabOf(useLocation().pathname, base);
  // The screen's tab is not the caller's: the whole screen is the "no access" page (the shell's boundary catches this).
  if (can.known && tab && !tab[2](can)) throw new Refusal(`${tab[1]} of ${org}`, tab[3](org));
  return (
    <>
      <h1>{org}</h1>
      <nav className="tabs" aria-label={`Organization ${org}`}>
        {ORG_TABS.filter(([, , shown]) => shown(can)).map(([segment, label]) => (
          <NavLink key={segment} to={segment ? `${base}/${segment}` : base} end={!segment}>
            {label}
          </NavLink>
        ))}
      </nav>
    </>
  );
}
