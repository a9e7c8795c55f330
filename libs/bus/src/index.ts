import type { Bus } from './bus';
import { InProcessBus } from './in-process-bus';
import type { NatsBusOptions } from './nats-bus';

export * from './bus';
export { InProcessBus } from './in-process-bus';
// NATS's own classes are `@platform/bus/nats`: loaded only when a NATS URL is configured (connectBus), so a process on the
// in-process bus, and every unit test, never loads the NATS client.
export type { NatsBusOptions } from './nats-bus';

let shared: InProcessBus | undefined;

/**
 * NATS when a URL is configured (in `opts.namespace`, the installation's), otherwise the process-wide in-process bus
 * (all apps in one process, which no other installation shares). Fails with BusConnectError when NATS cannot be used
 * after a few seconds of retrying.
 */
export async function connectBus(natsUrl: string | undefined, name: string, opts: NatsBusOptions = {}): Promise<Bus> {
  if (natsUrl) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when NATS is configured
    const { NatsBus } = require('./nats-bus') as typeof import('./nats-bus');
    return NatsBus.create(natsUrl, name, opts);
  }
  shared ??= new InProcessBus();
  return shared;
}
export * from './notices';
export { CoalescedSends, type Merge } from './coalesced-sends';
export { DecisionCache, decisionKey, type DecisionCacheOptions } from './decision-cache';
export { NoticeCache, type NoticeCacheOptions, type NoticeRule, type Keeping } from './notice-cache';
export { allOf, following, type CallDoor, type KeptDoor, type ReadModel } from './read-model';
export { keptReads, keptServiceReads, type KeptRead, type KeptReadsOptions } from './kept-reads';
export { madeFrom } from './made-from';
export { FORGET_AFTER_MS, SILENT_AFTER_MS } from './liveness';
