import type { Knex } from 'knex';
import { isUuid } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { InputError, NotFoundError } from '@platform/errors';
import { PRODUCT_KEYS, USAGE_VIEWS, type ProductKey, type UsageViewName, type usageReportV1 } from '@platform/proto';
import {
  DAILY,
  MONTHLY,
  generatedMonths,
  groupedViewPieces,
  groupedViewRows,
  quotaHistory,
  rfc3339,
  type Grouping,
  type RollupTable,
} from './views';

/**
 * The usage reports (docs/usage-reports.md): which months have samples, the monthly views of each
 * product, one object's quota history, and the namespace billing of an organization's clusters. The SQL is in
 * ./views.ts; this file checks the request and picks the view.
 */

/** The products whose usage is viewed: the platform's product keys. */
export const PRODUCTS = PRODUCT_KEYS;
export type { ProductKey };

/** The usage views with the products that have them (one table for the gateway's routes and this SQL). */
export const VIEWS = USAGE_VIEWS;
export type ViewName = UsageViewName;

export const VIEW_TYPES = ['summary', 'daily'] as const;

/** The object identity every object row carries (level 2 of views.ts: over its rows, one per object unless split). */
const OBJECT_SELECT = [
  'max(cluster_name) as cluster_name',
  'max(namespace) as namespace',
  'max(namespace_uid) as namespace_uid',
  'max("group") as "group"',
  'max(kind) as kind',
  'max(name) as name',
  'max(version) as version',
  'max(topology) as topology',
  'max(replicas) as replicas',
  'min(first_at) as first_at',
  'max(last_at) as last_at',
];
const OBJECT_ROW =
  "'clusterUID', cluster_uid, 'clusterName', cluster_name, 'namespace', namespace, 'namespaceUID', namespace_uid, " +
  "'group', \"group\", 'kind', kind, 'name', name, 'objectID', object_uid, 'version', version, 'topology', topology, " +
  `'replicas', replicas, 'firstSampleAt', ${rfc3339('first_at')}, 'lastSampleAt', ${rfc3339('last_at')}`;
const BY_CORE_HOURS = 'cpu_core_hours desc';

const GROUPINGS: Record<Exclude<ViewName, 'object-quota-history-summaries-view'>, Grouping> = {
  'objects-usage-view': {
    by: ['cluster_uid', 'object_uid'],
    select: OBJECT_SELECT,
    row: OBJECT_ROW,
    order: `${BY_CORE_HOURS}, cluster_uid, object_uid`,
  },
  'objects-cluster-mode-usage-view': {
    by: ['cluster_uid', 'object_uid'],
    select: [...OBJECT_SELECT, 'coalesce(sum(replica_hours), 0)::float8 as replica_hours'],
    row: `${OBJECT_ROW}, 'replicaHours', replica_hours`,
    order: `${BY_CORE_HOURS}, cluster_uid, object_uid`,
  },
  'clusters-usage-view': {
    by: ['cluster_uid'],
    select: [
      'max(cluster_name) as cluster_name',
      'max(hosting) as hosting',
      'count(distinct namespace) as namespaces',
      'count(distinct object_uid) as objects',
    ],
    row: "'clusterUID', cluster_uid, 'clusterName', cluster_name, 'hosting', hosting, 'namespaces', namespaces, 'objects', objects",
    order: `${BY_CORE_HOURS}, cluster_uid`,
  },
  'gks-usage-view': {
    by: ['cluster_uid'],
    select: ['max(cluster_name) as cluster_name', 'count(distinct namespace) as namespaces', 'count(distinct object_uid) as objects'],
    row: "'clusterUID', cluster_uid, 'clusterName', cluster_name, 'namespaces', namespaces, 'objects', objects",
    order: `${BY_CORE_HOURS}, cluster_uid`,
  },
  'namespaces-usage-view': {
    by: ['cluster_uid', 'namespace'],
    select: ['max(cluster_name) as cluster_name', 'max(namespace_uid) as namespace_uid', 'count(distinct object_uid) as objects'],
    row: "'clusterUID', cluster_uid, 'clusterName', cluster_name, 'namespace', namespace, 'namespaceUID', namespace_uid, 'objects', objects",
    order: `${BY_CORE_HOURS}, cluster_uid, namespace`,
  },
  'contracts-usage-view': {
    by: ['contract_id'],
    // An object's usage may move to another contract within the month.
    split: ['contract_id'],
    select: ['count(distinct cluster_uid) as clusters', 'count(distinct object_uid) as objects'],
    row: "'contractID', contract_id, 'clusters', clusters, 'objects', objects",
    order: `${BY_CORE_HOURS}, contract_id`,
  },
};

/**
 * Per object: its peak requests, limits and use over the month, and how many quota states it went through (level 1
 * splits each object by its requests and limits, so level 2 counts the states).
 */
