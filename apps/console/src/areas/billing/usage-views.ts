import { api, ok, type Schema } from '../../api/client';
import type { paths } from '../../api/gen/schema';
import { QUANTITY_NAMES } from '../../ui/quantities';

/** The products that have usage views: the `productKey` the API document declares. */
export type ProductKey =
  paths['/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/clusters-usage-view']['get']['parameters']['path']['productKey'];

/** Every product key, in the catalog's order; a Record so a product the API adds breaks the build until it is here. */
const PRODUCT_KEYS: Record<ProductKey, true> = { productdb: true, productbackup: true, productvault: true, productingress: true };
export const PRODUCTS = Object.keys(PRODUCT_KEYS) as ProductKey[];

export function productOf(value: string | null): ProductKey | undefined {
  return PRODUCTS.find((p) => p === value);
}

type Point = Schema<'UsageDailyPoint'>;
/** The four quantities every row, total and daily point carries (docs/usage-reports.md, "Quantities"). */
export type Quantities = Omit<Point, 'date'>;
export type Quantity = keyof Quantities;

export const QUANTITIES: readonly (readonly [Quantity, string])[] = (Object.keys(QUANTITY_NAMES) as Quantity[]).map((q) => [q, QUANTITY_NAMES[q]] as const);

export function quantityOf(value: string | null): Quantity | undefined {
  return QUANTITIES.find(([q]) => q === value)?.[0];
}

export function quantityLabel(quantity: Quantity): string {
  return QUANTITIES.find(([q]) => q === quantity)?.[1] ?? quantity;
}

/** What a view is asked for: the org context, the month (`YYYY-MM`) and the product. */
export interface ViewQuery {
  org: string;
  month: string;
  product: ProductKey;
}

/** One row of a view as a chart series: who it is, its identifying facts, its month's quantities and its days. */
export interface UsageSeries {
  key: string;
  name: string;
  facts: (string | number)[];
  quantities: Quantities;
  daily: Point[];
}

export interface UsageReport {
  month: string;
  series: UsageSeries[];
  totals: Schema<'UsageTotals'>;
}

/** A monthly view, whatever its row shape: how it is named and how its rows become series. */
export interface UsageViewKind {
  view: ViewName;
  /** Plural, for the rows table: "Clusters". */
  title: string;
  /** What one series is, for the chart's name: "Usage of productdb by cluster". */
  by: string;
  /** Only productdb has it (the other products have the clusters and contracts views). */
  productdbOnly: boolean;
  factHeaders: string[];
  load(query: ViewQuery): Promise<UsageReport>;
}

interface ViewDefinition<Row> extends Omit<UsageViewKind, 'factHeaders' | 'load'> {
  facts: [header: string, value: (row: Row) => string | number][];
  key(row: Row): string;
  name(row: Row): string;
  fetch(query: ViewQuery): Promise<{ month: string; rows: Row[]; totals: Schema<'UsageTotals'> }>;
}

function defineView<Row extends Quantities & { daily?: Point[] }>(definition: ViewDefinition<Row>): UsageViewKind {
  const { facts, key, name, fetch, ...kind } = definition;
  return {
    ...kind,
    factHeaders: facts.map(([header]) => header),
    async load(query) {
      if (kind.productdbOnly && query.product !== 'productdb') throw new Error(`The ${kind.view} is of productdb only`);
      const answer = await fetch(query);
      return {
        month: answer.month,
        totals: answer.totals,
        series: answer.rows.map((row) => ({
          key: key(row),
          name: name(row),
          facts: facts.map(([, value]) => value(row)),
          quantities: pick(row),
          daily: row.daily ?? [],
        })),
      };
    },
  };
}

function pick(q: Quantities): Quantities {
  return { cpuCoreHours: q.cpuCoreHours, memoryGiBHours: q.memoryGiBHours, storageGiBHours: q.storageGiBHours, objectHours: q.objectHours };
}

/**
 * The path and query every view takes; always the daily series, which the chart draws. The product is the
 * path's own type: productdb-only views declare `productKey: "productdb"`, so those pass it as such.
 */
