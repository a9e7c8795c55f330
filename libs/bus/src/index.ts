import type { Bus, BusLogger } from './bus';
import { InProcessBus } from './in-process-bus';
import { NatsBus } from './nats-bus';

export * from './bus';
export { InProcessBus } from './in-process-bus';
export { NatsBus, natsServerAddress, NATS_STARTUP_TIMEOUT_MS, type NatsBusOptions } from './nats-bus';

let shared: InProcessBus | undefined;

/**
 * NATS when a URL is configured, otherwise the process-wide in-process bus (all apps in one process).
 * Fails with BusConnectError when NATS cannot be used after a few seconds of retrying.
 */
export async function connectBus(natsUrl: string | undefined, name: string, log?: BusLogger): Promise<Bus> {
  if (natsUrl) return NatsBus.create(natsUrl, name, { log });
  shared ??= new InProcessBus();
  return shared;
}
export * from './notices';
export { DecisionCache, decisionKey, type DecisionCacheOptions } from './decision-cache';
export { NoticeCache, type NoticeCacheOptions, type NoticeRule, type Keeping } from './notice-cache';
export { allOf, following, type ReadModel } from './read-model';
export { keptReads, keptServiceReads, type KeptRead, type KeptReadsOptions } from './kept-reads';
export { madeFrom } from './made-from';
