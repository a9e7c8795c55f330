import { useSearchParams } from 'react-router';
import { api, ok, type Schema } from '../../api/client';
import { useQuery } from '@tanstack/react-query';
import type { paths } from '../../api/gen/schema';
import { Field, Form, Section, Show, Table, missing, useAction, instant, when } from '../../ui';
import { siteKeys, useOutageTags, useSiteChange } from './api';
import { TextArea } from '../../ui/controls';
import { decimal, inAdminOrg, rfc3339 } from './context';
import { NotOnThisDeployment, ShowGated } from './controls';

// System outages (docs/system-outages.md): site admins record the platform's outages and read a report over them.
// The rows belong to the billing dashboard: on a deployment without BILLING_ENABLED they answer 404.

type Report = Schema<'SystemOutagesAndReportAPIForm'>;
type Outage = Schema<'SystemOutageApiForm'>;
type EntityDuration = Schema<'OutageEntityDuration'>;

/** The report's filters, kept in the address so a filtered report can be shared and survives a reload. */
interface Filters {
  start?: string;
  account_id?: number;
  cluster_id?: string;
  tags?: string[];
}

function filtersOf(params: URLSearchParams): Filters {
  const account = Number(params.get('account_id'));
  return {
    start: params.get('start') || undefined,
    account_id: Number.isInteger(account) && account > 0 ? account : undefined,
    cluster_id: params.get('cluster_id') || undefined,
    tags: params.getAll('tags').length ? params.getAll('tags') : undefined,
  };
}

const gatedOff = (
  <NotOnThisDeployment
    feature="System outages"
    why="They belong to the billing dashboard, which this deployment does not run (it is enabled with BILLING_ENABLED=true)."
  />
);

export default function Outages() {
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const report = useQuery({
    queryKey: siteKeys.outageReport(filters),
    queryFn: () => ok(api.GET('/dashboard/system-outages/report', { params: { query: { ...inAdminOrg, ...filters } } })),
  });
  const tags = useOutageTags();
  return (
    <>
      <h1>System outages</h1>
      {/* The tags answer without filters: it tells whether the rows exist here, while a refused filter stays fixable. */}
      <ShowGated loaded={tags} gated={gatedOff}>
        {(known) => (
          <>
            <RecordOutage />
            <Section
              title="Report"
              actions={
                params.size > 0 && (
                  <button type="button" onClick={() => setParams(new URLSearchParams())}>
                    Clear filters
                  </button>
                )
              }
            >
              <ReportFilters key={params.toString()} filters={filters} tags={known} apply={setParams} />
              <Show loaded={report}>{(data) => <ReportView report={data} filtered={params.size > 0} />}</Show>
            </Section>
          </>
        )}
      </ShowGated>
    </>
  );
}

type NewOutage = paths['/dashboard/system-outages/']['post']['requestBody']['content']['application/json'];

/** Recording an outage changes the report and may add tags: the outage keys are asked again. */
function RecordOutage() {
  const action = useAction();
  const recording = useSiteChange(siteKeys.outages, (body: NewOutage) =>
    ok(api.POST('/dashboard/system-outages/', { params: { query: inAdminOrg }, body })),
  );
  return (
    <Section title="Record a system outage">
      <Form
        label="Record a system outage"
        submitLabel="Record outage"
        action={action}
        validate={validateOutage}
        submit={async (data) => {
          const text = (name: string) => String(data.get(name) ?? '').trim();
          const outage = await recording.mutateAsync({
            start: rfc3339(text('start'))!,
            end: rfc3339(text('end'))!,
            accountName: text('accountName') || undefined,
            clusterID: text('clusterID') || undefined,
            tags: splitTags(text('tags')),
            comments: text('comments') || undefined,
          });
          return `Recorded outage ${outage.id} (${when(outage.start)} – ${when(outage.end)}).`;
        }}
      >
        <Field label="Start" name="start" type="datetime-local" required hint="Your local time" />
        <Field label="End" name="end" type="datetime-local" required hint="After the start" />
        <Field label="Account name" name="accountName" hint="A user or organization; empty: none" />
        <Field label="Cluster ID" name="clusterID" hint="Empty: none" />
        <Field label="Tags" name="tags" hint="Separated by commas" />
        <TextArea label="Comments" name="comments" rows={2} />
      </Form>
    </Section>
  );
}

const splitTags = (value: string) => {
  const tags = value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return tags.length ? tags : undefined;
};

function validateOutage(data: FormData): string | undefined {
  const absent = missing(data, ['start', 'Start'], ['end', 'End']);
  if (absent) return absent;
  const start = rfc3339(String(data.get('start')));
  const end = rfc3339(String(data.get('end')));
  if (!start) return 'Start is not a date and time';
  if (!end) return 'End is not a date and time';
  if (end <= start) return 'End must be after the start';
  return undefined;
}

