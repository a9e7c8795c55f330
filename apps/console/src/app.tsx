import { lazy, Suspense, type ReactNode } from 'react';
import { Link, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { appNameOf, useBranding } from './branding';
import { RESET_PASSWORD_PATH, ResetPassword } from './password-reset';
import { useSession } from './session';
import { SignIn } from './sign-in';
import { ActionScope } from './ui/last-action';
import { NoAccess, ScreenAccess } from './ui/no-access';
import { NotFound } from './ui/not-found';

// One chunk per area: the first load carries the shell and the sign-in only.
const OrgsArea = lazy(() => import('./areas/orgs'));
const ClustersArea = lazy(() => import('./areas/clusters'));
const OrgContractsArea = lazy(() => import('./areas/contracts').then((m) => ({ default: m.OrgContracts })));
const AdminContractsArea = lazy(() => import('./areas/contracts').then((m) => ({ default: m.AdminContracts })));
const BillingArea = lazy(() => import('./areas/billing'));
const OrgUsageArea = lazy(() => import('./areas/billing').then((m) => ({ default: m.OrgUsage })));
const AdminArea = lazy(() => import('./areas/admin'));
const OrgServiceAccountsArea = lazy(() => import('./areas/service-accounts').then((m) => ({ default: m.OrgServiceAccounts })));
const AdminServiceAccountsArea = lazy(() => import('./areas/service-accounts').then((m) => ({ default: m.AdminServiceAccounts })));
const AccountArea = lazy(() => import('./areas/account'));
const OrgNotificationsArea = lazy(() => import('./areas/notifications').then((m) => ({ default: m.OrgNotifications })));
const AdminNotificationsArea = lazy(() => import('./areas/notifications').then((m) => ({ default: m.AdminNotifications })));

/** What site admins see beyond an org owner; the API refuses the same routes to anyone else. */
export const ADMIN_SCREENS: [path: string, label: string][] = [
  ['/admin/users', 'Users'],
  ['/admin/orgs', 'All organizations'],
  ['/admin/audit', 'Audit events'],
  ['/admin/billing', 'Billing'],
  ['/admin/contracts', 'Contracts'],
  ['/admin/client-orgs', 'Client organizations'],
  ['/admin/outages', 'System outages'],
  ['/admin/marketplace', 'Marketplace'],
  ['/admin/service-accounts', 'Service accounts'],
  ['/admin/notifications', 'Notifications'],
  ['/admin/settings', 'Site settings'],
];

export function App() {
  const { session, restoring } = useSession();
  const location = useLocation();
  if (restoring) return <p aria-busy="true">Loading…</p>;
  // A mailed reset link opens its page whether or not someone is signed in here.
  if (location.pathname === RESET_PASSWORD_PATH) return <ResetPassword />;
  if (!session) return <SignIn from={location.pathname === '/signin' ? '/' : location.pathname + location.search} />;
  const admin = session.user.is_admin === true;
  const adminOnly = (element: ReactNode) => (admin ? element : <NoAccess who="site admins" />);
  return (
    <Shell admin={admin}>
      <ScreenAccess>
        <Suspense fallback={<p aria-busy="true">Loading…</p>}>
          <Routes>
            <Route path="/" element={<Navigate to="/orgs" replace />} />
            <Route path="/signin" element={<Navigate to="/orgs" replace />} />
            <Route path="/orgs/:org/clusters/*" element={<ClustersArea />} />
            <Route path="/orgs/:org/contracts/*" element={<OrgContractsArea />} />
            <Route path="/orgs/:org/service-accounts/*" element={<OrgServiceAccountsArea />} />
            <Route path="/orgs/:org/notifications/*" element={<OrgNotificationsArea />} />
            <Route path="/orgs/:org/usage/*" element={<OrgUsageArea />} />
            <Route path="/orgs/*" element={<OrgsArea />} />
            <Route path="/account" element={<AccountArea />} />
            <Route path="/admin/billing/*" element={adminOnly(<BillingArea />)} />
            <Route path="/admin/contracts/*" element={adminOnly(<AdminContractsArea />)} />
            <Route path="/admin/service-accounts/*" element={adminOnly(<AdminServiceAccountsArea />)} />
            <Route path="/admin/notifications/*" element={adminOnly(<AdminNotificationsArea />)} />
            <Route path="/admin/*" element={adminOnly(<AdminArea />)} />
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </ScreenAccess>
    </Shell>
  );
}

function Shell({ admin, children }: { admin: boolean; children: ReactNode }) {
  const { branding } = useBranding();
  const { session, signOut } = useSession();
  const inAdmin = useLocation().pathname.startsWith('/admin');
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          {branding?.logo && <img src={branding.logo} alt="" />}
          <span className="app-name">{appNameOf(branding)}</span>
        </Link>
        <nav aria-label="Main">
          <NavLink to="/orgs">Organizations</NavLink>
          {/* One link to the admin screens, whose own tabs list them: eleven links here would wrap the header. */}
          {admin && (
            <Link to={ADMIN_SCREENS[0][0]} className={inAdmin ? 'active' : undefined} aria-current={inAdmin ? 'true' : undefined}>
              Site admin
            </Link>
          )}
        </nav>
        <div className="who">
          <span>
            <NavLink to="/account" title="Your account">
              {session?.user.login}
            </NavLink>
            {admin && <span className="tag"> site admin</span>}
          </span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {admin && inAdmin && (
          <nav className="tabs" aria-label="Site admin screens">
            {ADMIN_SCREENS.map(([path, label]) => (
              <NavLink key={path} to={path}>
                {label}
              </NavLink>
            ))}
          </nav>
        )}
        <ActionScope>{children}</ActionScope>
      </main>
      <footer className="foot">
        {/* Plain links: the API reference is the gateway's page, not a console screen. */}
        <a href="/api/v1/docs/">API reference</a> · <a href="/api/v1/openapi.json">API document</a>
      </footer>
    </div>
  );
}
