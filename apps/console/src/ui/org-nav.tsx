import { NavLink } from 'react-router';

/** The screens of one organization, as tabs every org screen shows above its content. */
export const ORG_TABS: [segment: string, label: string][] = [
  ['', 'Members'],
  ['teams', 'Teams'],
  ['roles', 'Roles'],
  ['tokens', 'Bus tokens'],
  ['access', 'Who has access'],
  ['service-accounts', 'Service accounts'],
  ['clusters', 'Clusters'],
  ['contracts', 'Contracts'],
  ['notifications', 'Notifications'],
];

export function OrgNav({ org }: { org: string }) {
  const base = `/orgs/${encodeURIComponent(org)}`;
  return (
    <>
      <h1>{org}</h1>
      <nav className="tabs" aria-label={`Organization ${org}`}>
        {ORG_TABS.map(([segment, label]) => (
          <NavLink key={segment} to={segment ? `${base}/${segment}` : base} end={!segment}>
            {label}
          </NavLink>
        ))}
      </nav>
    </>
  );
}
