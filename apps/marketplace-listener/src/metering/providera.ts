import {
  BatchMeterUsageCommand,
  MarketplaceMeteringClient,
  MeterUsageCommand,
  type UsageRecord,
} from '@aws-sdk/client-marketplace-metering';
import { withRetries, type RetryPolicy } from '@platform/errors';
import { chunks } from '@platform/service-kit';
import type { SubscriptionRow } from '../subscriptions/subscriptions-store';
import { describe, type MeteringProvider, type Readiness, type SettingWarning, type Usage, type UsageOutcome } from './provider';

export interface ProviderAMeteringConfig {
  endpoint?: string;
  region: string;
  productCode?: string;
  /** Static credentials; unset: the SDK's default chain (web identity, instance profile, environment). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** The dimension the readiness dry run names. */
  readinessDimension?: string;
  retry: RetryPolicy;
}

/** BatchMeterUsage takes at most 25 records per call (AWS Marketplace Metering API reference). */
export const AWS_BATCH_LIMIT = 25;

/**
 * The first provider's metering through the official AWS Marketplace Metering client: usage with
 * `BatchMeterUsage` (ProductCode, records naming the buyer's CustomerAWSAccountId), readiness as a `MeterUsage`
 * dry run. The SDK retries throttling and server errors itself with exponential backoff (`maxAttempts`);
 * records it answers as unprocessed are sent again here, with backoff, until the attempts are spent.
 */
export function providerAMetering(config: ProviderAMeteringConfig): MeteringProvider {
  // Made on first use: most deployments never meter through the first provider, and constructing the SDK's
  // client is what prints its Node-version notice.
  let made: MarketplaceMeteringClient | undefined;
  const client = () =>
    (made ??= new MarketplaceMeteringClient({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.accessKeyId && config.secretAccessKey
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
      maxAttempts: config.retry.attempts,
      retryMode: 'standard',
    }));
  const key = (r: { Dimension?: string; Timestamp?: Date }) => `${r.Dimension}\u0000${r.Timestamp?.getTime()}`;

  return {
    async report(subscription: SubscriptionRow, usage: Usage[]): Promise<UsageOutcome[]> {
      const account = accountOf(subscription);
      const outcomes: UsageOutcome[] = [];
      for (const batch of chunks(usage, AWS_BATCH_LIMIT)) {
        let pending: UsageRecord[] = batch.map((u) => ({
          CustomerAWSAccountId: account,
          Dimension: u.dimension,
          Quantity: u.quantity,
          Timestamp: u.timestamp,
        }));
        const byKey = new Map(batch.map((u) => [key({ Dimension: u.dimension, Timestamp: u.timestamp }), u]));
        try {
          await withRetries(
            config.retry,
            (err) => err === UNPROCESSED,
            async () => {
              const out = await client().send(new BatchMeterUsageCommand({ ProductCode: config.productCode, UsageRecords: pending }));
              for (const r of out.Results ?? []) {
                const u = byKey.get(key(r.UsageRecord ?? {}));
                if (!u) continue;
                byKey.delete(key(r.UsageRecord ?? {}));
                outcomes.push({ ...u, status: r.Status ?? 'Failed', recordId: r.MeteringRecordId ?? '', message: '' });
              }
              pending = out.UnprocessedRecords ?? [];
              if (pending.length > 0) throw UNPROCESSED;
            },
          );
        } catch (err) {
          const message = err === UNPROCESSED ? 'left unprocessed by the provider after every retry' : describe(err);
          for (const u of byKey.values()) outcomes.push({ ...u, status: 'Failed', recordId: '', message });
          continue;
        }
        // A record the answer did not mention was not metered.
        for (const u of byKey.values()) outcomes.push({ ...u, status: 'Failed', recordId: '', message: 'not in the provider’s answer' });
      }
      return outcomes;
    },

    async readiness(): Promise<Readiness> {
      if (!config.productCode || !config.readinessDimension) {
        return { ready: false, message: 'PROVIDERA_PRODUCT_CODE and PROVIDERA_READINESS_DIMENSION must be set' };
      }
      try {
        await client().send(
          new MeterUsageCommand({
            ProductCode: config.productCode,
            Timestamp: new Date(),
            UsageDimension: config.readinessDimension,
            UsageQuantity: 0,
            DryRun: true,
          }),
        );
        return { ready: true, message: 'MeterUsage dry run accepted' };
      } catch (err) {
        // A dry run that would have succeeded answers DryRunOperation (MeterUsage API reference).
        if (err instanceof Error && err.name === 'DryRunOperation') return { ready: true, message: 'MeterUsage dry run: DryRunOperation' };
        return { ready: false, message: `MeterUsage dry run failed: ${describe(err)}` };
      }
    },

    warnings(): SettingWarning[] {
      const w: SettingWarning[] = [];
      if (!config.productCode) w.push({ Level: 'Error', Msg: 'PROVIDERA_PRODUCT_CODE is not set: usage cannot be reported' });
      if (!config.readinessDimension)
        w.push({ Level: 'Error', Msg: 'PROVIDERA_READINESS_DIMENSION is not set: metering readiness cannot be checked' });
      if (!config.accessKeyId !== !config.secretAccessKey)
        w.push({ Level: 'Error', Msg: 'PROVIDERA_ACCESS_KEY_ID and PROVIDERA_SECRET_ACCESS_KEY must be set together' });
      if (!config.accessKeyId)
        w.push({
          Level: 'Warning',
          Msg: 'no static metering credentials: the AWS default credential chain (web identity, instance role) is used',
        });
      if (config.endpoint && !config.endpoint.startsWith('https://'))
        w.push({ Level: 'Warning', Msg: `PROVIDERA_METERING_ENDPOINT ${config.endpoint} is not HTTPS` });
      return w;
    },
  };
}

const UNPROCESSED = new Error('unprocessed records');

/** The buyer's AWS account, kept from the binding info's providerAAccountID. */
function accountOf(subscription: SubscriptionRow): string {
  const account = subscription.billing_details.providerAAccountID;
  return typeof account === 'string' ? account : '';
}
