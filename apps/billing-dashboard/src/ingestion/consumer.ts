import { PROTOCOL_VERSION, REPORT_ROOT, isUuid, reportFilter } from '@platform/agent-protocol';
import type { Bus, Unsubscribe } from '@platform/bus';
import { BILLING_KINDS, type BillingKind, type Ingestion } from './ingestion';

export interface IngestionConsumerOptions {
  /** Durable consumer names are `<prefix>-<kind>`; default `billing-dashboard`. A restarted consumer resumes where it stopped. */
  durablePrefix?: string;
  /** Consume the reports of one cluster UID only (tests); every cluster by default. */
  clusterUID?: string;
  /** At most this many reports per transaction; default INGESTION_BATCH. */
  maxBatch?: number;
  log: { info(obj: object, msg: string): void };
}

/**
 * Reports applied per transaction at most. A transaction costs about as much as a few single-row writes, so
 * batches carry throughput; 500 keeps one batch's statements well within the parameter limit and a batch's
 * work (a few hundred milliseconds at worst) far inside the 30 s acknowledgement wait.
 */
export const INGESTION_BATCH = 500;

/** The durable consumer name of a kind. */
export function durableName(kind: BillingKind, prefix = 'billing-dashboard'): string {
  return `${prefix}-${kind}`;
}

/**
 * Starts one durable consumer per billing kind on stream AGENT (JetStream on NATS, or the in-process bus):
 * `billing-dashboard-license-usage`, `-resource-event`, `-usage-sample`, each handing over batches of what
 * arrived (`Ingestion.receiveBatch`). A message that is applied, a duplicate, refused or invalid is
 * acknowledged (a redelivery could not change a refusal); one that failed to apply (the database, the account
 * lookup) is left unacknowledged and redelivered.
 * Returns how to stop all three.
 */
export async function startIngestionConsumers(bus: Bus, ingestion: Ingestion, opts: IngestionConsumerOptions): Promise<Unsubscribe> {
  if (opts.clusterUID !== undefined && !isUuid(opts.clusterUID)) throw new Error(`cluster UID ${opts.clusterUID} is not a lower-case UUID`);
  const stops: Unsubscribe[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0)) await stop().catch(() => {});
  };
  try {
    for (const kind of BILLING_KINDS) {
      const subject = opts.clusterUID ? `${REPORT_ROOT}.${PROTOCOL_VERSION}.${opts.clusterUID}.${kind}` : reportFilter(kind);
      const durable = durableName(kind, opts.durablePrefix);
      stops.push(
        await bus.consumeBatches({ durable, subject, maxBatch: opts.maxBatch ?? INGESTION_BATCH }, (messages) =>
          ingestion.receiveBatch(kind, messages),
        ),
      );
      opts.log.info({ durable, subject }, 'consuming agent reports');
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return stopAll;
}
