import { z } from 'zod';
import { isUuid, PRODUCT_KEYS, USAGE_VIEWS, type UsageViewName, type usageReportV1 } from '@platform/proto';
import { JsonStream, JsonText, sectionRoutes, type Requirement, type Route } from '../../route';
import { MONTH_NAMES, reportMonthParams } from './report-month';

// The usage reports under /dashboard/summary (docs/usage-reports.md): billing-enabled deployments only,
// site admins with view_usage_analytics:site_admin, `org` required. Every view is computed by billing-dashboard
// (UsageReportService) in one SQL statement and streamed through here in pieces (JsonStream), so a view of any size
// passes; the rows here only check the path and query and name the shapes.

const route = sectionRoutes({ tag: 'Usage reports', backend: 'billing-dashboard' });
const ANALYTICS: Requirement<never> = { on: 'site', permission: 'view_usage_analytics:site_admin' };

// ---------------------------------------------------------------------------------------------------------------
// Shapes (UsageView is free-form in the spec; these are ours, documented in docs/usage-reports.md).

/** The quantities every row, total and series point carries (../../../billing-dashboard/src/usage/quantities.ts). */
export const quantities = {
  cpuCoreHours: z.number().meta({ description: 'CPU core-hours: measured use, or the request where use was not measured' }),
  memoryGiBHours: z.number().meta({ description: 'Memory GiB-hours (use, else request)' }),
  storageGiBHours: z.number().meta({ description: 'Storage GiB-hours (use, else request)' }),
  objectHours: z.number().meta({ description: 'Hours the objects were sampled' }),
};

const DailyPoint = z
  .object({ date: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }), ...quantities })
  .meta({ id: 'UsageDailyPoint' });
export const MonthlyPoint = z
  .object({ month: z.string().meta({ description: 'YYYY-MM' }), ...quantities })
  .meta({ id: 'UsageMonthlyPoint' });
/** Present with view_type=daily: the row's quantities per UTC day (a sample counts on the day it starts). */
const daily = { daily: z.array(DailyPoint).optional().meta({ description: 'view_type=daily only: per UTC day, oldest first' }) };

export const UsageTotals = z
  .object({ rows: z.number().int().meta({ description: 'Number of rows' }), ...quantities })
  .meta({ id: 'UsageTotals' });

/** What every monthly view starts with. */
const header = {
  month: z.string().meta({ description: 'YYYY-MM' }),
  product: z.string(),
  view: z.string(),
  viewType: z.enum(['summary', 'daily']),
};

/** An object's identity and sampling span in a row. */
export const objectFields = {
  clusterUID: z.string(),
  clusterName: z.string(),
  namespace: z.string(),
  namespaceUID: z.string(),
  group: z.string(),
  kind: z.string(),
  name: z.string(),
  objectID: z.string().meta({ description: 'Object UID' }),
  version: z.string().meta({ description: "Product version, as the object's last stored sample reports it" }),
  topology: z.string().meta({ description: 'STANDALONE, CLUSTER or UNSPECIFIED' }),
  replicas: z.number().int().meta({ description: 'Most replicas reported' }),
  firstSampleAt: z.string().meta({ description: 'RFC3339: start of the first sample' }),
  lastSampleAt: z.string().meta({ description: 'RFC3339: end of the last sample' }),
};

const view = <S extends z.ZodRawShape>(id: string, row: S, description: string) => {
  const Row = z.object({ ...row, ...quantities, ...daily }).meta({ id: `${id}Row` });
  return z.object({ ...header, rows: z.array(Row).meta({ description }), totals: UsageTotals }).meta({ id });
};

