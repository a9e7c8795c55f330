import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { api, ok } from '../../api/client';
import { inAdminOrg } from './context';

/**
 * The server state of the site-admin screens beside users, organizations and audit events (admin-users-api.ts):
 * client organizations, outages, the marketplace and site settings, each under `['admin', screen, ...]`, so a change
 * invalidates what its screen shows.
 */
export const siteKeys = {
  clientOrgs: ['admin', 'client-orgs'] as const,
  clientOrgStatus: (name: string) => ['admin', 'client-orgs', name, 'status'] as const,
  outages: ['admin', 'outages'] as const,
  outageReport: (filters: object) => ['admin', 'outages', 'report', filters] as const,
  outageTags: ['admin', 'outages', 'tags'] as const,
  marketplace: ['admin', 'marketplace'] as const,
  subscriptions: ['admin', 'marketplace', 'subscriptions'] as const,
  subscription: (marketplace: string, subscriptionId: string) =>
    ['admin', 'marketplace', 'subscriptions', marketplace, subscriptionId] as const,
  subscriptionAudit: (marketplace: string, subscriptionId: string) =>
    [...siteKeys.subscription(marketplace, subscriptionId), 'audit'] as const,
  marketplaceWarnings: ['admin', 'marketplace', 'warnings'] as const,
  branding: ['admin', 'settings', 'branding'] as const,
  allowedDomains: ['admin', 'settings', 'allowed-domains'] as const,
  registration: ['admin', 'settings', 'registration'] as const,
};

export const useClientOrgs = () => useQuery({ queryKey: siteKeys.clientOrgs, queryFn: () => ok(api.GET('/user/clients')) });
export const useOutageTags = () =>
  useQuery({
    queryKey: siteKeys.outageTags,
    queryFn: () => ok(api.GET('/dashboard/system-outages/tags', { params: { query: inAdminOrg } })),
  });
export const useSubscriptions = () =>
  useQuery({
    queryKey: siteKeys.subscriptions,
    queryFn: () => ok(api.GET('/dashboard/marketplaces/subscriptions', { params: { query: inAdminOrg } })),
  });
export const useMarketplaceWarnings = () =>
  useQuery({
    queryKey: siteKeys.marketplaceWarnings,
    queryFn: () => ok(api.GET('/dashboard/marketplaces/settings/warnings', { params: { query: inAdminOrg } })),
  });
/** Not from the browser's cache: the settings screen shows what is stored now. */
export const useStoredBranding = () =>
  useQuery({ queryKey: siteKeys.branding, queryFn: () => ok(api.GET('/branding', { cache: 'no-store' })) });
export const useAllowedDomains = () => useQuery({ queryKey: siteKeys.allowedDomains, queryFn: () => ok(api.GET('/allowed-domains')) });
export const useRegistration = () => useQuery({ queryKey: siteKeys.registration, queryFn: () => ok(api.GET('/disable-registration')) });

/** A site admin's change: once it succeeds, what `touches` names is asked again wherever it is shown. */
export function useSiteChange<In, Out>(touches: QueryKey, change: (input: In) => Promise<Out>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSuccess: () => client.invalidateQueries({ queryKey: touches }) });
}
