import { z } from 'zod';
import type { eventsV1 } from '@platform/proto';
import { sectionRoutes, type Route } from '../../route';
import { ProductParams } from './licensed';

// The licensed-resource rows of the admin billing dashboard (`.../products/{productName}/resources`,
// `events-histories`, `events/`, `events/raw-event`; docs/resource-events.md): billing-enabled deployments only,
// site admins with view_licensed_users:site_admin, `org` required.

const route = sectionRoutes({ tag: 'Billing dashboard', backend: 'billing-dashboard' });
const PRODUCT_PATH = '/dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName';
const access = {
  auth: 'token' as const,
  gate: 'billing' as const,
  org: 'required' as const,
  requires: [{ on: 'site' as const, permission: 'view_licensed_users:site_admin' as const }],
};

const iso = (ms: number) => new Date(ms).toISOString();
/** Unix seconds, the spec's form of a Unix timestamp (integer seconds); the backend keeps milliseconds. */
const unixSeconds = (ms: number) => Math.floor(ms / 1000);
/** A JSON text of the backend as the free-form object it holds; null for none. */
const objectOf = (json: string): Record<string, unknown> | null => (json ? (JSON.parse(json) as Record<string, unknown>) : null);
const FreeForm = z.record(z.string(), z.unknown());

/** The licensed product the path names. */
const refOf = (params: z.output<typeof ProductParams>): eventsV1.LicensedProductRef => ({
  userId: params.uid,
  clusterUid: params.cid,
  licenseId: params.lid,
  product: params.productName,
});

const rfc3339 = z.string().meta({ description: 'RFC3339' });
const timestamp = z.number().int().meta({ format: 'int64', description: 'Unix seconds' });

export const ResourceHistoryValue = z
  .object({
    resourceID: FreeForm.meta({ description: 'Identity of the object (group, kind, namespace, name, ...), free-form' }),
    licenseID: z.string(),
    version: z.number().int().meta({ description: 'Version within the key, from 1' }),
    timestamp,
  })
  .meta({ id: 'ResourceHistoryValue' });

export const ResourceHistoryList = z
  .object({
    items: z.array(
      z.object({
        key: z.string().meta({ description: 'Resource-history key: stable per object' }),
        lastSeen: timestamp,
        values: z.array(ResourceHistoryValue).meta({ description: 'Oldest first' }),
      }),
    ),
  })
  .meta({ id: 'ResourceHistoryList' });

export const ClusterResourceTabularForm = z
  .object({
    key: z.string(),
    version: z.number().int(),
    timestamp,
    partialResource: z.object({ partialObjectMeta: FreeForm.meta({ description: 'The object as metav1.PartialObjectMetadata' }) }),
  })
  .meta({ id: 'ClusterResourceTabularForm' });

export const EventsReport = z
  .object({
    userID: z.number().int(),
    clusterID: z.string(),
    licenseID: z.string(),
    group: z.string().meta({ description: 'The group filter, else the one group of every counted event, else empty' }),
    resource: z.string().meta({ description: 'The resource filter, else the one resource of every counted event, else empty' }),
    resourceID: z.string().meta({
      description: 'The resource-history key of the object: the rid filter, else the one key of every counted event, else empty',
    }),
    totalEvents: z.number().int(),
    eventsTimeHistories: z.array(rfc3339).meta({ description: 'Event times, oldest first' }),
    eventsDurationHours: z.number().meta({ description: 'Last minus first event time, in hours; 0 for fewer than two' }),
    averageEventsPerHour: z.number().meta({ description: 'totalEvents / eventsDurationHours; 0 when the duration is 0' }),
  })
  .meta({ id: 'EventsReport' });

const filter = z.string().max(255).optional();

/** `lastDays`: an integer 1..14; absent: 14. */
const lastDays = z
  .string()
  .optional()
  .transform((text, ctx): number => {
    if (text === undefined || text === '') return 14;
    if (/^\d{1,2}$/.test(text) && Number(text) >= 1 && Number(text) <= 14) return Number(text);
    ctx.addIssue({ code: 'custom', message: 'must be an integer from 1 to 14' });
    return z.NEVER;
  })
  .meta({ type: 'integer', minimum: 1, maximum: 14, description: 'Days back from now; default 14' });