export const ObjectsUsageView = view('ObjectsUsageView', objectFields, 'One row per object, most core-hours first');
export const ClustersUsageView = view(
  'ClustersUsageView',
  {
    clusterUID: z.string(),
    clusterName: z.string(),
    hosting: z.string().meta({ description: 'gks for the hosted Kubernetes service, else the provider' }),
    namespaces: z.number().int(),
    objects: z.number().int(),
  },
  'One row per cluster, most core-hours first',
);
export const NamespacesUsageView = view(
  'NamespacesUsageView',
  { clusterUID: z.string(), clusterName: z.string(), namespace: z.string(), namespaceUID: z.string(), objects: z.number().int() },
  'One row per cluster and namespace, most core-hours first',
);
export const GksUsageView = view(
  'GksUsageView',
  { clusterUID: z.string(), clusterName: z.string(), namespaces: z.number().int(), objects: z.number().int() },
  'One row per cluster hosted on gks, most core-hours first',
);
export const ContractsUsageView = view(
  'ContractsUsageView',
  {
    contractID: z.number().int().meta({ description: '0: usage billed under no contract' }),
    clusters: z.number().int(),
    objects: z.number().int(),
  },
  'One row per contract, most core-hours first',
);
export const ObjectsClusterModeUsageView = view(
  'ObjectsClusterModeUsageView',
  { ...objectFields, replicaHours: z.number().meta({ description: 'Sum of replicas × hours' }) },
  'One row per object in cluster topology, most core-hours first',
);

const peaks = z
  .object({ maxRequest: z.number(), maxLimit: z.number().meta({ description: '0 = unlimited' }), peakUsed: z.number() })
  .meta({ id: 'QuotaPeaks', description: 'millicores (cpu) or bytes' });
export const ObjectQuotaHistorySummariesView = view(
  'ObjectQuotaHistorySummariesView',
  {
    ...objectFields,
    quotaStates: z.number().int().meta({ description: 'Distinct (request, limit) sets of cpu, memory and storage in the month' }),
    cpu: peaks,
    memory: peaks,
    storage: peaks,
  },
  'One row per object, by cluster, namespace and name',
);

const resource = (fields: 'quota' | 'sample') =>
  z
    .object({
      request: z.number(),
      limit: z.number().meta({ description: '0 = unlimited' }),
      ...(fields === 'sample' ? { used: z.number().meta({ description: 'Average use over the sample; 0 = not measured' }) } : {}),
    })
    .meta({ id: fields === 'quota' ? 'ResourceQuota' : 'ResourceSample', description: 'millicores (cpu) or bytes (memory, storage)' });
const Quota = resource('quota');
const Sample = resource('sample');

/** One object's quota periods and samples (the object-quota-history views). */
export const ObjectQuotaHistory = z
  .object({
    object: z
      .object({
        clusterUID: z.string(),
        clusterName: z.string(),
        product: z.string(),
        namespace: z.string(),
        namespaceUID: z.string(),
        group: z.string(),
        kind: z.string(),
        name: z.string(),
        objectID: z.string(),
        version: z.string(),
        topology: z.string(),
      })
      .meta({ description: 'As its last sample reports it' }),
    quotaPeriods: z
      .array(z.object({ from: z.string(), to: z.string(), hours: z.number(), cpu: Quota, memory: Quota, storage: Quota }))
      .meta({ description: 'Runs of consecutive samples with the same requests and limits, oldest first' }),
    samples: z
      .array(z.object({ start: z.string(), end: z.string(), replicas: z.number().int(), cpu: Sample, memory: Sample, storage: Sample }))
      .meta({ description: 'Every sample, oldest first (RFC3339 start and end)' }),
  })
  .meta({ id: 'ObjectQuotaHistory' });

export const MonthObjectQuotaHistory = ObjectQuotaHistory.extend(header).meta({ id: 'MonthObjectQuotaHistory' });

export const ObjectClusterModeUsage = z
  .object({
    ...header,
    ...objectFields,
    ...quantities,
    replicaHours: z.number(),
    daily: z.array(DailyPoint).meta({ description: 'Per UTC day, oldest first' }),
  })
  .meta({ id: 'ObjectClusterModeUsage' });

export const GeneratedDates = z
  .object({
    yearMonthList: z
      .record(z.string(), z.array(z.enum(MONTH_NAMES)))
      .meta({ description: 'Per four-digit year, the names of the months that have usage samples, in calendar order' }),
  })
  .meta({ id: 'GeneratedDates' });

// ---------------------------------------------------------------------------------------------------------------
// Parameters.

