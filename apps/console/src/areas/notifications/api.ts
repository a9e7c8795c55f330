import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';

/**
 * The notifications area's server state (docs/notifications.md). Webhook endpoints and their delivery log are
 * reached through one of two sides of the API: the site's (`/admin/notifications/...`, site admins, every
 * contract), which also has the notice mails sent or kept, and an organization's (`/orgs/{orgname}/notifications/...`,
 * its owners and site admins, its contracts). The screens are the same on both sides; only the routes differ.
 */

export type WebhookEndpoint = Schema<'WebhookEndpoint'>;
export type CreatedWebhookEndpoint = Schema<'CreatedWebhookEndpoint'>;
export type WebhookDelivery = Schema<'WebhookDelivery'>;
export type NoticeMail = Schema<'NoticeMail'>;
export type NoticeEvent = 'quota.threshold' | 'contract.expiring';

/** The events an endpoint may ask for, with what the console calls them. */
export const EVENTS: [event: NoticeEvent, label: string][] = [
  ['quota.threshold', 'Quota threshold reached'],
  ['contract.expiring', 'Contract ending (30, 7 and 1 days before)'],
];

/** How many deliveries and mails a list shows, newest first (the API's most). */
const LATEST = 200;

export interface NoticeRoutes {
  /** The organization whose endpoints these are; null on the site's side. */
  org: string | null;
  /** The query key every answer of this side is kept under (a change invalidates it all). */
  key: readonly unknown[];
  endpoints(): Promise<WebhookEndpoint[]>;
  /** A new endpoint: its signing secret is in this answer only. */
  create(body: { url: string; events: NoticeEvent[] }): Promise<CreatedWebhookEndpoint>;
  setEnabled(id: number, enabled: boolean): Promise<WebhookEndpoint>;
  remove(id: number): Promise<void>;
  deliveries(): Promise<WebhookDelivery[]>;
}

/** An organization's side: for its owners and site admins. */
export function orgRoutes(org: string): NoticeRoutes {
  const inOrg = { path: { orgname: org } };
  const one = (id: number) => ({ path: { orgname: org, id } });
  return {
    org,
    key: ['orgs', org, 'notifications'],
    endpoints: () => ok(api.GET('/orgs/{orgname}/notifications/webhooks', { params: inOrg })),
    create: (body) => ok(api.POST('/orgs/{orgname}/notifications/webhooks', { params: inOrg, body })),
    setEnabled: (id, enabled) => ok(api.PATCH('/orgs/{orgname}/notifications/webhooks/{id}', { params: one(id), body: { enabled } })),
    remove: async (id) => {
      await ok(api.DELETE('/orgs/{orgname}/notifications/webhooks/{id}', { params: one(id) }));
    },
    deliveries: () => ok(api.GET('/orgs/{orgname}/notifications/deliveries', { params: { ...inOrg, query: { limit: LATEST } } })),
  };
}

/** The site's side: for site admins. */
export const siteRoutes: NoticeRoutes = {
  org: null,
  key: ['admin', 'notifications'],
  endpoints: () => ok(api.GET('/admin/notifications/webhooks')),
  create: (body) => ok(api.POST('/admin/notifications/webhooks', { body })),
  setEnabled: (id, enabled) => ok(api.PATCH('/admin/notifications/webhooks/{id}', { params: { path: { id } }, body: { enabled } })),
  remove: async (id) => {
    await ok(api.DELETE('/admin/notifications/webhooks/{id}', { params: { path: { id } } }));
  },
  deliveries: () => ok(api.GET('/admin/notifications/deliveries', { params: { query: { limit: LATEST } } })),
};

export const useEndpoints = (routes: NoticeRoutes) => useQuery({ queryKey: [...routes.key, 'webhooks'], queryFn: () => routes.endpoints() });
export const useDeliveries = (routes: NoticeRoutes) =>
  useQuery({ queryKey: [...routes.key, 'deliveries'], queryFn: () => routes.deliveries() });
/** The notice mails sent or kept (site admins only). */
export const useMails = () =>
  useQuery({
    queryKey: [...siteRoutes.key, 'mails'],
    queryFn: () => ok(api.GET('/admin/notifications/mails', { params: { query: { limit: LATEST } } })),
  });

// Changes invalidate everything of their side: enabling an endpoint sends its pending deliveries, deleting one
// removes its deliveries from the log.
function useNoticeChange<A, R>(routes: NoticeRoutes, change: (args: A) => Promise<R>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSuccess: () => client.invalidateQueries({ queryKey: routes.key }) });
}

export const useCreateEndpoint = (routes: NoticeRoutes) =>
  useNoticeChange(routes, (body: { url: string; events: NoticeEvent[] }) => routes.create(body));
export const useSetEndpointEnabled = (routes: NoticeRoutes) =>
  useNoticeChange(routes, ({ id, enabled }: { id: number; enabled: boolean }) => routes.setEnabled(id, enabled));
export const useDeleteEndpoint = (routes: NoticeRoutes) => useNoticeChange(routes, (id: number) => routes.remove(id));
