import { NavLink } from 'react-router';
import { useOrgAllowed } from '../areas/orgs/api';

/**
 * The screens of one organization, as tabs every org screen shows above its content, each with the relation on the
 * organization (docs/permissions.md) that its screen's routes check: a tab is shown only to a caller holding it, as
 * allowed-permissions answers, so a member is not offered screens the API would refuse them (403).
 */
export const ORG_TABS: [segment: string, label: string, shown: (can: (relation: string) => boolean) => boolean][] = [
  ['', 'Members', () => true],
  ['teams', 'Teams', (can) => can('list_team')],
  ['roles', 'Roles', (can) => can('view_role')],
  ['tokens', 'Bus tokens', (can) => can('list_bus_token') || can('list_access_token')],
  ['access', 'Who has access', (can) => can('manage_owners')],
  ['service-accounts', 'Service accounts', (can) => can('manage_owners')],
  ['clusters', 'Clusters', (can) => can('access')],
  ['contracts', 'Contracts', (can) => can('access')],
  ['notifications', 'Notifications', (can) => can('manage_owners')],
  ['usage', 'Usage', (can) => can('manage_owners')],
  ['settings', 'Settings', (can) => can('edit') || can('update_avatar') || can('delete_avatar') || can('delete')],
];

export function OrgNav({ org }: { org: string }) {
  const base = `/orgs/${encodeURIComponent(org)}`;
  const can = useOrgAllowed(org);
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
