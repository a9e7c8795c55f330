import {
  authzV1,
  authzRolesV1,
  billingDashboardV1,
  clustersV1,
  contractsLicensingV1,
  marketplaceListenerV1,
  metricsproxyV1,
  orgsTeamsV1,
  orgsTeamsOrgsV1,
  orgsTeamsSettingsV1,
  orgsTeamsAvatarsV1,
  orgTokensV1,
  orgClaimsV1,
} from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import type { GatewayConfig } from './config';

/** gRPC clients of every backend app, keyed by app name. */
export interface Backends {
  authz: PromiseClient<typeof authzV1.AuthzServiceService>;
  /** The authz app's RolesService (custom roles, allowed permissions); routes using it name service 'authz'. */
  authzRoles: PromiseClient<typeof authzRolesV1.RolesServiceService>;
  'orgs-teams': PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  /** The orgs-teams app's OrganizationsService (organizations, members, teams); routes using it name service 'orgs-teams'. */
  orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  /** The orgs-teams app's OrgTokensService (sync tokens, system-admin access tokens, bus accounts). */
  orgTokens: PromiseClient<typeof orgTokensV1.OrgTokensServiceService>;
  /** The orgs-teams app's OrgClaimsService (standalone-organization claims). */
  orgClaims: PromiseClient<typeof orgClaimsV1.OrgClaimsServiceService>;
  /** The orgs-teams app's SiteSettingsService (branding, allowed domains, registration); routes name service 'orgs-teams'. */
  siteSettings: PromiseClient<typeof orgsTeamsSettingsV1.SiteSettingsServiceService>;
  /** The orgs-teams app's AvatarsService (organization avatars and their objects); routes name service 'orgs-teams'. */
  avatars: PromiseClient<typeof orgsTeamsAvatarsV1.AvatarsServiceService>;
  'contracts-licensing': PromiseClient<typeof contractsLicensingV1.ContractsLicensingServiceService>;
  'billing-dashboard': PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>;
  metricsproxy: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService>;
  'marketplace-listener': PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;
  clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
}
/** The backend apps; a route names the one answering it, so only its routes answer 503 when it is down. */
export const BACKEND_APPS = [
  'authz',
  'orgs-teams',
  'contracts-licensing',
  'billing-dashboard',
  'metricsproxy',
  'marketplace-listener',
  'clusters',
] as const satisfies readonly (keyof Backends)[];
export type BackendName = (typeof BACKEND_APPS)[number];

/** Opens a channel to each backend; channels connect lazily and reconnect by themselves. */
export function connectBackends(config: GatewayConfig): Backends {
  const opts = (name: string) => ({
    name,
    deadlineMs: config.BACKEND_DEADLINE_MS,
    idempotent: ['getVersion'],
    maxMessageBytes: config.GRPC_MAX_MESSAGE_BYTES,
  });
  return {
    authz: createClient(authzV1.AuthzServiceService, config.AUTHZ_GRPC_ADDR, opts('authz')),
    authzRoles: createClient(authzRolesV1.RolesServiceService, config.AUTHZ_GRPC_ADDR, opts('authz')),
    'orgs-teams': createClient(orgsTeamsV1.OrgsTeamsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    orgs: createClient(orgsTeamsOrgsV1.OrganizationsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    orgTokens: createClient(orgTokensV1.OrgTokensServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    orgClaims: createClient(orgClaimsV1.OrgClaimsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    siteSettings: createClient(orgsTeamsSettingsV1.SiteSettingsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    avatars: createClient(orgsTeamsAvatarsV1.AvatarsServiceService, config.ORGS_TEAMS_GRPC_ADDR, opts('orgs-teams')),
    'contracts-licensing': createClient(
      contractsLicensingV1.ContractsLicensingServiceService,
      config.CONTRACTS_LICENSING_GRPC_ADDR,
      opts('contracts-licensing'),
    ),
    'billing-dashboard': createClient(
      billingDashboardV1.BillingDashboardServiceService,
      config.BILLING_DASHBOARD_GRPC_ADDR,
      opts('billing-dashboard'),
    ),
    metricsproxy: createClient(metricsproxyV1.MetricsproxyServiceService, config.METRICSPROXY_GRPC_ADDR, opts('metricsproxy')),
    'marketplace-listener': createClient(
      marketplaceListenerV1.MarketplaceListenerServiceService,
      config.MARKETPLACE_LISTENER_GRPC_ADDR,
      opts('marketplace-listener'),
    ),
    clusters: createClient(clustersV1.ClustersServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
  };
}

/** Closes every channel. */
export function closeBackends(backends: Backends): void {
  for (const client of Object.values(backends)) client.close();
}