const productKey = z.enum(PRODUCT_KEYS, { error: `must be one of ${PRODUCT_KEYS.join(', ')}` });
const dbOnly = z.literal('productdb', { error: 'this view is of productdb only' }).meta({ type: 'string', enum: ['productdb'] });

export const clusterUid = z
  .string()
  .refine(isUuid, 'must be a cluster UID (a UUID)')
  .transform((u) => u.toLowerCase());
const objectId = z.string().min(1).max(64);
const viewType = z.enum(['summary', 'daily'], { error: 'must be summary or daily' }).optional();
const text = z.string().max(255).optional();
const contractId = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a non-negative integer')
  .transform(Number)
  .optional()
  .meta({ type: 'integer', description: 'Only usage billed under this contract (0: under none)' });

const monthParams = (product: z.ZodType<string>) => z.object({ ...reportMonthParams, productKey: product });
const objectParams = z.object({ ...reportMonthParams, productKey: dbOnly, clusterUID: clusterUid, objectID: objectId });

type ViewQuery = Partial<
  Pick<usageReportV1.UsageViewRequest, 'viewType' | 'group' | 'kind' | 'clusterUid' | 'namespace' | 'namespaceUid'>
> & {
  contractId?: number;
};

const VIEWS_ROOT = '/dashboard/summary/:year/:month/usage-report/products/:productKey/views';

/** A streamed view's call: it may last until its last byte is read (BACKEND_STREAM_DEADLINE_MS). */
export const streamed = (ctx: { config: { BACKEND_STREAM_DEADLINE_MS: number } }) => ({
  deadlineMs: ctx.config.BACKEND_STREAM_DEADLINE_MS,
});

/** One monthly view row: the view's path segment, the query it takes, its shape. */
/** The product parameter of a view: any product key, or productdb alone, as USAGE_VIEWS says. */
const productOf = (view: UsageViewName) => (USAGE_VIEWS[view].length === 1 ? dbOnly : productKey);

function viewRoute<Q extends z.ZodType>(spec: {
  view: UsageViewName;
  query?: Q;
  toRequest?: (q: z.output<Q>) => ViewQuery;
  summary: string;
  schema: z.ZodType;
}): Route {
  return route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [ANALYTICS],
    method: 'get',
    scope: 'read:organization',
    path: `${VIEWS_ROOT}/${spec.view}`,
    summary: spec.summary,
    params: monthParams(productOf(spec.view)),
    query: spec.query,
    response: { status: 200, schema: spec.schema },
    async handle({ params, query }, ctx) {
      const request = viewRequest(params, spec.view, spec.toRequest && query !== undefined ? spec.toRequest(query) : {});
      return { body: await JsonStream.of(ctx.kept.billingDashboard.usageReport.getUsageView(request, streamed(ctx))) };
    },
  });
}

const viewRequest = (
  p: { year: number; month: number; productKey: string },
  view: string,
  q: ViewQuery,
  objectId = '',
): usageReportV1.UsageViewRequest => ({
  year: p.year,
  month: p.month,
  product: p.productKey,
  view,
  viewType: q.viewType ?? '',
  group: q.group ?? '',
  kind: q.kind ?? '',
  clusterUid: q.clusterUid ?? '',
  namespace: q.namespace ?? '',
  namespaceUid: q.namespaceUid ?? '',
  contractId: q.contractId,
  objectId,
});

/** An item view of one object of the month (`.../clusters/{clusterUID}/objects/{objectID}`); 404 without samples. */
function objectRoute(view: string, summary: string, schema: z.ZodType): Route {
  return route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [ANALYTICS],
    method: 'get',
    scope: 'read:organization',
    path: `${VIEWS_ROOT}/${view}/clusters/:clusterUID/objects/:objectID`,
    summary,
    params: objectParams,
    errors: [{ status: 404, description: 'when the object has no samples on that cluster in the month' }],
    response: { status: 200, schema },
    async handle({ params }, ctx) {
      const request = viewRequest(params, view, { clusterUid: params.clusterUID }, params.objectID);
      return { body: await JsonStream.of(ctx.kept.billingDashboard.usageReport.getUsageView(request, streamed(ctx))) };
    },
  });
}

