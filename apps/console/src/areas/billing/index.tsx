import { NavLink, Route, Routes } from 'react-router';
import { ErrorMessage } from '../../ui';
import { useReport } from './api';
import { Choice } from './choice';
import { ClusterScreen, LicenseScreen, LicensedUsersScreen, UserScreen } from './licensed';
import { ProductScreen } from './events';
import { carried, defaultOrg, listOrgNames, useQuery } from './query';
import { UsageScreen } from './usage';

export { OrgUsage } from './org-usage';

/**
 * The site admin's billing dashboard (`/admin/billing/*`): usage reports and the licensed users and clusters.
 * Every route asks for an `org` context (`?org=`, default the demo organization, else the first one), chosen here
 * once for both screens.
 */
export default function BillingArea() {
  const [params, change] = useQuery();
  const orgs = useReport(['orgs'], listOrgNames);
  const org = params.get('org') ?? (orgs.data && defaultOrg(orgs.data));
  const names = orgs.data ?? [];
  const options = (org && !names.includes(org) ? [...names, org] : names).map((n) => [n, n] as const);
  const query = carried(params);
  return (
    <>
      <h1>Billing dashboard</h1>
      <nav className="tabs" aria-label="Billing dashboard">
        <NavLink to={{ pathname: '/admin/billing', search: query }} end>
          Usage
        </NavLink>
        <NavLink to={{ pathname: '/admin/billing/licensed', search: query }}>Licensed users and clusters</NavLink>
      </nav>
      <div className="form">
        <Choice label="Organization context" value={org} options={options} onChange={(o) => change({ org: o })} />
      </div>
      <ErrorMessage error={orgs.error} />
      {org === undefined ? (
        orgs.data && <p className="empty">There is no organization yet: every billing report asks for one as its context.</p>
      ) : (
        <Routes>
          <Route index element={<UsageScreen org={org} />} />
          <Route path="licensed" element={<LicensedUsersScreen org={org} />} />
          <Route path="licensed/users/:uid" element={<UserScreen org={org} />} />
          <Route path="licensed/users/:uid/clusters/:cid" element={<ClusterScreen org={org} />} />
          <Route path="licensed/users/:uid/clusters/:cid/licenses/:lid" element={<LicenseScreen org={org} />} />
          <Route path="licensed/users/:uid/clusters/:cid/licenses/:lid/products/:product" element={<ProductScreen org={org} />} />
          <Route path="*" element={<p>Nothing here in the billing dashboard.</p>} />
        </Routes>
      )}
    </>
  );
}
