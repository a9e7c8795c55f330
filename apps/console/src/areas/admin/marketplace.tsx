import { useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { useBranding } from '../../branding';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Outcome, Section, Show, Table, useAction, instant, when } from '../../ui';
import { siteKeys, useMarketplaceWarnings, useSiteChange, useSubscriptions } from './api';
import { ConfirmButton } from '../../ui/controls';
import { inAdminOrg } from './context';
import { NotOnThisDeployment, ShowGated } from './controls';

// Marketplace subscriptions (docs/marketplaces.md, "The dashboard rows"): what the three cloud marketplaces bought,
// the listener's configuration warnings, and per subscription its details, readiness ping, revocation and audit log.
// The rows are the billing dashboard's (404 without BILLING_ENABLED); subscriptions exist on marketplace deployments.

type Subscription = Schema<'MarketplaceSubscription'>;
type Detail = Schema<'MarketplaceSubscriptionDetail'>;
type AuditEvent = Schema<'MarketplaceAuditEvent'>;
interface Chosen {
  marketplace: Subscription['marketplace'];
  subscriptionId: string;
}

const gatedOff = (
  <NotOnThisDeployment
    feature="Marketplace"
    why="The marketplace rows belong to the billing dashboard, which this deployment does not run (it is enabled with BILLING_ENABLED=true)."
  />
);

/** The second provider reports no usage through this platform, so it has no readiness to ping. */
const METERED = new Set<Subscription['marketplace']>(['ProviderA', 'ProviderC']);

export default function Marketplace() {
  const subscriptions = useSubscriptions();
  const client = useQueryClient();
  const [chosen, setChosen] = useState<Chosen>();
  return (
    <>
      <h1>Marketplace</h1>
      <ShowGated loaded={subscriptions} gated={gatedOff}>
        {(rows) => (
          <>
            <Section
              title="Subscriptions"
              actions={
                <button type="button" onClick={() => void client.invalidateQueries({ queryKey: siteKeys.marketplace })}>
                  Refresh subscriptions
                </button>
              }
            >
              <SubscriptionTable rows={rows} chosen={chosen} choose={setChosen} />
            </Section>
            {chosen && (
              <SubscriptionDetail
                key={`${chosen.marketplace}/${chosen.subscriptionId}`}
                chosen={chosen}
                close={() => setChosen(undefined)}
              />
            )}
            <SettingsWarnings />
          </>
        )}
      </ShowGated>
    </>
  );
}

function SubscriptionTable({ rows, chosen, choose }: { rows: Subscription[]; chosen?: Chosen; choose: (s: Chosen) => void }) {
  const { branding } = useBranding();
  const deployment = branding?.deploymentType ?? '';
  // On Hosted and SelfHostedProduction the listener gets no notifications: an empty list is expected there.
  const empty = deployment.endsWith('Marketplace')
    ? 'No subscriptions yet.'
    : `No subscriptions: this deployment${deployment ? ` (${deployment})` : ''} is not a marketplace deployment, so no marketplace notifies it.`;
  return (
    <Table
      caption="Marketplace subscriptions, most recently updated first"
      rows={rows}
      rowKey={(s) => `${s.marketplace}/${s.subscriptionId}`}
      empty={empty}
      columns={[
        { header: 'Marketplace', cell: (s) => s.marketplace },
        { header: 'Subscription', cell: (s) => <code>{s.subscriptionId}</code> },
        { header: 'State', cell: (s) => <StateText state={s.state} />, value: (s) => s.state },
        { header: 'Revocable', cell: (s) => (s.isRevocable ? 'yes' : 'no') },
        { header: 'Billing events sent', cell: (s) => s.noOfBillingEventSent.toLocaleString() },
        { header: 'Subscriber org ID', cell: (s) => s.subscriberId || '—' },
        { header: 'Created', cell: (s) => when(s.createdAt), value: (s) => instant(s.createdAt) },
        { header: 'Last updated', cell: (s) => when(s.lastUpdatedAt), value: (s) => instant(s.lastUpdatedAt) },
        {
          header: 'Actions',
          cell: (s) => (
            <button
              type="button"
              aria-label={`Details of ${s.subscriptionId}`}
              aria-pressed={chosen?.marketplace === s.marketplace && chosen.subscriptionId === s.subscriptionId}
              onClick={() => choose({ marketplace: s.marketplace, subscriptionId: s.subscriptionId })}
            >
              Details
            </button>
          ),
        },
      ]}
    />
  );
}

