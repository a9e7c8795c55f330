import type { SubscriptionRow } from '../subscriptions/subscriptions-store';

/** One validated usage record. */
export interface Usage {
  dimension: string;
  quantity: number;
  timestamp: Date;
}

/** What the provider said of one record. */
export interface UsageOutcome extends Usage {
  status: 'Success' | 'DuplicateRecord' | 'CustomerNotSubscribed' | 'Failed';
  recordId: string;
  message: string;
}

export interface Readiness {
  ready: boolean;
  message: string;
}

export interface SettingWarning {
  Level: 'Error' | 'Warning';
  Msg: string;
}

/**
 * A marketplace's metering service: reports usage for a subscription's customer, and says whether
 * reporting would be accepted. Implementations speak the provider's own wire protocol to a configured endpoint.
 */
export interface MeteringProvider {
  /** Sends the records (already validated) in batches within the provider's limits, retrying with backoff. */
  report(subscription: SubscriptionRow, usage: Usage[], consumerId?: string): Promise<UsageOutcome[]>;
  /** Whether the provider's metering answers and would take this platform's reports. */
  readiness(subscription?: SubscriptionRow): Promise<Readiness>;
  /** What is missing or wrong in this provider's metering configuration. */
  warnings(): SettingWarning[];
}

/** A provider failure as a short text for the answer and audit log: never a credential or a stack. */
export const describe = (err: unknown) =>
  err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}`.slice(0, 500) : 'unknown error';
