import { z } from 'zod';
import type { marketplaceListenerV1 } from '@platform/proto';
import { sectionRoutes, type Route } from '../../route';
import { MeteringReadiness, readinessJson } from '../marketplaces/metered-billing';

// The marketplace rows of the admin billing dashboard (`/dashboard/marketplaces`,
// docs/marketplaces.md): billing-enabled deployments, `org` required, view_marketplace_usage:site_admin.
// Subscriptions, their revocation, the metering ping, audit logs by period, and configuration warnings.

const route = sectionRoutes({ tag: 'Marketplaces', backend: 'marketplace-listener' });
const common = {
  auth: 'token' as const,
  gate: 'billing' as const,
  org: 'required' as const,
  requires: [{ on: 'site' as const, permission: 'view_marketplace_usage:site_admin' as const }],
};

const Subscription = z
  .object({
    marketplace: z.enum(['ProviderA', 'ProviderB', 'ProviderC']),
    subscriptionId: z.string(),
    subscriberId: z.number().int().meta({ description: 'The standalone organization made for the subscriber; 0 until provisioned' }),
    requesterId: z.number().int().meta({ description: 'Who created that organization (the platform admin); 0 until provisioned' }),
    boundedInstallerId: z.string(),
    state: z.enum(['Pending', 'Bounded', 'Running', 'Failed', 'Deleting', 'DeletionFailed', 'Deleted', 'Revoked']),
    isRevocable: z.boolean(),
    noOfBillingEventSent: z.number().int(),
    createdAt: z.string().meta({ description: 'RFC3339' }),
    lastUpdatedAt: z.string().meta({ description: 'RFC3339' }),
  })
  .meta({ id: 'MarketplaceSubscription' });

const BillingDetails = z.record(z.string(), z.unknown());
const SubscriptionWithDetails = Subscription.extend({
  providerABillingDetails: BillingDetails.optional(),
  providerBBillingDetails: BillingDetails.optional(),
  providerCBillingDetails: BillingDetails.optional(),
}).meta({ id: 'MarketplaceSubscriptionDetail' });

const AuditEvent = z
  .object({
    marketplace: z.string(),
    subscriptionID: z.string(),
    status: z.string().meta({ description: 'Succeeded, Replayed, Ignored or Failed' }),
    operationType: z.string(),
    description: z.string(),
    data: z.unknown().meta({ description: 'Free-form: the notification without secrets and the HTTP status answered' }),
    timestamp: z.string().meta({ description: 'RFC3339' }),
  })
  .meta({ id: 'MarketplaceAuditEvent' });

const AuditReportsResp = z
  .object({
    auditReports: z
      .record(z.string(), z.array(AuditEvent))
      .meta({ description: 'By audit period (UTC month, YYYY-MM), newest first; entries oldest first' }),
  })
  .meta({ id: 'AuditReportsResp' });

const SettingWarnings = z
  .object({
    warnings: z
      .record(z.string(), z.array(z.object({ Level: z.enum(['Error', 'Warning']), Msg: z.string() })))
      .meta({ description: 'Per marketplace (every one listed, maybe empty): Error when a feature cannot work, Warning otherwise' }),
  })
  .meta({ id: 'SettingWarnings' });

const SubscriptionParams = z.object({
  marketplace: z.string().meta({ description: 'ProviderA, ProviderB or ProviderC (400 otherwise)' }),
  subscriptionId: z.string().max(255),
});

const iso = (ms: number) => new Date(Number(ms)).toISOString();

const subscriptionJson = (s: marketplaceListenerV1.Subscription): z.input<typeof Subscription> => ({
  marketplace: s.marketplace as z.infer<typeof Subscription>['marketplace'],
  subscriptionId: s.subscriptionId,
  subscriberId: Number(s.subscriberId),
  requesterId: Number(s.requesterId),
  boundedInstallerId: s.boundedInstallerId,
  state: s.state as z.infer<typeof Subscription>['state'],
  isRevocable: s.isRevocable,
  noOfBillingEventSent: Number(s.noOfBillingEventSent),
  createdAt: iso(Number(s.createdMs)),
  lastUpdatedAt: iso(Number(s.lastUpdatedMs)),
});