function StateText({ state }: { state: Subscription['state'] }) {
  const tone = state === 'Running' || state === 'Bounded' ? 'done' : state === 'Failed' || state === 'DeletionFailed' ? 'error' : 'muted';
  return <span className={tone}>{state}</span>;
}

function SubscriptionDetail({ chosen, close }: { chosen: Chosen; close: () => void }) {
  const path = { marketplace: chosen.marketplace, subscriptionId: chosen.subscriptionId };
  const detail = useQuery({
    queryKey: siteKeys.subscription(path.marketplace, path.subscriptionId),
    queryFn: () => ok(api.GET('/dashboard/marketplaces/{marketplace}/{subscriptionId}', { params: { path, query: inAdminOrg } })),
  });
  const audit = useQuery({
    queryKey: siteKeys.subscriptionAudit(path.marketplace, path.subscriptionId),
    queryFn: () =>
      ok(api.GET('/dashboard/marketplaces/{marketplace}/{subscriptionId}/audit-logs', { params: { path, query: inAdminOrg } })),
  });
  // Revoking changes the subscription, its audit log and the list: every subscription key is asked again.
  const revocation = useSiteChange(siteKeys.subscriptions, () =>
    ok(api.DELETE('/dashboard/marketplaces/{marketplace}/{subscriptionId}', { params: { path, query: inAdminOrg } })),
  );
  const ping = useAction();
  const revoke = useAction();
  const doPing = () =>
    ping.run(async () => {
      const r = await ok(api.GET('/dashboard/marketplaces/{marketplace}/{subscriptionId}/ping', { params: { path, query: inAdminOrg } }));
      return `${r.marketplace} metering ${r.ready ? 'is ready' : 'is not ready'}: ${r.message}`;
    });
  const doRevoke = () =>
    revoke.run(async () => {
      const r = await revocation.mutateAsync(undefined);
      return `Subscription ${r.subscriptionId} is ${r.state}; its contracts are revoked.`;
    });
  return (
    <Section
      title={`Subscription ${chosen.subscriptionId}`}
      actions={
        <button type="button" onClick={close}>
          Close details
        </button>
      }
    >
      <Show loaded={detail}>
        {(d) => (
          <>
            <DetailList detail={d} />
            <div className="form">
              {METERED.has(d.marketplace) ? (
                <button type="button" onClick={() => void doPing()} disabled={ping.busy}>
                  {ping.busy ? 'Pinging…' : 'Ping metering'}
                </button>
              ) : (
                <span className="muted">{d.marketplace} reports no usage here: nothing to ping.</span>
              )}
              {d.isRevocable ? (
                <ConfirmButton
                  label="Revoke subscription"
                  confirmLabel={`Confirm revoke ${d.subscriptionId}`}
                  busy={revoke.busy}
                  onConfirm={() => void doRevoke()}
                />
              ) : (
                <span className="muted">Not revocable ({d.state}).</span>
              )}
            </div>
            <Outcome action={ping} />
            <Outcome action={revoke} />
          </>
        )}
      </Show>
      <h3>Audit log</h3>
      <Show loaded={audit}>{(a) => <AuditLog periods={a.auditReports} />}</Show>
    </Section>
  );
}

