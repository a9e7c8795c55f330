import { useMemo, type ReactNode } from 'react';
import { Link, Route, Routes, useParams, useSearchParams } from 'react-router';
import { api, ApiError, ok, type Schema } from '../../api/client';
import { ErrorMessage, Section, Table, type Column } from '../../ui';
import { isRefusal } from '../../ui/no-access';
import { NotFound } from '../../ui/not-found';
import { OrgNav } from '../../ui/org-nav';
import { useReport } from './api';
import { Choice } from './choice';
import { useQuery } from './query';
import { UsageChart } from './usage-chart';
import { amount, monthLabel, monthlySeries, monthsIn, QUANTITIES, quantityLabel, quantityOf, type Quantity } from './usage-views';

/**
 * An organization's usage for its owners and site admins (`/orgs/:org/usage/*`): what its clusters reported, per
 * namespace and month, as a chart stacked by namespace with the same numbers as a table, and one namespace's objects.
 * These are the billing routes an owner may call (`/dbaas/billing/reports/*`, `manage_owners:org`; docs/usage-reports.md):
 * the monthly usage views and the PDF summary of the billing dashboard cover every account and are for site admins.
 * The choices are in the address: `quantity`, and `month` (one month's numbers in the tables; all months without it).
 */
export function OrgUsage() {
  const org = useParams().org ?? '';
  return (
    <>
      <OrgNav org={org} />
      <Routes>
        <Route index element={<NamespacesScreen org={org} />} />
        <Route path="clusters/:cluster/namespaces/:namespace" element={<NamespaceScreen org={org} />} />
        <Route path="*" element={<NotFound />} />
      </Routes>
    </>
  );
}

type NamespaceRow = Schema<'NamespaceBillingRow'>;
type ObjectRow = Schema<'NamespaceBillingObjectRow'>;
type Quantities = Record<Quantity, number>;

/**
 * The report, or what keeps it from being shown said plainly: not an owner (403: the whole screen is the "no access"
 * page), or, for the organization's report, billing off on this deployment (its routes are not registered there:
 * 404). A namespace's 404 is the API's: the cluster is not the organization's.
 */