/** The report's query: outages ending after a time, of one account or cluster, carrying any of some tags. */
function ReportFilters({ filters, tags, apply }: { filters: Filters; tags: string[]; apply: (params: URLSearchParams) => void }) {
  const action = useAction();
  // The address keeps RFC 3339; the input shows it as local time.
  const startLocal = filters.start ? toLocalInput(filters.start) : undefined;
  return (
    <Form
      label="Report filters"
      submitLabel="Show report"
      action={action}
      validate={(data) => {
        const start = String(data.get('start') ?? '');
        if (start && !rfc3339(start)) return 'Report from is not a date and time';
        const account = String(data.get('account_id') ?? '').trim();
        if (account && !/^[1-9]\d*$/.test(account)) return 'Account ID must be a positive whole number';
        return undefined;
      }}
      submit={async (data) => {
        const next = new URLSearchParams();
        const start = rfc3339(String(data.get('start') ?? ''));
        if (start) next.set('start', start);
        for (const name of ['account_id', 'cluster_id']) {
          const value = String(data.get(name) ?? '').trim();
          if (value) next.set(name, value);
        }
        for (const tag of data.getAll('tags')) next.append('tags', String(tag));
        apply(next);
      }}
    >
      <Field label="Report from" name="start" type="datetime-local" defaultValue={startLocal} hint="Outages ending after it (local time)" />
      <Field label="Account ID" name="account_id" type="number" min={1} defaultValue={filters.account_id} />
      <Field label="For cluster" name="cluster_id" defaultValue={filters.cluster_id} hint="A cluster ID" />
      <fieldset>
        <legend>Tags (any of)</legend>
        {tags.length === 0 && <span className="muted">No tags recorded yet.</span>}
        {tags.map((tag) => (
          <label key={tag}>
            <input type="checkbox" name="tags" value={tag} defaultChecked={filters.tags?.includes(tag)} /> {tag}
          </label>
        ))}
      </fieldset>
    </Form>
  );
}

/** RFC 3339 as a `datetime-local` value in the browser's time zone. */
function toLocalInput(value: string): string | undefined {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

const hoursOf = (o: Outage) => (new Date(o.end).getTime() - new Date(o.start).getTime()) / 3_600_000;

function ReportView({ report: { report, entries }, filtered }: { report: Report; filtered: boolean }) {
  return (
    <>
      <dl className="grid" aria-label="Totals">
        <div>
          <dt className="muted">Total outages</dt>
          <dd>{report.totalOutages}</dd>
        </div>
        <div>
          <dt className="muted">Total duration</dt>
          <dd>{decimal(report.totalDurationHours)} h</dd>
        </div>
      </dl>
      <div className="grid">
        <Table
          caption="Top tags"
          rows={report.topTagsPercentage}
          rowKey={(t) => t.tag}
          empty="No tags."
          columns={[
            { header: 'Tag', cell: (t) => t.tag },
            { header: 'Share of outages', cell: (t) => `${decimal(t.percentage, 1)} %` },
          ]}
        />
        <DurationTable caption="Top accounts by duration" entity="Account" rows={report.topAccountsDuration} />
        <DurationTable caption="Top clusters by duration" entity="Cluster" rows={report.topClustersDuration} />
      </div>
      <Table
        caption="Outages"
        rows={entries}
        rowKey={(o) => o.id}
        empty={filtered ? 'No outage matches these filters.' : 'No outages recorded.'}
        columns={[
          { header: 'ID', cell: (o) => o.id },
          { header: 'Start', cell: (o) => when(o.start), value: (o) => instant(o.start) },
          { header: 'End', cell: (o) => when(o.end), value: (o) => instant(o.end) },
          { header: 'Hours', cell: (o) => decimal(hoursOf(o)) },
          { header: 'Account', cell: (o) => (o.accountID ? `${o.accountName} (${o.accountID})` : '—') },
          { header: 'Cluster', cell: (o) => o.clusterID || '—' },
          { header: 'Tags', cell: (o) => o.tags.join(', ') || '—' },
          { header: 'Comments', cell: (o) => o.comments || '—' },
          { header: 'Recorded', cell: (o) => when(o.createdAt), value: (o) => instant(o.createdAt) },
        ]}
      />
    </>
  );
}

function DurationTable({ caption, entity, rows }: { caption: string; entity: string; rows: EntityDuration[] }) {
  return (
    <Table
      caption={caption}
      rows={rows}
      rowKey={(r) => r.entity}
      empty="None."
      columns={[
        { header: entity, cell: (r) => (r.entityName && r.entityName !== r.entity ? `${r.entityName} (${r.entity})` : r.entity) },
        { header: 'Hours', cell: (r) => decimal(r.durationHours) },
        { header: 'Share of duration', cell: (r) => `${decimal(r.percentage, 1)} %` },
      ]}
    />
  );
}
