import {
  authzV1,
  authzRolesV1,
  billingDashboardV1,
  clustersV1,
  clusterSetsV1,
  featureSetsV1,
  clientOrgsV1,
  contractsLicensingV1,
  contractsV1,
  licensingV1,
  notificationsV1,
  marketplaceListenerV1,
  metricsproxyV1,
  orgsTeamsV1,
  orgsTeamsOrgsV1,
  orgsTeamsSettingsV1,
  orgsTeamsAuditV1,
  orgsTeamsAvatarsV1,
  orgTokensV1,
  orgClaimsV1,
  serviceAccountsV1,
  outagesV1,
  usageReportV1,
  licensedV1,
  eventsV1,
  summaryV1,
} from '@platform/proto';
import { createClient, type CallOptions, type PromiseClient } from '@platform/service-kit';
import type { GatewayConfig } from './config';
import type { DecisionCache } from '@platform/bus';
import { withKeptDecisions } from './kept-decisions';
import { withOrgViews, type OrgViewCache } from './org-views';

/** The gRPC clients of every backend app, grouped by app, named after the app's gRPC services. */
export interface Backends {
  authz: {
    authz: PromiseClient<typeof authzV1.AuthzServiceService>;
    /** Custom roles and allowed permissions. */
    roles: PromiseClient<typeof authzRolesV1.RolesServiceService>;
  };
  orgsTeams: {
    /** Accounts, tokens, authentication. */
    identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
    /** Organizations, members, teams. */
    organizations: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
    /** Sync tokens, system-admin access tokens, bus accounts. */
    orgTokens: PromiseClient<typeof orgTokensV1.OrgTokensServiceService>;
    /** Standalone-organization claims. */
    claims: PromiseClient<typeof orgClaimsV1.OrgClaimsServiceService>;
    /** Branding, allowed domains, registration. */
    siteSettings: PromiseClient<typeof orgsTeamsSettingsV1.SiteSettingsServiceService>;
    /** Organization avatars and their objects. */
    avatars: PromiseClient<typeof orgsTeamsAvatarsV1.AvatarsServiceService>;
    /** The audit trail of administrative changes. */
    audit: PromiseClient<typeof orgsTeamsAuditV1.AuditServiceService>;
    /** Service accounts of organizations and of the site, and their tokens. */
    serviceAccounts: PromiseClient<typeof serviceAccountsV1.ServiceAccountsServiceService>;
  };
  contractsLicensing: {
    /** The app's version (its first service answers GetVersion). */
    licensing: PromiseClient<typeof contractsLicensingV1.ContractsLicensingServiceService>;
    /** Contracts, their clusters and audit events. */
    contracts: PromiseClient<typeof contractsV1.ContractsServiceService>;
    /** License issuing, registration, the revocation list (docs/licensing.md). */
    licenses: PromiseClient<typeof licensingV1.LicensingServiceService>;
    /** Webhook endpoints, their delivery log and the notice mails (docs/notifications.md). */
    notifications: PromiseClient<typeof notificationsV1.NotificationsServiceService>;
  };
  billingDashboard: {
    billing: PromiseClient<typeof billingDashboardV1.BillingDashboardServiceService>;
    /** System outages and their report. */
    outages: PromiseClient<typeof outagesV1.SystemOutagesServiceService>;
    /** Usage reports: generated months, the monthly usage views, quota history, namespace billing. */
    usageReport: PromiseClient<typeof usageReportV1.UsageReportServiceService>;
    /** Licensed users, clusters, licenses and products with their received times. */
    licensed: PromiseClient<typeof licensedV1.LicensedUsageServiceService>;
    /** The licensed-resource rows: resource history asked from the cluster, resource events. */
    events: PromiseClient<typeof eventsV1.ResourceEventsServiceService>;
    /** The month's PDF usage summary (docs/usage-summary-pdf.md). */
    summary: PromiseClient<typeof summaryV1.UsageSummaryServiceService>;
  };
  metricsproxy: { metricsproxy: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService> };
  marketplaceListener: { listener: PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService> };
  clusters: {
    clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
    /** Cluster sets of a hub and their bound namespaces. */
    clusterSets: PromiseClient<typeof clusterSetsV1.ClusterSetsServiceService>;
    /** Feature sets, sync status and auto-update of cluster sets. */
    featureSets: PromiseClient<typeof featureSetsV1.FeatureSetsServiceService>;
    /** Client organizations: their hub, imported clusters and asynchronous cleanup. */
    clientOrgs: PromiseClient<typeof clientOrgsV1.ClientOrgsServiceService>;
  };
}

/** The backend apps; a route names the one answering it, so only its routes answer 503 when it is down. */
export const BACKEND_APPS = {
  authz: 'authz',
  'orgs-teams': 'orgsTeams',
  'contracts-licensing': 'contractsLicensing',
  'billing-dashboard': 'billingDashboard',
  metricsproxy: 'metricsproxy',
  'marketplace-listener': 'marketplaceListener',
  clusters: 'clusters',
} as const satisfies Record<string, keyof Backends>;
export type BackendName = keyof typeof BACKEND_APPS;

/** What the gateway keeps of its backends' answers (none: every call is made). */
export interface KeptAnswers {
  /** orgs-teams' `GetOrg`, as each caller may see the organization. */
  orgViews: OrgViewCache;
  /** authz's `Check` and `CheckPermission`. */
  decisions: DecisionCache;
}

