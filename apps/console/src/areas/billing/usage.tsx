import { useId, useMemo } from 'react';
import { api, download, ok, type Schema } from '../../api/client';
import { ErrorMessage, Outcome, Section, Show, Table, useAction, type Column } from '../../ui';
import { useReport } from './api';
import { Choice } from './choice';
import { useQuery } from './query';
import { UsageChart } from './usage-chart';
import {
  amount,
  dailySeries,
  daysOf,
  isMonth,
  monthLabel,
  monthsOf,
  productOf,
  PRODUCTS,
  QUANTITIES,
  quantityLabel,
  quantityOf,
  viewOf,
  viewsOf,
  type ProductKey,
  type Quantity,
  type UsageReport,
  type UsageSeries,
  type UsageViewKind,
  type ViewQuery,
} from './usage-views';

/**
 * Usage (`/admin/billing`): one monthly view of one product's usage, its daily series as a chart stacked by the
 * view's rows with the same numbers as a table, the rows with their month's quantities, and the month's PDF.
 * The choices are in the address: `month` (YYYY-MM; default the latest month with samples), `product`, `view`,
 * `quantity`.
 */
export function UsageScreen({ org }: { org: string }) {
  const [params, change] = useQuery();
  const months = useReport(['months', org], () => ok(api.GET('/dashboard/summary/generated-months', { params: { query: { org } } })));
  const catalog = useReport(['catalog'], () => ok(api.GET('/contracts/available_products')));
  const monthOptions = useMemo(() => (months.data ? monthsOf(months.data) : []), [months.data]);
  const asked = params.get('month');
  const month = asked ?? monthOptions.at(-1)?.[0];
  const product = productOf(params.get('product')) ?? 'productdb';
  const view = viewOf(params.get('view'), product);
  const quantity = quantityOf(params.get('quantity')) ?? 'cpuCoreHours';
  // A month from the address that has no samples (or is not a month) is still offered, so the select shows it.
  const offered =
    asked && !monthOptions.some(([m]) => m === asked)
      ? [...monthOptions, [asked, isMonth(asked) ? monthLabel(asked) : asked] as const]
      : monthOptions;

  return (
    <Section title="Usage" actions={<DownloadPdf org={org} month={month && isMonth(month) ? month : undefined} />}>
      <div className="form" role="group" aria-label="Usage report">
        <Choice label="Month" value={month} options={offered} onChange={(m) => change({ month: m })} />
        <Choice
          label="Product"
          value={product}
          options={PRODUCTS.map((p) => [p, productTitle(p, catalog.data)] as const)}
          onChange={(p) => change({ product: p })}
        />
        <Choice
          label="View"
          value={view.view}
          options={viewsOf(product).map((v) => [v.view, `${v.title} (${v.view})`] as const)}
          onChange={(v) => change({ view: v })}
        />
        <Choice label="Quantity" value={quantity} options={QUANTITIES} onChange={(q) => change({ quantity: q })} />
      </div>
      <ErrorMessage error={months.error} />
      {month === undefined ? (
        months.data && <p className="empty">No month has usage samples yet.</p>
      ) : isMonth(month) ? (
        <UsageView query={{ org, month, product }} view={view} quantity={quantity} />
      ) : (
        <p role="alert" className="error">
          The month must be a year and month, YYYY-MM (e.g. 2026-10).
        </p>
      )}
    </Section>
  );
}

/** "productdb — Product DB (managed databases)" when the catalog names it, else the key (the catalog is optional). */
function productTitle(product: ProductKey, catalog: Schema<'ProductCatalog'> | undefined): string {
  const entry = catalog?.[product];
  const title = entry && typeof entry === 'object' && 'title' in entry && typeof entry.title === 'string' ? entry.title : undefined;
  return title ? `${product} — ${title}` : product;
}

/** The month's PDF summary; it covers productdb, whichever product the screen shows. */
function DownloadPdf({ org, month }: { org: string; month: string | undefined }) {
  const action = useAction();
  const hint = useId();
  const [year, mm] = month?.split('-') ?? [];
  return (
    <div>
      <button
        type="button"
        className="primary"
        aria-describedby={hint}
        aria-busy={action.busy}
        disabled={!month || action.busy}
        onClick={() =>
          void action.run(async () => {
            const name = await download(
              `/dashboard/summary/${year}/${mm}/download?org=${encodeURIComponent(org)}`,
              `usage-summary-productdb-${year}-${mm}.pdf`,
            );
            return `Downloaded ${name}`;
          })
        }
      >
        Download PDF
      </button>{' '}
      <small id={hint} className="muted">
        {month ? `productdb usage of ${monthLabel(month)}` : 'Pick a month'}
      </small>
      <Outcome action={action} />
    </div>
  );
}

function UsageView({ query, view, quantity }: { query: ViewQuery; view: UsageViewKind; quantity: Quantity }) {
  const report = useReport(['usage', query.org, query.month, query.product, view.view], () => view.load(query));
  return <Show loaded={report}>{(data) => <Report report={data} query={query} view={view} quantity={quantity} />}</Show>;
}

interface DayRow {
  day: string;
  values: number[];
  total: number;
}

function Report({ report, query, view, quantity }: { report: UsageReport; query: ViewQuery; view: UsageViewKind; quantity: Quantity }) {
  const days = useMemo(() => daysOf(query.month), [query.month]);
  const dayNumbers = useMemo(() => days.map((day) => String(Number(day.slice(8)))), [days]);
  const series = useMemo(() => dailySeries(report.series, quantity, days), [report, quantity, days]);
  const month = monthLabel(query.month);
  const unit = quantityLabel(quantity);
  if (report.series.length === 0)
    return (
      <p className="empty">
        No {query.product} usage in {month} in this view.
      </p>
    );

  const dayRows: DayRow[] = days.map((day, i) => {
    const values = series.map((s) => s.values[i]);
    return { day, values, total: values.reduce((a, b) => a + b, 0) };
  });
  const dayColumns: Column<DayRow>[] = [
    { header: 'Day (UTC)', cell: (r) => r.day },
    ...series.map((s, i): Column<DayRow> => ({ header: s.name, cell: (r) => amount(r.values[i]) })),
    { header: 'Total', cell: (r) => amount(r.total) },
  ];
  const rowColumns: Column<UsageSeries>[] = [
    ...view.factHeaders.map((header, i): Column<UsageSeries> => ({ header, cell: (r) => r.facts[i] })),
    ...QUANTITIES.map(([q, label]): Column<UsageSeries> => ({ header: label, cell: (r) => amount(r.quantities[q]) })),
  ];
  return (
    <>
      {/* The chart and, right after it, its numbers: the table is what screen readers and keyboards use. */}
      <UsageChart
        label={`Usage of ${query.product} by ${view.by}, ${month}`}
        labels={dayNumbers}
        titles={days}
        axis="Day of the month (UTC)"
        series={series}
        unit={unit}
      />
      <Table
        caption={`Daily ${unit} of ${query.product} by ${view.by}, ${month}`}
        columns={dayColumns}
        rows={dayRows}
        rowKey={(r) => r.day}
        pageSize={31}
      />
      <Table
        caption={`${view.title}: ${query.product} usage in ${month}`}
        columns={rowColumns}
        rows={report.series}
        rowKey={(r) => r.key}
      />
      <p>
        Totals over {report.totals.rows} {report.totals.rows === 1 ? 'row' : 'rows'}:{' '}
        {QUANTITIES.map(([q, label]) => `${amount(report.totals[q])} ${label}`).join(', ')}.
      </p>
    </>
  );
}