const QUOTA_SUMMARIES: Grouping = {
  by: ['cluster_uid', 'object_uid'],
  split: ['cpu_request', 'cpu_limit', 'memory_request', 'memory_limit', 'storage_request', 'storage_limit'],
  perObject: ['max(cpu_peak_used) as cpu_used', 'max(memory_peak_used) as memory_used', 'max(storage_peak_used) as storage_used'],
  select: [
    ...OBJECT_SELECT,
    'count(*) as quota_states',
    ...['cpu', 'memory', 'storage'].flatMap((r) => [
      `max(${r}_request) as ${r}_request`,
      `max(${r}_limit) as ${r}_limit`,
      `max(${r}_used) as ${r}_used`,
    ]),
  ],
  // The three inner objects are written with format() (integers only, so nothing to escape): with ~7,500 objects,
  // json_build_object for them took ~12 ms of the statement's ~190.
  row:
    `${OBJECT_ROW}, 'quotaStates', quota_states, ` +
    ['cpu', 'memory', 'storage']
      .map((r) => `'${r}', format('{"maxRequest":%s,"maxLimit":%s,"peakUsed":%s}', ${r}_request, ${r}_limit, ${r}_used)::json`)
      .join(', '),
  order: 'cluster_uid, namespace, name, object_uid',
};

/** Per namespace of some clusters (all products), with a per-month series: namespace billing. */
const NAMESPACES_BILLING: Grouping = {
  by: ['cluster_uid', 'namespace'],
  select: [
    'max(cluster_name) as cluster_name',
    'max(namespace_uid) as namespace_uid',
    'count(distinct object_uid) as objects',
    'array_to_json(array_agg(distinct product order by product)) as products',
  ],
  row: "'clusterUID', cluster_uid, 'clusterName', cluster_name, 'namespace', namespace, 'namespaceUID', namespace_uid, 'objects', objects, 'products', products",
  order: `${BY_CORE_HOURS}, cluster_uid, namespace`,
};

/** Per object of one namespace (all products), with a per-month series: one namespace's billing. */
const NAMESPACE_OBJECTS: Grouping = {
  by: ['cluster_uid', 'object_uid'],
  select: [...OBJECT_SELECT, 'max(product) as product'],
  row: `${OBJECT_ROW}, 'product', product`,
  order: `${BY_CORE_HOURS}, cluster_uid, object_uid`,
};

const monthStart = (year: number, month: number) => new Date(Date.UTC(year, month - 1, 1)).toISOString().slice(0, 10);

function checkUuid(field: string, value: string): string {
  if (!isUuid(value)) throw new InputError(`${field} must be a UUID`, [{ field, description: 'not a UUID' }]);
  return value.toLowerCase();
}

export class UsageReports {
  constructor(private readonly db: Database) {}

  generatedMonths(): Promise<{ year: number; month: number }[]> {
    return generatedMonths(this.db);
  }

  /** One monthly view of a product as one JSON text (viewPieces joined). */
  view(req: usageReportV1.UsageViewRequest): Promise<string> {
    return joined(this.viewPieces(req));
  }

  /**
   * One monthly view of a product (the spec's table of views) in pieces of its JSON text (groupedViewPieces); 400
   * for what the table does not have, before the first piece.
   */
  async *viewPieces(req: usageReportV1.UsageViewRequest): AsyncGenerator<string> {
    const { year, month } = req;
    if (!Number.isInteger(year) || year < 1 || year > 9999) throw new InputError('year must be a four-digit year');
    if (!Number.isInteger(month) || month < 1 || month > 12) throw new InputError('month must be 1..12');
    if (!(PRODUCTS as readonly string[]).includes(req.product))
      throw new InputError(`unknown product key ${req.product}: one of ${PRODUCTS.join(', ')}`);
    const products = VIEWS[req.view as ViewName] as readonly string[] | undefined;
    if (!products) throw new InputError(`unknown view ${req.view}`);
    if (!products.includes(req.product)) throw new InputError(`product ${req.product} has no ${req.view}`);
    const viewType = req.viewType || 'summary';
    if (!(VIEW_TYPES as readonly string[]).includes(viewType))
      throw new InputError(`unknown view_type ${viewType}: one of ${VIEW_TYPES.join(', ')}`);

    const clusterUid = req.clusterUid ? checkUuid('clusterUID', req.clusterUid) : '';
    // The month's rows of the product that pass the filters: of the rollups for the views, of the samples for one
    // object's quota history. Every table carries every column filtered on.
    const selected = (table: RollupTable | 'usage_samples') => {
      const rows = this.db.table(table).where({ month: monthStart(year, month), product: req.product });
      if (clusterUid) rows.andWhere({ cluster_uid: clusterUid });
      if (req.group) rows.andWhere({ group: req.group });
      if (req.kind) rows.andWhere({ kind: req.kind });
      if (req.namespace) rows.andWhere({ namespace: req.namespace });
      if (req.namespaceUid) rows.andWhere({ namespace_uid: req.namespaceUid });
      if (req.contractId !== undefined) rows.andWhere({ contract_id: req.contractId });
      if (req.objectId) rows.andWhere({ object_uid: req.objectId });
      return rows;
    };
    const view = req.view as ViewName;
    const header = { month: monthStart(year, month).slice(0, 7), product: req.product, view, viewType };

    if (req.objectId) {
      yield await this.objectView(view, selected, checkUuid('clusterUID', req.clusterUid), req.objectId, header);
      return;
    }
    if (view === 'object-quota-history-summaries-view') {
      yield* groupedViewPieces(this.db, selected, QUOTA_SUMMARIES, undefined, header);
      return;
    }
    const rows = (table: RollupTable) => {
      const base = selected(table);
      if (view === 'gks-usage-view') base.andWhere({ hosting: 'gks' });
      if (view === 'objects-cluster-mode-usage-view') base.andWhere({ topology: 'CLUSTER' });
      return base;
    };
    // The objects view without a filter on an attribute selects every rollup of each object it shows, so its daily
    // points are the kept ones.
    const wholeObjects =
      view === 'objects-usage-view' && !req.group && !req.kind && !req.namespace && !req.namespaceUid && req.contractId === undefined;
    const series = viewType === 'daily' ? (wholeObjects ? { ...DAILY, keptOf: monthStart(year, month) } : DAILY) : undefined;
    yield* groupedViewPieces(this.db, rows, GROUPINGS[view], series, header);
  }