export const usageReportRoutes: Route[] = [
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [ANALYTICS],
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/summary/generated-months',
    summary: 'The months that have usage samples, per year',
    response: { status: 200, schema: GeneratedDates },
    async handle(_input, ctx) {
      const { months } = await ctx.kept.billingDashboard.usageReport.generatedMonths({});
      const yearMonthList: Record<string, (typeof MONTH_NAMES)[number][]> = {};
      // The backend answers them oldest first, so each year's names come in calendar order.
      for (const { year, month } of months) (yearMonthList[String(year)] ??= []).push(MONTH_NAMES[month - 1]);
      return { body: { yearMonthList } };
    },
  }),
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [ANALYTICS],
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/summary/object-quota-history/clusters/:clusterUID/objects/:objectID',
    summary: "One object's quota (request, limit) and use over every month it was sampled",
    params: z.object({ clusterUID: clusterUid, objectID: objectId }),
    errors: [{ status: 404, description: 'when the object has no samples on that cluster' }],
    response: { status: 200, schema: ObjectQuotaHistory },
    async handle({ params }, ctx) {
      const { json } = await ctx.kept.billingDashboard.usageReport.getObjectQuotaHistory({
        clusterUid: params.clusterUID,
        objectId: params.objectID,
      });
      return { body: new JsonText(json) };
    },
  }),
  viewRoute({
    view: 'objects-usage-view',
    summary: 'Usage of each database object in the month',
    query: z.object({
      view_type: viewType,
      group: text,
      kind: text,
      clusterUID: clusterUid.optional(),
      namespace: text,
      namespaceUID: text,
    }),
    toRequest: (q) => ({
      viewType: q.view_type,
      group: q.group,
      kind: q.kind,
      clusterUid: q.clusterUID,
      namespace: q.namespace,
      namespaceUid: q.namespaceUID,
    }),
    schema: ObjectsUsageView,
  }),
  viewRoute({
    view: 'clusters-usage-view',
    summary: "Usage of each cluster in the month (group and kind filter productdb's objects)",
    query: z.object({ view_type: viewType, group: text, kind: text, contractID: contractId }),
    toRequest: (q) => ({ viewType: q.view_type, group: q.group, kind: q.kind, contractId: q.contractID }),
    schema: ClustersUsageView,
  }),
  viewRoute({
    view: 'namespaces-usage-view',
    summary: 'Usage of each namespace in the month',
    query: z.object({ view_type: viewType, clusterUID: clusterUid.optional() }),
    toRequest: (q) => ({ viewType: q.view_type, clusterUid: q.clusterUID }),
    schema: NamespacesUsageView,
  }),
  viewRoute({
    view: 'gks-usage-view',
    summary: 'Usage of each cluster hosted on gks in the month',
    query: z.object({ view_type: viewType, clusterUID: clusterUid.optional() }),
    toRequest: (q) => ({ viewType: q.view_type, clusterUid: q.clusterUID }),
    schema: GksUsageView,
  }),
  viewRoute({
    view: 'contracts-usage-view',
    summary: 'Usage under each contract in the month',
    query: z.object({ view_type: viewType }),
    toRequest: (q) => ({ viewType: q.view_type }),
    schema: ContractsUsageView,
  }),
  viewRoute({
    view: 'object-quota-history-summaries-view',
    summary: "Each database object's quota states and peak requests, limits and use in the month",
    schema: ObjectQuotaHistorySummariesView,
  }),
  objectRoute(
    'object-quota-history-summaries-view',
    "One database object's quota periods and samples in the month",
    MonthObjectQuotaHistory,
  ),
  viewRoute({
    view: 'objects-cluster-mode-usage-view',
    summary: 'Usage of each database object in cluster topology in the month, with replica-hours',
    schema: ObjectsClusterModeUsageView,
  }),
  objectRoute('objects-cluster-mode-usage-view', "One database object's usage and replicas per day in the month", ObjectClusterModeUsage),
];
