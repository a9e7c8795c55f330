import { useId, useState } from 'react';
import { Field, Form, Outcome, Section, Show, Table, useAction, instant, when } from '../../ui';
import { Choices } from '../../ui/choices';
import { ConfirmButton } from '../../ui/controls';
import {
  EVENTS,
  useCreateEndpoint,
  useDeleteEndpoint,
  useDeliveries,
  useEndpoints,
  useMails,
  useSetEndpointEnabled,
  type CreatedWebhookEndpoint,
  type NoticeEvent,
  type NoticeRoutes,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './api';

const MAX_URL = 2048;
const eventLabel = (event: string) => EVENTS.find(([e]) => e === event)?.[1] ?? event;

/**
 * The rules the API applies to a new endpoint, checked before sending; the API checks them again (and also refuses
 * a host that does not resolve or resolves to a private address) and its message is shown if it refuses.
 */
export function endpointProblem(data: FormData): string | undefined {
  const url = String(data.get('url') ?? '').trim();
  if (!url) return 'URL is required';
  if (url.length > MAX_URL) return `URL: at most ${MAX_URL} characters`;
  if (!/^https:\/\//i.test(url)) return 'URL: must start with https://';
  if (data.getAll('events').length === 0) return 'Events: choose at least one';
  return undefined;
}

/** Webhook endpoints of one side: listed, registered (the secret shown once), enabled or disabled, deleted. */
export function Webhooks({ routes }: { routes: NoticeRoutes }) {
  const endpoints = useEndpoints(routes);
  const creation = useCreateEndpoint(routes);
  const switching = useSetEndpointEnabled(routes);
  const removal = useDeleteEndpoint(routes);
  const create = useAction();
  const change = useAction();
  const [made, setMade] = useState<CreatedWebhookEndpoint>();
  const toggle = (e: WebhookEndpoint) =>
    change.run(async () => {
      await switching.mutateAsync({ id: e.id, enabled: !e.enabled });
      return e.enabled ? `Disabled ${e.url}: nothing is sent to it until it is enabled.` : `Enabled ${e.url}: its pending deliveries go out.`;
    });
  const remove = (e: WebhookEndpoint) =>
    change.run(async () => {
      await removal.mutateAsync(e.id);
      if (made?.id === e.id) setMade(undefined);
      return `Deleted ${e.url} and its deliveries.`;
    });
  return (
    <Section title="Webhook endpoints">
      <p className="muted">
        {routes.org
          ? `HTTPS endpoints told about the contracts of ${routes.org}: each delivery is a signed POST (X-Platform-Signature).`
          : 'HTTPS endpoints told about every contract: each delivery is a signed POST (X-Platform-Signature).'}
      </p>
      {made && <NewSecret endpoint={made} onDone={() => setMade(undefined)} />}
      <Show loaded={endpoints}>
        {(list) => (
          <Table
            caption={routes.org ? `Webhook endpoints of ${routes.org} (${list.length})` : `Site-wide webhook endpoints (${list.length})`}
            rows={list}
            rowKey={(e) => e.id}
            empty="none yet; register one below."
            columns={[
              { header: 'URL', cell: (e) => <code>{e.url}</code> },
              { header: 'Events', cell: (e) => e.events.map(eventLabel).join(', ') },
              {
                header: 'Status',
                cell: (e) =>
                  e.enabled ? (
                    `Enabled${e.failuresInRow ? ` (${e.failuresInRow} failed in a row)` : ''}`
                  ) : (
                    <span className="muted">Disabled{e.disabledReason ? `: ${e.disabledReason}` : ''}</span>
                  ),
              },
              { header: 'Registered', cell: (e) => `${when(e.createdAt)}${e.createdBy ? ` by ${e.createdBy}` : ''}` },
              {
                header: 'Actions',
                cell: (e) => (
                  <>
                    <button type="button" disabled={change.busy} onClick={() => void toggle(e)} aria-label={`${e.enabled ? 'Disable' : 'Enable'} ${e.url}`}>
                      {e.enabled ? 'Disable' : 'Enable'}
                    </button>{' '}
                    <ConfirmButton label={`Delete ${e.url}`} confirmLabel={`Confirm delete ${e.url}`} busy={change.busy} onConfirm={() => void remove(e)} />
                  </>
                ),
              },
            ]}
          />
        )}
      </Show>
      <Outcome action={change} />
      <h3>New endpoint</h3>
      <Form
        action={create}
        label="Register webhook endpoint"
        submitLabel="Register endpoint"
        validate={endpointProblem}
        submit={async (data) => {
          const events = data.getAll('events').map(String) as NoticeEvent[];
          setMade(await creation.mutateAsync({ url: String(data.get('url')).trim(), events }));
        }}
      >
        <Field label="URL" name="url" type="url" required placeholder="https://hooks.example.com/platform" hint="https:// only; private and loopback addresses are refused" autoComplete="off" />
        <Choices legend="Events" name="events" choices={EVENTS.map(([value, label]) => ({ value, label }))} checked={new Set(EVENTS.map(([e]) => e))} />
      </Form>
    </Section>
  );
}

/**
 * An endpoint just registered, with its signing secret: the API answers it once and keeps it sealed, so this is the
 * one chance to copy it. It goes when the person says they have it, or leaves the page.
 */
function NewSecret({ endpoint, onDone }: { endpoint: CreatedWebhookEndpoint; onDone: () => void }) {
  const id = useId();
  return (
    <div className="new-secret" role="region" aria-label={`Signing secret of ${endpoint.url}`}>
      <p>
        <strong>Copy the signing secret now: you will not see it again.</strong> Your receiver recomputes the HMAC-SHA256 of
        <code> t.body</code> with it and compares it with <code>v1</code> of <code>X-Platform-Signature</code>.
      </p>
      <div className="form">
        <div className="field">
          <label htmlFor={id}>Signing secret</label>
          <input id={id} className="secret" readOnly autoFocus value={endpoint.secret} size={42} onFocus={(e) => e.currentTarget.select()} />
        </div>
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}

const STATUS: Record<WebhookDelivery['status'], string> = { pending: 'Pending', delivered: 'Delivered', failed: 'Failed' };

/** The delivery log of one side, newest first. */
export function Deliveries({ routes }: { routes: NoticeRoutes }) {
  const deliveries = useDeliveries(routes);
  return (
    <Section title="Delivery log">
      <Show loaded={deliveries}>
        {(list) => (
          <Table
            caption={`Deliveries (webhooks and mails), newest first (${list.length})`}
            rows={list}
            // Ids are unique within a channel: a mail and a webhook delivery may share one.
            rowKey={(d) => `${d.channel}:${d.id}`}
            empty="none yet."
            columns={[
              { header: 'When', cell: (d) => when(d.createdAt), value: (d) => instant(d.createdAt) },
              { header: 'Event', cell: (d) => eventLabel(d.event) },
              { header: 'Contract', cell: (d) => d.contractId || '—' },
              { header: 'Channel', cell: (d) => (d.channel === 'mail' ? 'Mail' : 'Webhook') },
              { header: 'To', cell: (d) => (d.channel === 'mail' ? d.recipient : <code>{d.url}</code>), value: (d) => (d.channel === 'mail' ? d.recipient : d.url) },
              { header: 'Status', cell: (d) => STATUS[d.status] ?? d.status },
              { header: 'Attempts', cell: (d) => d.attempts },
              { header: 'Response', cell: (d) => (d.responseCode ? d.responseCode : '—') },
              {
                header: 'Last error',
                cell: (d) => d.lastError || (d.status === 'pending' && d.attempts > 0 ? `next attempt ${when(d.nextAttemptAt)}` : '—'),
              },
            ]}
          />
        )}
      </Show>
    </Section>
  );
}

/** The notice mails sent, or kept when no SMTP server is set (site admins), each openable to read its text. */
export function Mails() {
  const mails = useMails();
  return (
    <Section title="Mails">
      <p className="muted">Mails are kept here instead of sent while no SMTP server is set (SMTP_URL).</p>
      <Show loaded={mails}>
        {(list) => (
          <Table
            caption={`Notice mails, newest first (${list.length})`}
            rows={list}
            rowKey={(m) => m.id}
            empty="none yet."
            columns={[
              { header: 'When', cell: (m) => when(m.createdAt), value: (m) => instant(m.createdAt) },
              { header: 'To', cell: (m) => m.recipient },
              {
                header: 'Subject',
                cell: (m) => (
                  <details>
                    <summary>{m.subject}</summary>
                    <pre className="mail-text">{m.text}</pre>
                  </details>
                ),
              },
              { header: 'Contract', cell: (m) => m.contractId || '—' },
              { header: 'Status', cell: (m) => (m.status === 'kept' ? 'Kept (no SMTP)' : 'Sent') },
            ]}
          />
        )}
      </Show>
    </Section>
  );
}