/** One subscription with its provider's billing-detail object (the spec names them per provider). */
const detailJson = (s: marketplaceListenerV1.Subscription): z.input<typeof SubscriptionWithDetails> => ({
  ...subscriptionJson(s),
  [`${s.marketplace.charAt(0).toLowerCase()}${s.marketplace.slice(1)}BillingDetails`]: JSON.parse(s.billingDetailsJson || '{}'),
});

export const dashboardMarketplaceRoutes: Route[] = [
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/marketplaces/subscriptions',
    summary: 'Marketplace subscriptions, most recently updated first (billing details omitted)',
    response: { status: 200, schema: z.array(Subscription) },
    async handle(_input, { kept }) {
      const list = await kept.marketplaceListener.listener.listSubscriptions({ marketplace: '' });
      return { body: list.subscriptions.map(subscriptionJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/marketplaces/settings/warnings',
    summary: 'What is missing or wrong in each marketplace’s configuration',
    response: { status: 200, schema: SettingWarnings },
    async handle(_input, { kept }) {
      const out = await kept.marketplaceListener.listener.getSettingWarnings({});
      return {
        body: {
          warnings: Object.fromEntries(
            out.marketplaces.map((m) => [m.marketplace, m.warnings.map((w) => ({ Level: w.level as 'Error' | 'Warning', Msg: w.msg }))]),
          ),
        },
      };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/marketplaces/:marketplace/:subscriptionId',
    summary: 'One marketplace subscription with its billing details',
    params: SubscriptionParams,
    errors: [{ status: 400, description: 'for an unknown subscription or marketplace' }],
    response: { status: 200, schema: SubscriptionWithDetails },
    async handle({ params }, { kept }) {
      return { body: detailJson(await kept.marketplaceListener.listener.getSubscription(params)) };
    },
  }),
  route({
    ...common,
    method: 'delete',
    scope: 'write:organization',
    path: '/dashboard/marketplaces/:marketplace/:subscriptionId',
    summary: 'Revoke a marketplace subscription and its contracts',
    params: SubscriptionParams,
    errors: [{ status: 400, description: 'for an unknown subscription or marketplace, or one not revocable' }],
    response: { status: 200, schema: SubscriptionWithDetails },
    async handle({ params }, { backends, caller }) {
      const revoked = await backends.marketplaceListener.listener.revokeSubscription({ ...params, actor: caller.login });
      return { body: detailJson(revoked) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/marketplaces/:marketplace/:subscriptionId/ping',
    summary: 'Whether the subscription’s metering readiness answers (first and third providers)',
    params: SubscriptionParams,
    errors: [{ status: 400, description: 'for an unknown subscription, the second provider, or a readiness that does not answer' }],
    response: { status: 200, schema: MeteringReadiness },
    async handle({ params }, { backends }) {
      return { body: readinessJson(await backends.marketplaceListener.listener.pingSubscription(params)) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/marketplaces/:marketplace/:subscriptionId/audit-logs',
    summary: 'A marketplace subscription’s audit log by audit period',
    params: SubscriptionParams,
    errors: [{ status: 400, description: 'for an unknown subscription or marketplace' }],
    response: { status: 200, schema: AuditReportsResp },
    async handle({ params }, { kept }) {
      const out = await kept.marketplaceListener.listener.listAuditReports(params);
      return {
        body: {
          auditReports: Object.fromEntries(
            out.periods.map((p) => [
              p.period,
              p.events.map((e) => ({
                marketplace: e.marketplace,
                subscriptionID: e.subscriptionId,
                status: e.status,
                operationType: e.operationType,
                description: e.description,
                data: JSON.parse(e.dataJson || '{}') as unknown,
                timestamp: iso(Number(e.timestampMs)),
              })),
            ]),
          ),
        },
      };
    },
  }),
];
