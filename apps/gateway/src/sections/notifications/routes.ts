import { z } from 'zod';
import type { notificationsV1 } from '@platform/proto';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { orgInPath } from '../../targets';

const route = sectionRoutes({ tag: 'Contracts', backend: 'contracts-licensing' });

// Quota and expiry notices (docs/notifications.md): webhook endpoints of the site (site admins, every contract) and
// of an organization (its owners and site admins, as for its service accounts: manage_owners:org, which no custom role
// carries; its contracts), their delivery log, and the mails sent or kept (site admins).

const EVENTS = ['quota.threshold', 'contract.expiring'] as const;

export const WebhookEndpointJson = z
  .object({
    id: z.number().int(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    disabledReason: z.string().meta({ description: 'Why it was disabled; empty when enabled' }),
    failuresInRow: z.number().int(),
    createdBy: z.string(),
    createdAt: z.string().meta({ description: 'RFC3339' }),
  })
  .meta({ id: 'WebhookEndpoint' });

const CreatedWebhookEndpointJson = WebhookEndpointJson.extend({
  secret: z.string().meta({ description: 'The signing secret (whsec_...), shown this once' }),
}).meta({ id: 'CreatedWebhookEndpoint' });

/** A line of the delivery log: a notice's delivery to one webhook endpoint, or its mail to one recipient. */
export const WebhookDeliveryJson = z
  .object({
    id: z.number().int().meta({ description: 'Unique within its channel' }),
    channel: z.enum(['webhook', 'mail']).meta({ description: "'webhook': a delivery to an endpoint; 'mail': a notice's mail to one recipient" }),
    endpointId: z.number().int().meta({ description: '0 for a mail' }),
    url: z.string().meta({ description: "The endpoint's URL; empty for a mail" }),
    recipient: z.string().meta({ description: "A mail's recipient; empty for a webhook delivery" }),
    event: z.string(),
    status: z
      .enum(['pending', 'delivered', 'failed'])
      .meta({ description: 'pending (retried with backoff), delivered (a mail: sent, or kept when no SMTP server is set) or failed (given up)' }),
    attempts: z.number().int(),
    responseCode: z.number().int().meta({ description: 'The last HTTP status; 0 when none came back, and for a mail' }),
    lastError: z.string().meta({ description: "The last failed attempt's error (a mail: the mail server's answer); empty once delivered" }),
    contractId: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    nextAttemptAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

export const NoticeMailJson = z
  .object({
    id: z.number().int(),
    contractId: z.number().int().meta({ description: '0 for a mail about a webhook endpoint' }),
    recipient: z.string(),
    subject: z.string(),
    status: z.enum(['sent', 'kept']),
    text: z.string(),
    html: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: 'NoticeMail' });

const CreateBody = z
  .object({
    url: z
      .string()
      .max(2048)
      .meta({ description: 'https:// only; refused when its host is, or resolves to, an address that is not global unicast' }),
    events: z.array(z.enum(EVENTS)).min(1).max(EVENTS.length),
  })
  .meta({ id: 'CreateWebhookEndpoint' });
// A switch: its value is required and no other key is taken, so a misspelled one changes nothing.
const EnableBody = z.strictObject({ enabled: z.boolean({ error: 'must be true or false' }) }).meta({ id: 'WebhookEndpointEnabled' });
const LimitQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional() });

const iso = (unix: number) => new Date(unix * 1000).toISOString();
const endpointJson = (e: notificationsV1.WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  failuresInRow: e.failuresInRow,
  createdBy: e.createdBy,
  createdAt: iso(e.createdUnix),
});
const deliveryJson = (d: notificationsV1.WebhookDelivery) => ({
  id: d.id,
  // A contracts-licensing of before answers webhook lines only, without a channel.
  channel: d.channel === 'mail' ? ('mail' as const) : ('webhook' as const),
  endpointId: d.endpointId,
  url: d.url,
  recipient: d.recipient,
  event: d.event,
  status: d.status as 'pending',
  attempts: d.attempts,
  responseCode: d.responseCode,
  lastError: d.lastError,
  contractId: d.contractId,
  createdAt: iso(d.createdUnix),
  updatedAt: iso(d.updatedUnix),
  nextAttemptAt: iso(d.nextAttemptUnix),
});
const mailJson = (m: notificationsV1.NoticeMail) => ({
  ...m,
  status: m.status as 'sent',
  createdAt: iso(m.createdUnix),
  createdUnix: undefined,
});

const Org = z.object({ orgname: p.login });
const OrgAndId = Org.extend({ id: p.id });
const Id = z.object({ id: p.id });
const client = (ctx: { backends: { contractsLicensing: { notifications: any } } }) =>
  ctx.backends.contractsLicensing.notifications as import('@platform/service-kit').PromiseClient<
    typeof notificationsV1.NotificationsServiceService
  >;

