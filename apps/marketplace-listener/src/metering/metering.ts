import { InputError, NotFoundError, ValidationError, type FieldViolation } from '@platform/errors';
import { MARKETPLACES, type Marketplace } from '../binding-info';
import type { SubscriptionRow, SubscriptionsStore } from '../subscriptions/subscriptions-store';
import type { MeteringProvider, Readiness, SettingWarning, Usage, UsageOutcome } from './provider';

/** Records one report-usage request may carry; the provider batches below that (25 for AWS, 100 here for Google). */
export const MAX_RECORDS = 1000;
/** AWS refuses records older than 24 hours (BatchMeterUsage), and both providers refuse future ones. */
const MAX_AGE_MS = 24 * 3600_000;
const MAX_AHEAD_MS = 5 * 60_000;
/** Subscriptions that can no longer be billed. */
const UNBILLABLE: readonly string[] = ['Revoked', 'Deleted'];

export interface RawUsage {
  dimension: string;
  quantity: number;
  timestampMs: number;
}

/**
 * The metered-billing proxy and the marketplace side of the dashboard rows that ask a provider
 * (ping, setting warnings): validation, the provider call, and counting accepted records into
 * `noOfBillingEventSent`.
 */
export class MeteringProxy {
  constructor(
    private readonly subscriptions: SubscriptionsStore,
    private readonly providers: Partial<Record<Marketplace, MeteringProvider>>,
    private readonly listenerWarnings: (marketplace: Marketplace) => SettingWarning[] = () => [],
  ) {}

  /** Validates (422), sends, counts. Each record's outcome is answered; only `Success` ones are counted. */
  async report(marketplace: string, subscriptionId: string, raw: RawUsage[], consumerId: string) {
    const provider = this.providerOf(marketplace);
    const subscription = await this.subscriptions.get(marketplace, subscriptionId);
    const violations: FieldViolation[] = [];
    if (!subscription) violations.push({ field: 'subscriptionId', description: `no subscription ${subscriptionId} of ${marketplace}` });
    else if (UNBILLABLE.includes(subscription.state)) {
      violations.push({
        field: 'subscriptionId',
        description: `subscription ${subscriptionId} is ${subscription.state} and can no longer be billed`,
      });
    } else if (marketplace === 'ProviderA' && typeof subscription.billing_details.providerAAccountID !== 'string') {
      violations.push({ field: 'subscriptionId', description: 'the subscription has no providerAAccountID (its binding named none)' });
    } else if (marketplace === 'ProviderC' && !consumerId && typeof subscription.billing_details.consumerId !== 'string') {
      violations.push({ field: 'consumerId', description: 'required: the subscription has no Service Control consumer' });
    }
    if (consumerId && !/^(project|projectNumber|api_key|spendBasedCommitment):[\w.:-]{1,128}$/.test(consumerId)) {
      violations.push({ field: 'consumerId', description: 'must be a Service Control consumer such as project:<id>' });
    }
    const usage = validateUsage(raw, Date.now(), violations);
    if (violations.length > 0)
      throw new ValidationError(`invalid usage report: ${violations[0].field}: ${violations[0].description}`, violations);
    const outcomes = await provider.report(subscription!, usage, consumerId || undefined);
    const sent = outcomes.filter((o) => o.status === 'Success').length;
    const total =
      sent > 0 ? await this.subscriptions.countBillingEvents(marketplace, subscriptionId, sent) : subscription!.no_of_billing_event_sent;
    return { outcomes, sent, total };
  }

  /** The provider's metering readiness, for a subscription's customer when one is named. */
  async readiness(marketplace: string, subscription?: SubscriptionRow): Promise<Readiness> {
    return this.providerOf(marketplace).readiness(subscription);
  }

  /** What is missing or wrong in each marketplace's configuration, by marketplace (every one listed, maybe empty). */
  warnings(): Record<Marketplace, SettingWarning[]> {
    const out = {} as Record<Marketplace, SettingWarning[]>;
    for (const m of MARKETPLACES) out[m] = [...this.listenerWarnings(m), ...(this.providers[m]?.warnings() ?? [])];
    return out;
  }

  hasMetering(marketplace: string): boolean {
    return this.providers[marketplace as Marketplace] !== undefined;
  }

  private providerOf(marketplace: string): MeteringProvider {
    const p = this.providers[marketplace as Marketplace];
    if (!p) throw new NotFoundError(`${marketplace} has no metered-billing proxy`);
    return p;
  }
}

/** Checks each record, naming it by index; answers them as the providers take them. */
export function validateUsage(raw: RawUsage[], now: number, violations: FieldViolation[]): Usage[] {
  if (raw.length === 0) violations.push({ field: 'usage', description: 'must hold at least one record' });
  if (raw.length > MAX_RECORDS) violations.push({ field: 'usage', description: `at most ${MAX_RECORDS} records per request` });
  const seen = new Set<string>();
  return raw.slice(0, MAX_RECORDS).map((r, i) => {
    const at = `usage[${i}]`;
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(r.dimension)) {
      violations.push({
        field: `${at}.dimension`,
        description: 'must be 1-100 letters, digits, ".", "_" or "-" (the listing’s dimension)',
      });
    }
    // AWS takes an Integer quantity (at most 2^31-1); one bound for both keeps a report portable.
    if (!Number.isSafeInteger(r.quantity) || r.quantity < 0 || r.quantity > 2_147_483_647) {
      violations.push({ field: `${at}.quantity`, description: 'must be an integer from 0 to 2147483647' });
    }
    // Whole seconds: AWS carries timestamps in seconds, and answers records by them.
    const ts = Math.floor((r.timestampMs || now) / 1000) * 1000;
    if (ts < now - MAX_AGE_MS) violations.push({ field: `${at}.timestamp`, description: 'must be within the last 24 hours' });
    if (ts > now + MAX_AHEAD_MS) violations.push({ field: `${at}.timestamp`, description: 'must not be in the future' });
    const key = `${r.dimension}\u0000${ts}`;
    if (seen.has(key)) violations.push({ field: `${at}`, description: 'repeats the dimension and timestamp of an earlier record' });
    seen.add(key);
    return { dimension: r.dimension, quantity: r.quantity, timestamp: new Date(ts) };
  });
}

/** A marketplace named by a dashboard row or the proxy: one of the three (400 otherwise). */
export function marketplaceOf(value: string): Marketplace {
  if (!MARKETPLACES.includes(value as Marketplace)) throw new InputError('marketplace must be ProviderA, ProviderB or ProviderC');
  return value as Marketplace;
}

export type { UsageOutcome };