function viewParams<P extends ProductKey>({ org, month }: ViewQuery, productKey: P) {
  const [year, mm] = month.split('-');
  return { params: { path: { year, month: mm, productKey }, query: { org, view_type: 'daily' as const } } };
}

const cluster = (row: { clusterName: string; clusterUID: string }) => row.clusterName || row.clusterUID;

const VIEW_LIST = [
  defineView<Schema<'ClustersUsageViewRow'>>({
    view: 'clusters-usage-view',
    title: 'Clusters',
    by: 'cluster',
    productdbOnly: false,
    facts: [
      ['Cluster', cluster],
      ['Cluster UID', (r) => r.clusterUID],
      ['Hosting', (r) => r.hosting],
      ['Namespaces', (r) => r.namespaces],
      ['Objects', (r) => r.objects],
    ],
    key: (r) => r.clusterUID,
    name: cluster,
    fetch: (q) =>
      ok(
        api.GET('/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/clusters-usage-view', viewParams(q, q.product)),
      ),
  }),
  defineView<Schema<'NamespacesUsageViewRow'>>({
    view: 'namespaces-usage-view',
    title: 'Namespaces',
    by: 'namespace',
    productdbOnly: true,
    facts: [
      ['Cluster', cluster],
      ['Namespace', (r) => r.namespace],
      ['Objects', (r) => r.objects],
    ],
    key: (r) => `${r.clusterUID}/${r.namespaceUID || r.namespace}`,
    name: (r) => `${cluster(r)}/${r.namespace}`,
    fetch: (q) =>
      ok(
        api.GET(
          '/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/namespaces-usage-view',
          viewParams(q, 'productdb'),
        ),
      ),
  }),
  defineView<Schema<'ObjectsUsageViewRow'>>({
    view: 'objects-usage-view',
    title: 'Objects',
    by: 'object',
    productdbOnly: true,
    facts: [
      ['Cluster', cluster],
      ['Namespace', (r) => r.namespace],
      ['Kind', (r) => r.kind],
      ['Name', (r) => r.name],
      ['Version', (r) => r.version],
      ['Topology', (r) => r.topology],
      ['Replicas', (r) => r.replicas],
    ],
    key: (r) => `${r.clusterUID}/${r.objectID}`,
    name: (r) => `${cluster(r)}/${r.namespace}/${r.name}`,
    fetch: (q) =>
      ok(
        api.GET(
          '/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/objects-usage-view',
          viewParams(q, 'productdb'),
        ),
      ),
  }),
  defineView<Schema<'GksUsageViewRow'>>({
    view: 'gks-usage-view',
    title: 'Clusters hosted on gks',
    by: 'gks cluster',
    productdbOnly: true,
    facts: [
      ['Cluster', cluster],
      ['Cluster UID', (r) => r.clusterUID],
      ['Namespaces', (r) => r.namespaces],
      ['Objects', (r) => r.objects],
    ],
    key: (r) => r.clusterUID,
    name: cluster,
    fetch: (q) =>
      ok(api.GET('/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/gks-usage-view', viewParams(q, 'productdb'))),
  }),
  defineView<Schema<'ContractsUsageViewRow'>>({
    view: 'contracts-usage-view',
    title: 'Contracts',
    by: 'contract',
    productdbOnly: false,
    facts: [
      ['Contract', (r) => contractName(r.contractID)],
      ['Clusters', (r) => r.clusters],
      ['Objects', (r) => r.objects],
    ],
    key: (r) => String(r.contractID),
    name: (r) => contractName(r.contractID),
    fetch: (q) =>
      ok(
        api.GET(
          '/dashboard/summary/{year}/{month}/usage-report/products/{productKey}/views/contracts-usage-view',
          viewParams(q, q.product),
        ),
      ),
  }),
];

/** contractID 0 is usage billed under no contract. */
function contractName(id: number): string {
  return id === 0 ? 'No contract' : `Contract ${id}`;
}

