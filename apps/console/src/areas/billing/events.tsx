import { useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { Field, Form, Section, Show, Table, useAction, instant, when } from '../../ui';
import { useReport } from './api';
import { Choice } from './choice';
import { ActivityWindow, Facts, textOf, Trailed, useWindow } from './licensed-common';

/** The path of one licensed product, as every row below it takes it. */
interface ProductPath {
  uid: number;
  cid: string;
  lid: string;
  productName: string;
}

/**
 * One licensed product (`.../licenses/:lid/products/:product`, docs/resource-events.md): when it was received,
 * its events report, its stored events of the last days (each one's stored value on demand) and its resources,
 * asked live from the cluster.
 */
export function ProductScreen({ org }: { org: string }) {
  return (
    <Trailed org={org}>
      {({ uid, cid, lid, product }) =>
        cid && lid && product && <LicensedProduct org={org} path={{ uid, cid, lid, productName: product }} />
      }
    </Trailed>
  );
}

function LicensedProduct({ org, path }: { org: string; path: ProductPath }) {
  const limit = useWindow();
  const [rid, setRid] = useState<string>();
  const product = useReport(['product', org, path, limit], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/{productName}', { params: { path, query: { org, limit } } })),
  );
  return (
    <>
      <Section title={`Product ${path.productName}`}>
        <ActivityWindow />
        <Show loaded={product}>
          {(p) => (
            <Facts
              label={`Product ${p.productName} under license ${p.licenseID}`}
              facts={[
                ['Product', p.productName],
                ['Account', `${p.userName || 'deleted account'} (${p.userType || 'unknown'} ${p.userID})`],
                ['Email', p.email],
                ['Cluster', <code key="cid">{p.clusterID}</code>],
                ['License', <code key="lid">{p.licenseID}</code>],
                ['First received in the window', when(p.firstReceivedAt)],
                ['Last received', when(p.lastReceivedAt)],
              ]}
            />
          )}
        </Show>
      </Section>
      <EventsReport org={org} path={path} rid={rid} onRid={setRid} />
      <Events org={org} path={path} onReport={setRid} />
      <Resources org={org} path={path} />
    </>
  );
}

/** Group and resource filters: optional, free text as the cluster forms them, but one word each. */
function filterProblem(data: FormData, fields: [name: string, label: string][]): string | undefined {
  for (const [name, label] of fields) {
    const value = String(data.get(name) ?? '').trim();
    if (/\s/.test(value)) return `${label} is one word, without spaces`;
    if (value.length > 255) return `${label} is at most 255 characters`;
  }
  return undefined;
}

const optional = (data: FormData, name: string) => String(data.get(name) ?? '').trim() || undefined;

interface ReportFilter {
  group?: string;
  resource?: string;
}

function EventsReport({ org, path, rid, onRid }: { org: string; path: ProductPath; rid?: string; onRid: (rid?: string) => void }) {
  const [filter, setFilter] = useState<ReportFilter>({});
  const action = useAction();
  const report = useReport(['events-history', org, path, filter, rid], () =>
    ok(
      api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/{productName}/events-histories', {
        params: { path, query: { org, ...filter, rid } },
      }),
    ),
  );
  return (
    <Section title="Events report">
      <Form
        key={JSON.stringify([filter, rid])}
        label="Filter the events report"
        submitLabel="Show report"
        action={action}
        validate={(d) =>
          filterProblem(d, [
            ['group', 'API group'],
            ['resource', 'Resource'],
            ['rid', 'Resource key'],
          ])
        }
        submit={async (d) => {
          setFilter({ group: optional(d, 'group'), resource: optional(d, 'resource') });
          onRid(optional(d, 'rid'));
        }}
      >
        <Field label="API group" name="group" defaultValue={filter.group} placeholder="kubedb.com" />
        <Field label="Resource" name="resource" defaultValue={filter.resource} placeholder="mongodbs" hint="Plural resource name" />
        <Field label="Resource key" name="rid" defaultValue={rid} hint="One object: the key of its events" />
      </Form>
      <Show loaded={report}>{(r) => <ReportFacts report={r} />}</Show>
    </Section>
  );
}

function ReportFacts({ report: r }: { report: Schema<'EventsReport'> }) {
  const times = r.eventsTimeHistories;
  return (
    <>
      <Facts
        label="Events report"
        facts={[
          ['Events', r.totalEvents],
          ['API group', r.group],
          ['Resource', r.resource],
          ['Resource key', r.resourceID && <code key="rid">{r.resourceID}</code>],
          ['First event', when(times[0])],
          ['Last event', when(times.at(-1))],
          ['Over hours', r.eventsDurationHours.toLocaleString()],
          // 0 when the events span no time: no rate can be measured from one instant.
          [
            'Events an hour',
            r.eventsDurationHours > 0
              ? r.averageEventsPerHour.toLocaleString(undefined, { maximumSignificantDigits: 3 })
              : 'not measurable',
          ],
        ]}
      />
      <Table
        caption="Event times, oldest first"
        columns={[{ header: 'Time', cell: (t: string) => when(t), value: (t: string) => instant(t) }]}
        rows={times}
        rowKey={(t, i) => `${i}:${t}`}
      />
    </>
  );
}

const LAST_DAYS = Array.from({ length: 14 }, (_, i) => {
  const days = String(i + 1);
  return [days, i === 0 ? '1 day' : `${days} days`] as const;
});
type LastDays = (typeof LAST_DAYS)[number][0];

type StoredEvent = Schema<'ClusterResourceTabularForm'>;

