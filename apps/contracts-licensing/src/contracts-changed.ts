import { CONTRACTS_CHANGED, type Bus, type ContractsChanged } from '@platform/bus';
import type { Logger } from '@platform/service-kit';

/**
 * The notice that what this service answered may have changed (CONTRACTS_CHANGED): sent once a write it answers is
 * over, committed or not, and awaited before the answer, so the bus has it in its order before the caller hears of the
 * change and another gateway's fence proves it handled it. A notice that cannot be sent is logged; a gateway that misses
 * it serves what it kept for at most ORG_CACHE_TTL_MS.
 */
export function contractsChangedNotice(bus: Bus, log: Logger): () => Promise<void> {
  return () =>
    bus.notify(CONTRACTS_CHANGED, {} satisfies ContractsChanged).catch((err) => log.warn({ err }, 'could not send a contracts notice'));
}