function Report<T>({
  loaded,
  gatedWhenMissing,
  children,
}: {
  loaded: { data: T | undefined; error: unknown };
  gatedWhenMissing?: boolean;
  children: (data: T) => ReactNode;
}) {
  const { error } = loaded;
  if (gatedWhenMissing && error instanceof ApiError && error.status === 404)
    return <p className="empty">Usage reports are not available on this deployment: it runs without billing (BILLING_ENABLED).</p>;
  if (isRefusal(error)) throw error;
  if (error) return <ErrorMessage error={error} />;
  if (loaded.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/** The quantity and month chosen, with the choices that change them. */
function useChoices(months: string[]) {
  const [params, change] = useQuery();
  const quantity = quantityOf(params.get('quantity')) ?? 'cpuCoreHours';
  const asked = params.get('month') ?? '';
  const month = months.includes(asked) ? asked : undefined;
  const choices = (
    <div className="form no-print" role="group" aria-label="Usage shown">
      <Choice label="Quantity" value={quantity} options={QUANTITIES} onChange={(q) => change({ quantity: q })} />
      <Choice
        label="Month"
        value={month ?? 'all'}
        options={[['all', 'All months'] as const, ...months.map((m) => [m, monthLabel(m)] as const)]}
        onChange={(m) => change({ month: m === 'all' ? undefined : m })}
      />
    </div>
  );
  return { quantity, month, choices };
}

/** A row's quantities in one month (0 where it has no samples), or over all months. */
function inMonth(row: Quantities & { months: Schema<'UsageMonthlyPoint'>[] }, month: string | undefined): Quantities {
  const point = month === undefined ? row : row.months.find((p) => p.month === month);
  return {
    cpuCoreHours: point?.cpuCoreHours ?? 0,
    memoryGiBHours: point?.memoryGiBHours ?? 0,
    storageGiBHours: point?.storageGiBHours ?? 0,
    objectHours: point?.objectHours ?? 0,
  };
}

const quantityColumns = <R extends Quantities & { months: Schema<'UsageMonthlyPoint'>[] }>(month: string | undefined): Column<R>[] =>
  QUANTITIES.map(([q, label]) => ({ header: label, cell: (r) => amount(inMonth(r, month)[q]), value: (r) => inMonth(r, month)[q] }));

/** Printing is how an owner keeps a PDF of this page: the PDF summary route is the site admins'. */
function PrintButton() {
  return (
    <button type="button" className="no-print" onClick={() => window.print()}>
      Print or save as PDF
    </button>
  );
}

/** The monthly chart of rows stacked as series, and its numbers as a table right after it (what screen readers use). */
function MonthlyChart<R extends { months: Schema<'UsageMonthlyPoint'>[] }>({
  rows,
  name,
  by,
  quantity,
  subject,
}: {
  rows: R[];
  name: (row: R) => string;
  by: string;
  quantity: Quantity;
  subject: string;
}) {
  const months = useMemo(() => monthsIn(rows), [rows]);
  const labels = useMemo(() => months.map(monthLabel), [months]);
  const series = useMemo(() => monthlySeries(rows, name, quantity, months), [rows, name, quantity, months]);
  const unit = quantityLabel(quantity);
  const monthRows = months.map((month, i) => {
    const values = series.map((s) => s.values[i]);
    return { month, values, total: values.reduce((a, b) => a + b, 0) };
  });
  return (
    <>
      <UsageChart label={`Usage of ${subject} by ${by}, per month`} labels={labels} axis="Month (UTC)" series={series} unit={unit} />
      <Table
        caption={`Monthly ${unit} of ${subject} by ${by}`}
        rows={monthRows}
        rowKey={(r) => r.month}
        columns={[
          { header: 'Month', cell: (r) => monthLabel(r.month), value: (r) => r.month },
          ...series.map((s, i): Column<(typeof monthRows)[number]> => ({ header: s.name, cell: (r) => amount(r.values[i]), value: (r) => r.values[i] })),
          { header: 'Total', cell: (r) => amount(r.total), value: (r) => r.total },
        ]}
      />
    </>
  );
}

const namespaceName = (r: NamespaceRow) => `${r.clusterName || r.clusterUID}/${r.namespace}`;

function NamespacesScreen({ org }: { org: string }) {
  const report = useReport(['org-usage', org, 'namespaces'], () =>
    ok(api.GET('/dbaas/billing/reports/namespaces', { params: { query: { org } } })),
  );
  const months = useMemo(() => monthsIn(report.data?.rows ?? []), [report.data]);
  const { quantity, month, choices } = useChoices(months);
  const [params] = useSearchParams();
  const search = params.toString() ? `?${params.toString()}` : '';
  return (
    <Section title={`Usage of ${org}`} actions={<PrintButton />}>
      <p className="muted">
        What the clusters of {org} reported (its hubs and their managed clusters), per namespace and month, in UTC.
      </p>
      {choices}
      <Report loaded={report} gatedWhenMissing>
        {({ rows, totals }) =>
          rows.length === 0 ? (
            <p className="empty">No usage reported by the clusters of {org} yet.</p>
          ) : (
            <>
              <MonthlyChart rows={rows} name={namespaceName} by="namespace" quantity={quantity} subject={org} />
              <Table
                caption={`Namespaces of ${org}, ${month ? monthLabel(month) : 'all months'}`}
                rows={month ? rows.filter((r) => r.months.some((p) => p.month === month)) : rows}
                rowKey={(r) => `${r.clusterUID}/${r.namespaceUID || r.namespace}`}
                columns={[
                  { header: 'Cluster', cell: (r) => r.clusterName || r.clusterUID },
                  {
                    header: 'Namespace',
                    cell: (r) => (
                      <Link to={`clusters/${encodeURIComponent(r.clusterUID)}/namespaces/${encodeURIComponent(r.namespace)}${search}`}>{r.namespace}</Link>
                    ),
                  },
                  { header: 'Products', cell: (r) => r.products.join(', ') },
                  { header: 'Objects', cell: (r) => r.objects },
                  ...quantityColumns<NamespaceRow>(month),
                ]}
              />
              <p>
                Totals over {totals.rows} {totals.rows === 1 ? 'namespace' : 'namespaces'} and all months:{' '}
                {QUANTITIES.map(([q, label]) => `${amount(totals[q])} ${label}`).join(', ')}.
              </p>
            </>
          )
        }
      </Report>
    </Section>
  );
}

const objectName = (r: ObjectRow) => `${r.kind}/${r.name}`;

function NamespaceScreen({ org }: { org: string }) {
  const { cluster = '', namespace = '' } = useParams();
  const report = useReport(['org-usage', org, 'namespace', cluster, namespace], () =>
    ok(api.GET('/dbaas/billing/reports/clusters/{clusterID}/namespaces/{namespaceName}', { params: { path: { clusterID: cluster, namespaceName: namespace }, query: { org } } })),
  );
  const months = useMemo(() => monthsIn(report.data?.rows ?? []), [report.data]);
  const { quantity, month, choices } = useChoices(months);
  const [params] = useSearchParams();
  const back = `/orgs/${encodeURIComponent(org)}/usage${params.toString() ? `?${params.toString()}` : ''}`;
  const clusterName = report.data?.rows[0]?.clusterName || cluster;
  return (
    <Section title={`Namespace ${namespace} on ${clusterName}`} actions={<PrintButton />}>
      <p className="no-print">
        <Link to={back}>Every namespace of {org}</Link>
      </p>
      {choices}
      <Report loaded={report}>
        {({ rows, totals }) =>
          rows.length === 0 ? (
            <p className="empty">No licensed object of {namespace} reported usage.</p>
          ) : (
            <>
              <MonthlyChart rows={rows} name={objectName} by="object" quantity={quantity} subject={namespace} />
              <Table
                caption={`Objects of ${namespace}, ${month ? monthLabel(month) : 'all months'}`}
                rows={month ? rows.filter((r) => r.months.some((p) => p.month === month)) : rows}
                rowKey={(r) => `${r.product}/${r.objectID}`}
                columns={[
                  { header: 'Product', cell: (r) => r.product },
                  { header: 'Kind', cell: (r) => r.kind },
                  { header: 'Name', cell: (r) => r.name },
                  { header: 'Version', cell: (r) => r.version || '—' },
                  { header: 'Topology', cell: (r) => r.topology },
                  { header: 'Replicas', cell: (r) => r.replicas },
                  ...quantityColumns<ObjectRow>(month),
                ]}
              />
              <p>
                Totals over {totals.rows} {totals.rows === 1 ? 'object' : 'objects'} and all months:{' '}
                {QUANTITIES.map(([q, label]) => `${amount(totals[q])} ${label}`).join(', ')}.
              </p>
            </>
          )
        }
      </Report>
    </Section>
  );
}
