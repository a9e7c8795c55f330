import type { Bus } from './bus';
import { InProcessBus } from './in-process-bus';
import { NatsBus, type NatsBusOptions } from './nats-bus';

export * from './bus';
export { InProcessBus } from './in-process-bus';
export { NatsBus, natsServerAddress, NATS_STARTUP_TIMEOUT_MS, type NatsBusOptions } from './nats-bus';

let shared: InProcessBus | undefined;

/**
 * NATS when a URL is configured (in `opts.namespace`, the installation's), otherwise the process-wide in-process bus
 * (all apps in one process, which no other installation shares). Fails with BusConnectError when NATS cannot be used
 * after a few seconds of retrying.
 */
export async function connectBus(natsUrl: string | undefined, name: string, opts: NatsBusOptions = {}): Promise<Bus> {
  if (natsUrl) return NatsBus.create(natsUrl, name, opts);
  shared ??= new InProcessBus();
  return shared;
}
export * from './notices';
export { DecisionCache, decisionKey, type DecisionCacheOptions } from './decision-cache';
export { NoticeCache, type NoticeCacheOptions, type NoticeRule, type Keeping } from './notice-cache';
export { allOf, following, type CallDoor, type KeptDoor, type ReadModel } from './read-model';
export { keptReads, keptServiceReads, type KeptRead, type KeptReadsOptions } from './kept-reads';
export { madeFrom } from './made-from';
export { FORGET_AFTER_MS, SILENT_AFTER_MS } from './liveness';
