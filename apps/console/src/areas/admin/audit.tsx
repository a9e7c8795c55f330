import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { ErrorMessage, Field, Section, Table, when } from '../../ui';
import { useExistingPage } from '../../ui/paging';
import { Pager } from '../orgs/paging';
import { adminKeys, fetchAuditEvents, type AuditEvent, type AuditFilters } from './admin-users-api';
import { rfc3339 } from './context';

// The audit trail (docs/audit.md) for site admins: who changed what, on what, when. The filters and the page live
// in the address as the API takes them (`?actor=&action=&target=&since=&until=&page=`), so a filtered view can be
// linked to.

const PAGE_SIZE = 20;
const FILTERS = ['actor', 'action', 'target', 'since', 'until'] as const;

/** An RFC 3339 time as a `datetime-local` value in the browser's time (empty when it is not one). */
function localInput(value: string | undefined): string {
  const date = value ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) return '';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
}

export default function Audit() {
  const [params, setParams] = useSearchParams();
  const filters: AuditFilters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? undefined]).filter(([, v]) => v));
  const page = Math.max(1, Math.trunc(Number(params.get('page'))) || 1);
  const events = useQuery({
    queryKey: adminKeys.auditPage(filters, page, PAGE_SIZE),
    queryFn: () => fetchAuditEvents(filters, page, PAGE_SIZE),
    placeholderData: keepPreviousData,
  });
  useExistingPage(page, events.isPlaceholderData ? undefined : events.data?.total, PAGE_SIZE);
  const [problem, setProblem] = useState<string>();
  const filtered = Object.keys(filters).length > 0;

  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const typed = (name: string) => String(data.get(name) ?? '').trim();
    const since = rfc3339(typed('since'));
    const until = rfc3339(typed('until'));
    if (typed('since') && !since) return setProblem('From is not a date and time.');
    if (typed('until') && !until) return setProblem('To is not a date and time.');
    if (since && until && since > until) return setProblem('From is after To: nothing could match.');
    setProblem(undefined);
    let target = typed('target');
    // The target filter is a prefix of the path changed, which always starts with a slash.
    if (target && !target.startsWith('/')) target = `/${target}`;
    const next: Record<string, string> = { actor: typed('actor'), action: typed('action'), target, since: since ?? '', until: until ?? '' };
    setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v)));
  };
  const goTo = (next: number) => setParams({ ...(filters as Record<string, string>), ...(next > 1 && { page: String(next) }) });

  return (
    <>
      <h1>Audit events</h1>
      <Section title="Filters">
        {/* Keyed by the address so Clear and the browser's back button show the filters in force. */}
        <form aria-label="Filter audit events" className="form" onSubmit={apply} noValidate key={params.toString()}>
          <Field label="Actor" name="actor" hint="A login" defaultValue={filters.actor} />
          <Field label="Action" name="action" hint="As the API document names it, e.g. adminEditUser" defaultValue={filters.action} />
          <Field label="Target" name="target" hint="The start of the path changed, e.g. /orgs/acme" defaultValue={filters.target} />
          <Field label="From" name="since" type="datetime-local" defaultValue={localInput(filters.since)} />
          <Field label="To" name="until" type="datetime-local" defaultValue={localInput(filters.until)} />
          <button type="submit">Filter</button>
          {filtered && (
            <button type="button" onClick={() => setParams({})}>
              Clear filters
            </button>
          )}
          {problem && (
            <p role="alert" className="error">
              {problem}
            </p>
          )}
        </form>
      </Section>
      <Section title="Events">
        {events.error ? (
          <ErrorMessage error={events.error} />
        ) : !events.data ? (
          <p aria-busy="true">Loading…</p>
        ) : (
          <>
            <Table<AuditEvent>
              caption={`Audit events${filtered ? ' matching the filters' : ''} (${events.data.total})`}
              rows={events.data.items}
              rowKey={(e) => e.id}
              pageSize={PAGE_SIZE}
              empty={filtered ? 'none match the filters.' : 'none yet.'}
              columns={[
                { header: 'When', cell: (e) => <time dateTime={e.time}>{when(e.time)}</time> },
                { header: 'Who', cell: (e) => <strong>{e.actor.login}</strong> },
                {
                  header: 'What',
                  cell: (e) => (
                    <>
                      {e.action}
                      <div className="muted">
                        <code>
                          {e.method} {e.route}
                        </code>
                      </div>
                    </>
                  ),
                },
                {
                  header: 'On what',
                  cell: (e) => (
                    <>
                      <code>{e.target}</code>
                      {e.org && <div className="muted">in {e.org}</div>}
                    </>
                  ),
                },
                { header: 'Status', cell: (e) => e.status },
                { header: 'Details', cell: (e) => <Details event={e} />, sortable: false },
              ]}
            />
            <Pager label="Audit events" page={page} limit={PAGE_SIZE} total={events.data.total} onPage={goTo} />
          </>
        )}
      </Section>
    </>
  );
}

function Details({ event }: { event: AuditEvent }) {
  return (
    <details>
      <summary>Details</summary>
      <dl>
        <dt>Actor id</dt>
        <dd>{event.actor.id}</dd>
        <dt>Request id</dt>
        <dd>
          <code>{event.request_id || '—'}</code>
        </dd>
        <dt>Client address</dt>
        <dd>{event.client || '—'}</dd>
        <dt>Event id</dt>
        <dd>
          <code>{event.id}</code>
        </dd>
        <dt>Time (UTC)</dt>
        <dd>{event.time}</dd>
      </dl>
    </details>
  );
}