/** Opens a channel to each backend; channels connect lazily and reconnect by themselves. */
export function connectBackends(config: GatewayConfig, kept?: KeptAnswers): Backends {
  const opts = (name: BackendName) => ({
    name,
    deadlineMs: config.BACKEND_DEADLINE_MS,
    idempotent: ['getVersion'],
    maxMessageBytes: config.GRPC_MAX_MESSAGE_BYTES,
  });
  const orgsTeams = config.ORGS_TEAMS_GRPC_ADDR;
  return {
    authz: {
      authz: ((client) => (kept ? withKeptDecisions(client, kept.decisions) : client))(
        createClient(authzV1.AuthzServiceService, config.AUTHZ_GRPC_ADDR, opts('authz')),
      ),
      roles: createClient(authzRolesV1.RolesServiceService, config.AUTHZ_GRPC_ADDR, opts('authz')),
    },
    orgsTeams: {
      identity: createClient(orgsTeamsV1.OrgsTeamsServiceService, orgsTeams, opts('orgs-teams')),
      organizations: ((client) => (kept ? withOrgViews(client, kept.orgViews) : client))(
        createClient(orgsTeamsOrgsV1.OrganizationsServiceService, orgsTeams, opts('orgs-teams')),
      ),
      orgTokens: createClient(orgTokensV1.OrgTokensServiceService, orgsTeams, opts('orgs-teams')),
      claims: createClient(orgClaimsV1.OrgClaimsServiceService, orgsTeams, opts('orgs-teams')),
      siteSettings: createClient(orgsTeamsSettingsV1.SiteSettingsServiceService, orgsTeams, opts('orgs-teams')),
      avatars: createClient(orgsTeamsAvatarsV1.AvatarsServiceService, orgsTeams, opts('orgs-teams')),
      audit: createClient(orgsTeamsAuditV1.AuditServiceService, orgsTeams, opts('orgs-teams')),
      serviceAccounts: createClient(serviceAccountsV1.ServiceAccountsServiceService, orgsTeams, opts('orgs-teams')),
    },
    contractsLicensing: {
      licensing: createClient(
        contractsLicensingV1.ContractsLicensingServiceService,
        config.CONTRACTS_LICENSING_GRPC_ADDR,
        opts('contracts-licensing'),
      ),
      contracts: createClient(contractsV1.ContractsServiceService, config.CONTRACTS_LICENSING_GRPC_ADDR, opts('contracts-licensing')),
      licenses: createClient(licensingV1.LicensingServiceService, config.CONTRACTS_LICENSING_GRPC_ADDR, opts('contracts-licensing')),
      notifications: createClient(
        notificationsV1.NotificationsServiceService,
        config.CONTRACTS_LICENSING_GRPC_ADDR,
        opts('contracts-licensing'),
      ),
    },
    billingDashboard: {
      billing: createClient(
        billingDashboardV1.BillingDashboardServiceService,
        config.BILLING_DASHBOARD_GRPC_ADDR,
        opts('billing-dashboard'),
      ),
      outages: createClient(outagesV1.SystemOutagesServiceService, config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard')),
      usageReport: createClient(usageReportV1.UsageReportServiceService, config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard')),
      licensed: createClient(licensedV1.LicensedUsageServiceService, config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard')),
      events: createClient(eventsV1.ResourceEventsServiceService, config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard')),
      summary: createClient(summaryV1.UsageSummaryServiceService, config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard')),
    },
    metricsproxy: {
      metricsproxy: createClient(metricsproxyV1.MetricsproxyServiceService, config.METRICSPROXY_GRPC_ADDR, opts('metricsproxy')),
    },
    marketplaceListener: {
      listener: createClient(
        marketplaceListenerV1.MarketplaceListenerServiceService,
        config.MARKETPLACE_LISTENER_GRPC_ADDR,
        opts('marketplace-listener'),
      ),
    },
    clusters: {
      clusters: createClient(clustersV1.ClustersServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
      clusterSets: createClient(clusterSetsV1.ClusterSetsServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
      featureSets: createClient(featureSetsV1.FeatureSetsServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
      clientOrgs: createClient(clientOrgsV1.ClientOrgsServiceService, config.CLUSTERS_GRPC_ADDR, opts('clusters')),
    },
  };
}

/** The GetVersion client of each backend app (every app's first service answers it), for status pages. */
export function versionClients(backends: Backends): [BackendName, { getVersion: PromiseClient<any>['getVersion'] }][] {
  return (Object.entries(BACKEND_APPS) as [BackendName, keyof Backends][]).map(([name, key]) => [
    name,
    Object.values(backends[key])[0] as { getVersion: PromiseClient<any>['getVersion'] },
  ]);
}

/**
 * The backends as one request sees them: every call carries the request's id and never outlives its
 * deadline, without each handler passing them. The clients are wrapped lazily, on first use.
 */
export function bindBackends(backends: Backends, requestId: string, deadline: number, arrivedAt?: number): Backends {
  const call = (): CallOptions => ({ requestId, deadlineMs: Math.max(1, deadline - Date.now()), arrivedAt });
  const bindClient = (client: object) =>
    new Proxy(client, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (typeof value !== 'function' || prop === 'close') return value;
        return (req: unknown, opts?: CallOptions) => value.call(target, req, { ...call(), ...opts });
      },
    });
  const groups = new Map<PropertyKey, object>();
  return new Proxy(backends, {
    get(target, app) {
      let group = groups.get(app);
      if (!group) {
        const clients = Reflect.get(target, app) as Record<string, object>;
        group = Object.fromEntries(Object.entries(clients).map(([k, c]) => [k, bindClient(c)]));
        groups.set(app, group);
      }
      return group;
    },
  });
}

/** Closes every channel. */
export function closeBackends(backends: Backends): void {
  for (const group of Object.values(backends))
    for (const client of Object.values(group as Record<string, { close(): void }>)) client.close();
}
