import { useMemo } from 'react';
import { Route, Routes, useParams } from 'react-router';
import { ErrorMessage } from '../../ui';
import { NotFound } from '../../ui/not-found';
import { OrgNav } from '../../ui/org-nav';
import { AccountList } from './account-list';
import { AccountPage } from './account-page';
import { orgRoutes, siteRoutes, type AccountRoutes } from './accounts-api';

/**
 * The service-accounts area: an organization's for its owners and site admins (`/orgs/:org/service-accounts/*`)
 * and the site's for site admins (`/admin/service-accounts/*`). Both share the screens, over the API side each uses.
 */

export function OrgServiceAccounts() {
  const org = useParams().org ?? '';
  const routes = useMemo(() => orgRoutes(org), [org]);
  return (
    <>
      <OrgNav org={org} />
      <AccountScreens routes={routes} />
    </>
  );
}

export function AdminServiceAccounts() {
  return (
    <>
      <h1>Service accounts</h1>
      <AccountScreens routes={siteRoutes} />
    </>
  );
}

function AccountScreens({ routes }: { routes: AccountRoutes }) {
  return (
    <Routes>
      <Route index element={<AccountList routes={routes} />} />
      <Route path=":id" element={<Account routes={routes} />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

function Account({ routes }: { routes: AccountRoutes }) {
  const id = Number(useParams().id);
  if (!Number.isSafeInteger(id) || id < 1) return <ErrorMessage error="No such service account: the id is not a positive integer." />;
  // Keyed by the account: a token minted on one account's page is not shown on another's.
  return <AccountPage key={id} routes={routes} id={id} />;
}
