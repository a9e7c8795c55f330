import { Gauge, Section, Show, when } from '../../ui';
import { quotaMetricName } from '../../ui/quantities';
import type { Loaded } from '../../ui/data';
import type { Contract, QuotaUsage } from './api';

/**
 * A contract's quota and how much of it is used, as the platform measures it: the quota-usage route answers what the
 * bound clusters reported since the contract's start, measured when asked, the same figure issuing a license checks
 * and the quota notices (and their audit events) name. So the gauge always agrees with the audit trail, whether or
 * not a license was ever issued.
 */
export function QuotaSection({ contract, usage }: { contract: Pick<Contract, 'quota'>; usage: Loaded<QuotaUsage> }) {
  const q = contract.quota;
  if (!q.enabled)
    return (
      <Section title="Quota">
        <p>No quota: licenses are not limited by usage.</p>
      </Section>
    );
  const unit = quotaMetricName(q.metric);
  return (
    <Section title="Quota">
      <dl>
        <dt>Limit</dt>
        <dd>
          {q.limit.toLocaleString()} {unit} (<code>{q.metric}</code>)
        </dd>
        <dt>Alerts at</dt>
        <dd>{q.alertThresholds.length ? q.alertThresholds.map((t) => `${t}%`).join(', ') : 'none'}</dd>
        <dt>When used up</dt>
        <dd>{q.disableLicenseOnLimitReached ? 'No more licenses are issued' : 'Licenses are still issued'}</dd>
      </dl>
      <Show loaded={usage} part="the quota's usage">
        {(u) => (
          <>
            <Gauge label={`Quota used (${unit})`} value={round(u.used)} max={q.limit} unit={unit} />
            <p className="muted">
              {u.used >= q.limit ? 'The quota is used up. ' : ''}
              Measured at {when(u.measuredUnix)} from what the bound clusters reported since the contract’s start, as issuing a license
              measures it.
            </p>
          </>
        )}
      </Show>
    </Section>
  );
}

/** Two decimals, as the quota's messages and audit events give it. */
const round = (n: number) => Math.round(n * 100) / 100;