/** An unsigned integer (a resource version). */
const unsigned = z
  .string({ error: 'is required' })
  .regex(/^\d{1,15}$/, 'must be an unsigned integer')
  .transform(Number)
  .meta({ type: 'integer', minimum: 0 });

const valueJson = (v: eventsV1.ResourceHistoryValue): z.input<typeof ResourceHistoryValue> => ({
  resourceID: objectOf(v.resourceIdJson) ?? {},
  licenseID: v.licenseId,
  version: v.version,
  timestamp: unixSeconds(v.timestampMs),
});

export const resourceEventRoutes: Route[] = [
  route({
    ...access,
    method: 'get',
    scope: 'read:organization',
    path: `${PRODUCT_PATH}/resources`,
    summary: "A licensed product's resource history, asked live from the member cluster over the message bus",
    params: ProductParams,
    query: z.object({ group: filter, resource: filter }),
    errors: [
      { status: 404, description: 'when the cluster never reported the product under the license' },
      { status: 504, description: 'naming the cluster when it does not answer in time' },
      { status: 503, description: 'when it declines or cannot answer' },
    ],
    response: { status: 200, schema: ResourceHistoryList },
    async handle({ params, query }, ctx) {
      const { items } = await ctx.backends.billingDashboard.events.getResourceHistory({
        product: refOf(params),
        group: query.group ?? '',
        resource: query.resource ?? '',
      });
      return { body: { items: items.map((i) => ({ key: i.key, lastSeen: unixSeconds(i.lastSeenMs), values: i.values.map(valueJson) })) } };
    },
  }),
  route({
    ...access,
    method: 'get',
    scope: 'read:organization',
    path: `${PRODUCT_PATH}/events-histories`,
    summary: "A licensed product's events report: how many, when, over how many hours, how many an hour",
    params: ProductParams,
    query: z.object({
      group: filter,
      resource: filter,
      rid: z.string().max(1024).optional().meta({ description: 'Resource-history key of one object' }),
    }),
    response: { status: 200, schema: EventsReport },
    async handle({ params, query }, ctx) {
      const r = await ctx.kept.billingDashboard.events.getEventsReport({
        product: refOf(params),
        group: query.group ?? '',
        resource: query.resource ?? '',
        rid: query.rid ?? '',
      });
      return {
        body: {
          userID: params.uid,
          clusterID: params.cid,
          licenseID: params.lid,
          group: r.group,
          resource: r.resource,
          resourceID: r.key,
          totalEvents: r.totalEvents,
          eventsTimeHistories: r.eventTimesMs.map(iso),
          eventsDurationHours: r.eventsDurationHours,
          averageEventsPerHour: r.averageEventsPerHour,
        },
      };
    },
  }),
  route({
    ...access,
    method: 'get',
    scope: 'read:organization',
    path: `${PRODUCT_PATH}/events/`,
    summary: "A licensed product's resource events of the last days, newest first",
    params: ProductParams,
    query: z.object({ lastDays }),
    response: { status: 200, schema: z.array(ClusterResourceTabularForm) },
    async handle({ params, query }, ctx) {
      const { events } = await ctx.kept.billingDashboard.events.listResourceEvents({
        product: refOf(params),
        lastDays: query.lastDays,
      });
      return {
        body: events.map((e) => ({
          key: e.key,
          version: e.version,
          timestamp: unixSeconds(e.timestampMs),
          partialResource: { partialObjectMeta: objectOf(e.partialObjectMetaJson) ?? {} },
        })),
      };
    },
  }),
  route({
    ...access,
    method: 'get',
    scope: 'read:organization',
    path: `${PRODUCT_PATH}/events/raw-event`,
    summary: 'One stored resource event of a licensed product: the value of (key, version)',
    params: ProductParams,
    query: z.object({
      key: z.string({ error: 'is required' }).min(1, 'is required').max(1024).meta({ description: 'Resource-history key' }),
      version: unsigned.meta({ description: 'Version within the key' }),
    }),
    errors: [{ status: 404, description: 'when the product has no such event' }],
    response: { status: 200, schema: ResourceHistoryValue },
    async handle({ params, query }, ctx) {
      const value = await ctx.kept.billingDashboard.events.getRawEvent({
        product: refOf(params),
        key: query.key,
        version: query.version,
      });
      return { body: valueJson(value) };
    },
  }),
];
