import { Gauge, Section, when } from '../../ui';
import { quotaMetricName } from '../../ui/quantities';
import type { AuditEvent, Contract } from './api';

/**
 * A contract's quota and how much of it is used. The API answers no usage figure with a contract or with the
 * cluster status routes: contracts-licensing computes it only when a license is issued, and says what it found
 * in two places, which the gauge reads: the audit event of a crossed alert threshold
 * (`quota-threshold-crossed: 80% of 100 cpu_core_month (used 85.00)`) and the 403 refusing a license once the
 * quota is used up (`contract 3 has used its quota: 2100.00 of 1 object-hours; ...`).
 */

export interface QuotaReading {
  used: number;
  metric: string;
  /** When it was computed (Unix seconds); absent for a refusal just answered. */
  at?: number;
}

const CROSSED = /^quota-threshold-crossed: \d+% of [\d.]+ (\S+) \(used ([\d.]+)\)$/;
const USED_UP = /has used its quota: ([\d.]+) of [\d.]+ ([\w-]+)/;

/** The latest usage an audit trail records for the quota's metric. */
export function readingFromAudit(events: AuditEvent[], metric: string): QuotaReading | undefined {
  let latest: QuotaReading | undefined;
  for (const e of events) {
    const m = CROSSED.exec(e.event);
    if (m && m[1] === metric && (!latest || e.createdUnix >= (latest.at ?? 0))) latest = { used: Number(m[2]), metric, at: e.createdUnix };
  }
  return latest;
}

/** The usage a refused license names, when the refusal is the quota's. */
export function readingFromRefusal(message: string): QuotaReading | undefined {
  const m = USED_UP.exec(message);
  return m ? { used: Number(m[1]), metric: m[2] } : undefined;
}

export function QuotaSection({ contract, reading }: { contract: Pick<Contract, 'quota'>; reading: QuotaReading | undefined }) {
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
      {reading && reading.metric === q.metric ? (
        <>
          <Gauge label={`Quota used (${unit})`} value={reading.used} max={q.limit} unit={unit} />
          <p className="muted">
            {reading.used >= q.limit ? 'The quota is used up. ' : ''}
            Computed {reading.at ? `at ${when(reading.at)}` : 'just now'} from the usage the bound clusters reported since the contract's
            start; it is computed again whenever a license is issued.
          </p>
        </>
      ) : (
        <p className="muted">
          Not measured yet: the usage is computed from what the bound clusters report when a license is issued, and shown here once an alert
          threshold is crossed.
        </p>
      )}
    </Section>
  );
}