export type ViewName = 'clusters-usage-view' | 'namespaces-usage-view' | 'objects-usage-view' | 'gks-usage-view' | 'contracts-usage-view';

/** The views a product has. */
export function viewsOf(product: ProductKey): UsageViewKind[] {
  return VIEW_LIST.filter((v) => product === 'productdb' || !v.productdbOnly);
}

/** The view the address names, when the product has it; else its clusters view. */
export function viewOf(value: string | null, product: ProductKey): UsageViewKind {
  const views = viewsOf(product);
  return views.find((v) => v.view === value) ?? views[0];
}

/**
 * The English month names generated-months answers, in calendar order (fixed to en-US, so the browser's locale
 * changes nothing).
 */
const MONTH_NAMES = Array.from({ length: 12 }, (_, i) =>
  new Date(Date.UTC(2000, i, 1)).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' }),
);

/** `2026-10` as "October 2026". */
export function monthLabel(month: string): string {
  const [year, mm] = month.split('-');
  return `${MONTH_NAMES[Number(mm) - 1] ?? mm} ${year}`;
}

export function isMonth(value: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(value);
}

/** The months with samples, oldest first, as [`YYYY-MM`, "October 2026"]. */
export function monthsOf(generated: Schema<'GeneratedDates'>): [string, string][] {
  return Object.entries(generated.yearMonthList)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([year, names]) =>
      names.map((name): [string, string] => {
        const month = `${year}-${String(MONTH_NAMES.indexOf(name) + 1).padStart(2, '0')}`;
        return [month, monthLabel(month)];
      }),
    );
}

/** Every UTC day of a `YYYY-MM` month, `YYYY-MM-DD`: the chart's axis, so days without samples show as gaps. */
export function daysOf(month: string): string[] {
  const [year, mm] = month.split('-').map(Number);
  const count = new Date(Date.UTC(year, mm, 0)).getUTCDate();
  return Array.from({ length: count }, (_, i) => `${month}-${String(i + 1).padStart(2, '0')}`);
}

/** More series than this make an unreadable stack: the smallest rows (rows come biggest first) are summed as one. */
export const MAX_SERIES = 8;

export interface DailySeries {
  name: string;
  values: number[];
}

/** The chart's (and its table's) numbers: per series, the quantity on each day, 0 on days without samples. */
export function dailySeries(series: UsageSeries[], quantity: Quantity, days: string[]): DailySeries[] {
  return stacked(series, (row) => row.name, (rows) =>
    days.map((day) => rows.reduce((sum, row) => sum + (row.daily.find((p) => p.date === day)?.[quantity] ?? 0), 0)),
  );
}

type MonthPoint = Schema<'UsageMonthlyPoint'>;

/** Per row (a namespace, an object), the quantity in each month, 0 in months without samples. */
export function monthlySeries<R extends { months: MonthPoint[] }>(rows: R[], name: (row: R) => string, quantity: Quantity, months: string[]): DailySeries[] {
  return stacked(rows, name, (some) => months.map((m) => some.reduce((sum, row) => sum + (row.months.find((p) => p.month === m)?.[quantity] ?? 0), 0)));
}

/** Every month any row has samples in, oldest first. */
export function monthsIn(rows: { months: MonthPoint[] }[]): string[] {
  return [...new Set(rows.flatMap((r) => r.months.map((p) => p.month)))].sort();
}

/** The rows (biggest first) as series; past MAX_SERIES, the smallest summed as one "n others". */
function stacked<R>(rows: R[], name: (row: R) => string, values: (rows: R[]) => number[]): DailySeries[] {
  const shown = rows.slice(0, rows.length > MAX_SERIES ? MAX_SERIES - 1 : MAX_SERIES);
  const rest = rows.slice(shown.length);
  const result = shown.map((row) => ({ name: name(row), values: values([row]) }));
  if (rest.length) result.push({ name: `${rest.length} others`, values: values(rest) });
  return result;
}

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** A quantity as people read it: grouped, one decimal. */
export function amount(value: number): string {
  return NUMBER.format(value);
}
