import { z } from 'zod';
import { UnavailableError } from '@platform/errors';
import type { marketplaceListenerV1 } from '@platform/proto';
import { sectionRoutes, type Route } from '../../route';

// The metered-billing proxy (docs/marketplaces.md): a site admin reports a subscription's usage to
// its marketplace's metering service, or asks whether that service would take it. The first provider's pair
// exists only on ProviderAMarketplace deployments, the third's only on ProviderCMarketplace (404 elsewhere).
// The spec gives no bodies; these are ours, documented in docs/marketplaces.md.

const route = sectionRoutes({ tag: 'Marketplaces', backend: 'marketplace-listener' });
const ADMIN = [{ on: 'site' as const, permission: 'admin:site' as const }];
const BASE = '/proxy/metered-billing/marketplaces';

const UsageRecord = z
  .object({
    dimension: z.string().meta({ description: 'A pricing dimension of the listing: 1-100 letters, digits, ".", "_" or "-"' }),
    quantity: z.number().int().meta({ description: 'Units used, 0 to 2147483647' }),
    timestamp: z.iso
      .datetime({ offset: true, error: 'must be an RFC3339 date-time' })
      .optional()
      .meta({ description: 'RFC3339, within the last 24 hours, kept to the second; default now' }),
  })
  .meta({ id: 'MeteredUsageRecord' });

const ReportUsageRequest = z
  .object({
    subscriptionId: z.string().min(1).max(255).meta({ description: 'The marketplace subscription whose customer is billed' }),
    usage: z.array(UsageRecord).meta({ description: '1 to 1000 records; no two with the same dimension and timestamp' }),
    consumerId: z
      .string()
      .max(140)
      .optional()
      .meta({ description: 'Third provider only: the Service Control consumer (`project:<id>`); default the subscription’s' }),
  })
  .meta({ id: 'MeteredUsageReport' });

const UsageResult = z
  .object({
    dimension: z.string(),
    quantity: z.number().int(),
    timestamp: z.string().meta({ description: 'RFC3339' }),
    status: z.enum(['Success', 'DuplicateRecord', 'CustomerNotSubscribed', 'Failed']),
    recordId: z.string().meta({ description: 'AWS MeteringRecordId, or the Service Control operationId; empty when not sent' }),
    message: z.string().meta({ description: 'Why a record failed; empty otherwise' }),
  })
  .meta({ id: 'MeteredUsageResult' });

const ReportUsageResponse = z
  .object({
    marketplace: z.string(),
    subscriptionId: z.string(),
    sent: z.number().int().meta({ description: 'Records the provider accepted (status Success) in this request' }),
    noOfBillingEventSent: z.number().int().meta({ description: 'The subscription’s total after this request' }),
    results: z.array(UsageResult).meta({ description: 'One per record, in the order sent' }),
  })
  .meta({ id: 'MeteredUsageResponse' });

export const MeteringReadiness = z
  .object({
    marketplace: z.string(),
    ready: z.boolean(),
    message: z.string().meta({ description: 'What the provider answered, or why it is not ready' }),
  })
  .meta({ id: 'MeteringReadiness' });

const ReadinessQuery = z.object({
  subscriptionId: z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Check for this subscription’s customer (third provider: its consumer)' }),
});

export const readinessJson = (r: marketplaceListenerV1.Readiness) => ({ marketplace: r.marketplace, ready: r.ready, message: r.message });

/** The report-usage and readiness rows of one provider, behind its own deployment gate. */
function providerRoutes(slug: 'providera' | 'providerc', marketplace: 'ProviderA' | 'ProviderC', api: string): Route[] {
  return [
    route({
      method: 'post',
      scope: 'write:organization',
      path: `${BASE}/${slug}/report-usage`,
      // A deployment's usage report, sent every period: billing data, not an administrative change.
      audit: false,
      summary: `Report a subscription's metered usage to ${marketplace} (${api})`,
      auth: 'token',
      gate: slug,
      requires: ADMIN,
      body: { schema: ReportUsageRequest },
      errors: [{ status: 422, description: 'for an unknown, revoked or deleted subscription, or records out of bounds' }],
      response: { status: 200, schema: ReportUsageResponse },
      async handle({ body }, { backends }) {
        const out = await backends.marketplaceListener.listener.reportUsage({
          marketplace,
          subscriptionId: body.subscriptionId,
          consumerId: body.consumerId ?? '',
          records: body.usage.map((u) => ({
            dimension: u.dimension,
            quantity: u.quantity,
            timestampMs: u.timestamp ? Date.parse(u.timestamp) : 0,
          })),
        });
        return {
          body: {
            marketplace: out.marketplace,
            subscriptionId: out.subscriptionId,
            sent: Number(out.sent),
            noOfBillingEventSent: Number(out.noOfBillingEventSent),
            results: out.results.map((r) => ({
              dimension: r.dimension,
              quantity: Number(r.quantity),
              timestamp: new Date(Number(r.timestampMs)).toISOString(),
              status: r.status as z.infer<typeof UsageResult>['status'],
              recordId: r.recordId,
              message: r.message,
            })),
          },
        };
      },
    }),
    route({
      method: 'get',
      scope: 'read:organization',
      path: `${BASE}/${slug}/check/readiness`,
      summary: `Whether ${marketplace}'s metering would take usage reports`,
      auth: 'token',
      gate: slug,
      requires: ADMIN,
      query: ReadinessQuery,
      errors: [
        { status: 400, description: 'for an unknown subscription' },
        { status: 503, description: '{message} when the provider is not ready' },
      ],
      response: { status: 200, schema: MeteringReadiness },
      async handle({ query }, { backends }) {
        const r = await backends.marketplaceListener.listener.checkReadiness({ marketplace, subscriptionId: query.subscriptionId ?? '' });
        // A readiness check that fails must read as a failure to probes and scripts, not as a 200 to parse.
        if (!r.ready) throw new UnavailableError(`${marketplace} metering is not ready: ${r.message}`);
        return { body: readinessJson(r) };
      },
    }),
  ];
}

export const meteredBillingRoutes: Route[] = [
  ...providerRoutes('providera', 'ProviderA', 'AWS Marketplace Metering BatchMeterUsage'),
  ...providerRoutes('providerc', 'ProviderC', 'Google Service Control services.report'),
];
