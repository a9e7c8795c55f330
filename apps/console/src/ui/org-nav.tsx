import { NavLink, useLocation } from 'react-router';
import { useOrgAllowed } from '../areas/orgs/api';
import { Refusal } from './no-access';
import { ORG_TABS, orgTabOf } from './org-tabs';

export { ORG_TABS } from './org-tabs';

/** An organization's name and its tabs (`org-tabs.ts`), those the caller's relations show. */
export function OrgNav({ org }: { org: string }) {
  const base = `/orgs/${encodeURIComponent(org)}`;
  const can = useOrgAllowed(org);
  const tab = orgTabOf(useLocation().pathname)?.tab;
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