function DetailList({ detail }: { detail: Detail }) {
  const billing = detail.providerABillingDetails ?? detail.providerBBillingDetails ?? detail.providerCBillingDetails ?? {};
  const rows: [string, string][] = [
    ['Marketplace', detail.marketplace],
    ['State', detail.state],
    ['Revocable', detail.isRevocable ? 'yes' : 'no'],
    ['Bound installer', detail.boundedInstallerId || '—'],
    ['Subscriber org ID', String(detail.subscriberId || '—')],
    ['Requester ID', String(detail.requesterId || '—')],
    ['Billing events sent', detail.noOfBillingEventSent.toLocaleString()],
    ['Created', when(detail.createdAt)],
    ['Last updated', when(detail.lastUpdatedAt)],
    // Billing details never hold a secret (docs/marketplaces.md); nested values show as JSON.
    ...Object.entries(billing).map(([key, value]): [string, string] => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
  ];
  return (
    <dl className="grid" aria-label="Subscription details">
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt className="muted">{term}</dt>
          <dd>
            <code>{value}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Audit periods (UTC months), newest first as answered; each period's entries oldest first. */
function AuditLog({ periods }: { periods: Record<string, AuditEvent[]> }) {
  const entries = Object.entries(periods);
  if (entries.length === 0) return <p className="empty">No audit entries.</p>;
  return (
    <>
      {entries.map(([period, events]) => (
        <Table
          key={period}
          caption={`Audit period ${period}`}
          rows={events}
          rowKey={(e, i) => `${e.timestamp}#${i}`}
          columns={[
            { header: 'Time', cell: (e) => when(e.timestamp), value: (e) => instant(e.timestamp) },
            { header: 'Operation', cell: (e) => e.operationType },
            { header: 'Status', cell: (e) => e.status },
            { header: 'Description', cell: (e) => e.description },
            {
              header: 'Data',
              cell: (e) => (
                <details>
                  <summary>Data</summary>
                  <pre>
                    <code>{JSON.stringify(e.data, null, 2)}</code>
                  </pre>
                </details>
              ),
            },
          ]}
        />
      ))}
    </>
  );
}

/** Whether this deployment is one of the marketplaces' (`ProviderAMarketplace`, ...), where the listener answers. */
const isMarketplaceDeployment = (deploymentType: string | undefined) => deploymentType?.endsWith('Marketplace') ?? false;

/**
 * What is missing or wrong in each marketplace's configuration: Error (a feature cannot work) or Warning. They matter
 * on a marketplace deployment only: elsewhere (Hosted, SelfHostedProduction) no marketplace notifies the platform and
 * nothing is metered, so the settings are listed for reference, without alarm.
 */
function SettingsWarnings() {
  const warnings = useMarketplaceWarnings();
  const { branding } = useBranding();
  // Until the branding says which deployment this is, nothing is shown as an error.
  const applies = isMarketplaceDeployment(branding?.deploymentType);
  const tables = (w: Schema<'SettingWarnings'>) =>
    Object.entries(w.warnings).map(([marketplace, list]) => (
      <Table
        key={marketplace}
        caption={`${marketplace} configuration`}
        rows={list}
        rowKey={(_, i) => i}
        empty="No warnings."
        columns={[
          { header: 'Level', cell: (x) => <span className={applies && x.Level === 'Error' ? 'error' : 'muted'}>{x.Level}</span>, value: (x) => x.Level },
          { header: 'Message', cell: (x) => x.Msg },
        ]}
      />
    ));
  return (
    <Section title="Settings warnings">
      <Show loaded={warnings}>
        {(w) =>
          applies || branding === undefined ? (
            tables(w)
          ) : (
            <>
              <p className="muted">
                This deployment ({branding?.deploymentType}) is not a marketplace deployment: no marketplace notifies it and nothing is metered,
                so the marketplaces' settings do not apply here.
              </p>
              <details>
                <summary>The marketplaces' settings as they are</summary>
                {tables(w)}
              </details>
            </>
          )
        }
      </Show>
    </Section>
  );
}
