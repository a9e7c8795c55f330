import { PROTOCOL_VERSION, REPORT_ROOT, isUuid, reportFilter } from '@platform/agent-protocol';
import type { Bus, Unsubscribe } from '@platform/bus';
import { BILLING_KINDS, type BillingKind, type Ingestion } from './ingestion';

export interface IngestionConsumerOptions {
  /** Durable consumer names are `<prefix>-<kind>`; default `billing-dashboard`. A restarted consumer resumes where it stopped. */
  durablePrefix?: string;
  /** Consume the reports of one cluster UID only (tests); every cluster by default. */
  clusterUID?: string;
  log: { error(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** The durable consumer name of a kind. */
export function durableName(kind: BillingKind, prefix = 'billing-dashboard'): string {
  return `${prefix}-${kind}`;
}

/**
 * Starts one durable consumer per billing kind on stream AGENT (JetStream on NATS, or the in-process bus):
 * `billing-dashboard-license-usage`, `-resource-event`, `-usage-sample`. A message that is applied, a
 * duplicate, refused or invalid is acknowledged (a redelivery could not change a refusal); a failure while
 * applying (the database, the account lookup) throws, so the bus leaves it unacknowledged and redelivers it.
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
        await bus.consume({ durable, subject }, async (arrivedOn, payload) => {
          try {
            await ingestion.receive(kind, arrivedOn, payload);
          } catch (err) {
            opts.log.error({ err, kind, subject: arrivedOn, durable }, 'applying an agent report failed; it will be redelivered');
            throw err;
          }
        }),
      );
      opts.log.info({ durable, subject }, 'consuming agent reports');
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return stopAll;
}