  /**
   * The item views of one object in the month: its quota history (every sample and the runs of equal quotas, so
   * from the samples), or its cluster-mode usage per day (from its days).
   */
  private async objectView(
    view: ViewName,
    selected: (table: RollupTable | 'usage_samples') => Knex.QueryBuilder,
    clusterUid: string,
    objectId: string,
    header: object,
  ): Promise<string> {
    const missing = () =>
      new NotFoundError(`no samples of object ${objectId} on cluster ${clusterUid} in ${(header as { month: string }).month}`);
    if (view === 'object-quota-history-summaries-view') {
      const json = await quotaHistory(this.db, selected('usage_samples'));
      if (!json) throw missing();
      return withHeader(header, json);
    }
    if (view !== 'objects-cluster-mode-usage-view') throw new InputError(`${view} has no per-object view`);
    // The cluster-mode row of the list view for this object (whatever its topology), with its days.
    const rows = await groupedViewRows(this.db, selected, GROUPINGS[view], DAILY);
    if (rows.length === 0) throw missing();
    return JSON.stringify({ ...header, ...(rows[0] as object) });
  }

  /** One object's samples and quota periods over every month. */
  async objectQuotaHistory(clusterUid: string, objectId: string): Promise<string> {
    const base = this.db.table('usage_samples').where({ cluster_uid: checkUuid('clusterUID', clusterUid), object_uid: objectId });
    const json = await quotaHistory(this.db, base);
    if (!json) throw new NotFoundError(`no samples of object ${objectId} on cluster ${clusterUid}`);
    return json;
  }

  /** Namespace billing as one JSON text (namespaceBillingPieces joined). */
  namespaceBilling(req: usageReportV1.NamespaceBillingRequest): Promise<string> {
    return joined(this.namespaceBillingPieces(req));
  }

  /**
   * Namespace billing of some clusters: each namespace with its quantities per month, or, for one namespace of one
   * of the clusters, its objects with theirs, in pieces of its JSON text. A cluster not among them is 404.
   */
  async *namespaceBillingPieces(req: usageReportV1.NamespaceBillingRequest): AsyncGenerator<string> {
    const clusters = [...new Set(req.clusterUids.map((u) => checkUuid('clusterUids', u)))];
    const all = (table: RollupTable) => this.db.table(table).whereIn('cluster_uid', clusters);
    if (!req.clusterUid && !req.namespace) {
      yield* groupedViewPieces(this.db, all, NAMESPACES_BILLING, MONTHLY);
      return;
    }
    const cluster = checkUuid('clusterID', req.clusterUid);
    if (!clusters.includes(cluster)) throw new NotFoundError(`cluster ${req.clusterUid} is not one of the organization's`);
    const one = (table: RollupTable) => all(table).andWhere({ cluster_uid: cluster, namespace: req.namespace });
    yield* groupedViewPieces(this.db, one, NAMESPACE_OBJECTS, MONTHLY, { clusterUID: cluster, namespace: req.namespace });
  }
}

/** The pieces of a JSON text, joined. */
async function joined(pieces: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
}

/** A view's JSON object (Postgres's text, never `{}`) with the fields naming it put first, spliced in without parsing it. */
function withHeader(header: object, json: string): string {
  return `${JSON.stringify(header).slice(0, -1)},${json.slice(1)}`;
}