function Events({ org, path, onReport }: { org: string; path: ProductPath; onReport: (rid: string) => void }) {
  const [lastDays, setLastDays] = useState<LastDays>('14');
  const [shown, setShown] = useState<{ key: string; version: number }>();
  const events = useReport(['events', org, path, lastDays], () =>
    ok(
      api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/{productName}/events/', {
        params: { path, query: { org, lastDays: Number(lastDays) } },
      }),
    ),
  );
  const object = (e: StoredEvent) => {
    // The object's metadata only (its kind is PartialObjectMetadata): namespace/name.
    const meta = e.partialResource.partialObjectMeta;
    const ns = textOf(meta, 'metadata', 'namespace');
    return `${ns ? `${ns}/` : ''}${textOf(meta, 'metadata', 'name')}`;
  };
  return (
    <Section title="Events">
      <div className="form">
        <Choice label="Events of the last" value={lastDays} options={LAST_DAYS} onChange={setLastDays} />
      </div>
      <Show loaded={events}>
        {(rows) => (
          <Table
            caption={`Resource events of the last ${lastDays === '1' ? 'day' : `${lastDays} days`}, newest first`}
            empty="no events."
            rows={rows}
            rowKey={(e) => `${e.key}@${e.version}`}
            columns={[
              { header: 'Key', cell: (e) => <code>{e.key}</code> },
              { header: 'Version', cell: (e) => e.version },
              { header: 'Time', cell: (e) => when(e.timestamp), value: (e) => instant(e.timestamp) },
              { header: 'Object', cell: object },
              { header: 'Generation', cell: (e) => textOf(e.partialResource.partialObjectMeta, 'metadata', 'generation') },
              {
                header: 'Actions',
                cell: (e) => (
                  <>
                    <button
                      type="button"
                      aria-label={`Show ${e.key} version ${e.version}`}
                      onClick={() => setShown({ key: e.key, version: e.version })}
                    >
                      Show
                    </button>{' '}
                    <button type="button" aria-label={`Events report of ${e.key}`} onClick={() => onReport(e.key)}>
                      Report
                    </button>
                  </>
                ),
              },
            ]}
          />
        )}
      </Show>
      {shown && <RawEvent org={org} path={path} event={shown} />}
    </Section>
  );
}

/** One stored event's value, as the resource history gives it. */
function RawEvent({ org, path, event }: { org: string; path: ProductPath; event: { key: string; version: number } }) {
  const raw = useReport(['raw', org, path, event], () =>
    ok(
      api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/{productName}/events/raw-event', {
        params: { path, query: { org, ...event } },
      }),
    ),
  );
  return (
    <>
      <h3>
        Event {event.key}, version {event.version}
      </h3>
      <Show loaded={raw}>
        {(v) => (
          <Facts
            label={`Event ${event.key} version ${event.version}`}
            facts={[
              ['Time', when(v.timestamp)],
              ['License', <code key="lid">{v.licenseID}</code>],
              ['Version', v.version],
              ['Object', <pre key="rid">{JSON.stringify(v.resourceID, null, 2)}</pre>],
            ]}
          />
        )}
      </Show>
    </>
  );
}

/** The product's resource history, asked from the cluster when the admin asks (it waits up to 5 s for an answer). */
function Resources({ org, path }: { org: string; path: ProductPath }) {
  const action = useAction();
  const [answer, setAnswer] = useState<{ filter: ReportFilter; list: Schema<'ResourceHistoryList'> }>();
  return (
    <Section title="Resources">
      <p className="muted">
        Asked live from the member cluster over the message bus; a cluster that does not answer within 5 seconds is named in the error.
      </p>
      <Form
        key={JSON.stringify(answer?.filter)}
        label="Ask the cluster for the product's resources"
        submitLabel="Ask the cluster"
        action={action}
        validate={(d) =>
          filterProblem(d, [
            ['group', 'API group'],
            ['resource', 'Resource'],
          ])
        }
        submit={async (d) => {
          const filter = { group: optional(d, 'group'), resource: optional(d, 'resource') };
          const list = await ok(
            api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/{productName}/resources', {
              params: { path, query: { org, ...filter } },
            }),
          );
          setAnswer({ filter, list });
          return `The cluster answered: ${list.items.length} ${list.items.length === 1 ? 'resource' : 'resources'}`;
        }}
      >
        <Field label="API group" name="group" defaultValue={answer?.filter.group} placeholder="kubedb.com" />
        <Field label="Resource" name="resource" defaultValue={answer?.filter.resource} placeholder="mongodbs" hint="Plural resource name" />
      </Form>
      {answer?.list.items.map((item) => (
        <Table
          key={item.key}
          caption={`${item.key}, last seen ${when(item.lastSeen)}`}
          rows={item.values}
          rowKey={(v) => v.version}
          columns={[
            { header: 'Version', cell: (v) => v.version },
            { header: 'Time', cell: (v) => when(v.timestamp), value: (v) => instant(v.timestamp) },
            { header: 'Kind', cell: (v) => textOf(v.resourceID, 'kind') },
            { header: 'Namespace', cell: (v) => textOf(v.resourceID, 'namespace') },
            { header: 'Name', cell: (v) => textOf(v.resourceID, 'name') },
            { header: 'License', cell: (v) => <code>{v.licenseID}</code> },
          ]}
        />
      ))}
      {answer && answer.list.items.length === 0 && <p className="empty">The cluster has no resources of this product.</p>}
    </Section>
  );
}