const list = async (ownerId: number, ctx: any) => ({
  body: (await client(ctx).listWebhookEndpoints({ ownerId })).endpoints.map(endpointJson),
});
async function create(ownerId: number, body: z.infer<typeof CreateBody>, ctx: any) {
  const { endpoint, secret } = await client(ctx).createWebhookEndpoint({
    ownerId,
    url: body.url,
    events: body.events,
    createdBy: ctx.caller.login,
    notifyEmail: ctx.caller.email ?? '',
  });
  return { status: 201, body: { ...endpointJson(endpoint!), secret } };
}
const enable = async (ownerId: number, id: number, enabled: boolean, ctx: any) => ({
  body: endpointJson(await client(ctx).setWebhookEndpointEnabled({ ownerId, id, enabled })),
});
async function remove(ownerId: number, id: number, ctx: any) {
  await client(ctx).deleteWebhookEndpoint({ ownerId, id });
  return { status: 204 };
}
const deliveries = async (ownerId: number, limit: number | undefined, ctx: any) => ({
  body: (await client(ctx).listWebhookDeliveries({ ownerId, limit: limit ?? 50 })).deliveries.map(deliveryJson),
});
const badUrl = {
  status: 422,
  description: 'for a URL that is not https, does not resolve, or is or resolves to an address that is not global unicast',
};
const unknown = { status: 404, description: 'for an unknown endpoint' };
/** An organization's endpoints and deliveries are its owners' (and site admins'), as its Owners team is. */
const ORG_OWNERS = { on: 'target', permission: 'manage_owners:org', denied: 'org ownership required' } as const;

/**
 * The webhook routes of one kind of owner: the site's (owner 0, every contract) or an organization's (its contracts),
 * the same five routes, differing in paths, who may call them and whose endpoints they name.
 */
function webhookRoutes(owner: {
  /** The endpoints' path, and their deliveries'. */
  webhooks: string;
  deliveries: string;
  /** Of the site, of the organization: what the summaries say. */
  of: string;
  /** The contracts its endpoints hear about. */
  contracts: string;
  read: Pick<Route, 'requires' | 'target'> & { scope: Route['scope'] };
  write: Pick<Route, 'requires' | 'target'> & { scope: Route['scope'] };
  params: typeof Org | undefined;
  idParams: typeof Id | typeof OrgAndId;
  ownerId: (ctx: any) => number;
}): Route[] {
  return [
    route({
      auth: 'token',
      ...owner.read,
      ...(owner.params && { params: owner.params }),
      method: 'get',
      path: owner.webhooks,
      summary: `Webhook endpoints hearing about ${owner.contracts}`,
      response: { status: 200, schema: z.array(WebhookEndpointJson) },
      handle: (_input, ctx) => list(owner.ownerId(ctx), ctx),
    }),
    route({
      auth: 'token',
      ...owner.write,
      ...(owner.params && { params: owner.params }),
      method: 'post',
      path: owner.webhooks,
      summary: `Register a webhook endpoint hearing about ${owner.contracts}; its signing secret is answered this once`,
      body: { schema: CreateBody },
      errors: [badUrl],
      response: { status: 201, schema: CreatedWebhookEndpointJson },
      handle: ({ body }, ctx) => create(owner.ownerId(ctx), body, ctx),
    }),
    route({
      auth: 'token',
      ...owner.write,
      method: 'patch',
      path: `${owner.webhooks}/:id`,
      summary: `Enable (its failure count starts again) or disable a webhook endpoint ${owner.of}`,
      params: owner.idParams,
      body: { schema: EnableBody },
      errors: [unknown],
      response: { status: 200, schema: WebhookEndpointJson },
      handle: ({ params, body }, ctx) => enable(owner.ownerId(ctx), params.id, body.enabled, ctx),
    }),
    route({
      auth: 'token',
      ...owner.write,
      method: 'delete',
      path: `${owner.webhooks}/:id`,
      summary: `Remove a webhook endpoint ${owner.of} and its deliveries`,
      params: owner.idParams,
      errors: [unknown],
      response: { status: 204 },
      handle: ({ params }, ctx) => remove(owner.ownerId(ctx), params.id, ctx),
    }),
    route({
      auth: 'token',
      ...owner.read,
      ...(owner.params && { params: owner.params }),
      method: 'get',
      path: owner.deliveries,
      summary: owner.params ? "Deliveries to the organization's webhook endpoints, newest first" : 'The webhook delivery log, newest first',
      query: LimitQuery,
      response: { status: 200, schema: z.array(WebhookDeliveryJson) },
      handle: ({ query }, ctx) => deliveries(owner.ownerId(ctx), query.limit, ctx),
    }),
  ];
}

export const notificationRoutes: Route[] = [
  ...webhookRoutes({
    webhooks: '/admin/notifications/webhooks',
    deliveries: '/admin/notifications/deliveries',
    of: 'of the site',
    contracts: 'every contract',
    read: { requires: [{ on: 'site', permission: 'view_contracts:site_admin' }], scope: 'read:admin' },
    write: { requires: [{ on: 'site', permission: 'update_contracts:site_admin' }], scope: 'write:admin' },
    params: undefined,
    idParams: Id,
    ownerId: () => 0,
  }),
  route({
    auth: 'token',
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    scope: 'read:admin',
    method: 'get',
    path: '/admin/notifications/mails',
    summary: 'The notice mails sent, or kept when no SMTP server is set, newest first',
    query: LimitQuery,
    response: { status: 200, schema: z.array(NoticeMailJson) },
    async handle({ query }, ctx) {
      const { mails } = await client(ctx).listNoticeMails({ ownerId: 0, limit: query.limit ?? 50 });
      return { body: mails.map(mailJson) };
    },
  }),
  ...webhookRoutes({
    webhooks: '/orgs/:orgname/notifications/webhooks',
    deliveries: '/orgs/:orgname/notifications/deliveries',
    of: 'of the organization',
    contracts: "the organization's contracts",
    read: { target: orgInPath, requires: [ORG_OWNERS], scope: 'read:organization' },
    write: { target: orgInPath, requires: [ORG_OWNERS], scope: 'write:organization' },
    params: Org,
    idParams: OrgAndId,
    ownerId: (ctx) => ctx.target.id,
  }),
];
