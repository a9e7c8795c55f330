import type { Route } from '../route';
import { auditRoutes } from './audit/routes';
import { authorizationRoutes } from './authorization/routes';
import { clientOrgRoutes } from './client-orgs/routes';
import { clusterSetRoutes } from './cluster-sets/routes';
import { clusterRoutes } from './clusters/routes';
import { adminContractRoutes } from './contracts/admin';
import { resourceEventRoutes } from './dashboard/events';
import { licensedRoutes } from './dashboard/licensed';
import { dashboardMarketplaceRoutes } from './dashboard/marketplaces';
import { systemOutageRoutes } from './dashboard/outages';
import { summaryDownloadRoutes } from './dashboard/summary-download';
import { usageReportRoutes } from './dashboard/usage-report';
import { namespaceBillingRoutes } from './billing/routes';
import { notificationRoutes } from './notifications/routes';
import { userContractRoutes } from './contracts/user';
import { identityRoutes } from './identity/routes';
import { licenseRoutes } from './licenses/routes';
import { marketplaceInstallerRoutes } from './marketplaces/installers';
import { metricsProxyRoutes } from './metricsproxy/routes';
import { meteredBillingRoutes } from './marketplaces/metered-billing';
import { objectRoutes } from './objects/routes';
import { avatarRoutes } from './organizations/avatars';
import { claimsRoutes } from './organizations/claims';
import { importRoutes } from './organizations/import';
import { orgTokensRoutes } from './organizations/org-tokens';
import { organizationRoutes, orgListRoutes } from './organizations/routes';
import { serviceAccountRoutes } from './service-accounts/routes';
import { siteSettingsRoutes } from './site-settings/routes';
import { groupMappingRoutes } from './sign-in/group-mappings';
import { oidcRoutes } from './sign-in/oidc';
import { twoFactorRoutes } from './sign-in/two-factor';
import { teamRoutes } from './teams/routes';
import { versionRoutes } from './version/routes';

/** The whole route table of /api/v1, one folder per area of the API; claims come before `/orgs/{orgname}`. */
export const ROUTES: Route[] = [
  ...versionRoutes,
  ...identityRoutes,
  ...twoFactorRoutes,
  ...oidcRoutes,
  ...groupMappingRoutes,
  ...auditRoutes,
  ...authorizationRoutes,
  ...siteSettingsRoutes,
  ...avatarRoutes,
  ...objectRoutes,
  ...claimsRoutes,
  ...orgListRoutes,
  ...organizationRoutes,
  ...importRoutes,
  ...orgTokensRoutes,
  ...serviceAccountRoutes,
  ...teamRoutes,
  ...clusterRoutes,
  ...clusterSetRoutes,
  ...clientOrgRoutes,
  ...adminContractRoutes,
  ...userContractRoutes,
  ...licenseRoutes,
  ...notificationRoutes,
  ...systemOutageRoutes,
  ...usageReportRoutes,
  ...summaryDownloadRoutes,
  ...namespaceBillingRoutes,
  ...licensedRoutes,
  ...resourceEventRoutes,
  ...marketplaceInstallerRoutes,
  ...metricsProxyRoutes,
  ...dashboardMarketplaceRoutes,
  ...meteredBillingRoutes,
];
