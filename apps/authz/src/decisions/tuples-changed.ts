import { TUPLES_CHANGED, type Bus, type DecisionCache, type TuplesChanged } from '@platform/bus';
import type { Logger } from '@platform/service-kit';

/** Longest a write waits for its notice to reach NATS before it is answered anyway. */
const NOTICE_WAIT_MS = 2_000;

/**
 * What a replica does once tuples may have changed (a write committed, or failed and was undone): empties its
 * own decision caches, then tells the other replicas through the bus, and waits until NATS has the notice, so
 * that a change is not answered before its eviction is on its way. While the bus is disconnected the notice
 * waits in the client's buffer and goes once the connection is back; the write is not held up for it (the other
 * replicas then serve what they kept for at most the cache's lifetime).
 */
export function announceTupleChanges(caches: Pick<DecisionCache, 'clear'>[], bus: Bus | undefined, log: Logger): () => Promise<void> {
  return async () => {
    for (const cache of caches) cache.clear();
    if (!bus) return;
    const connected = bus.health().connected;
    const sent = bus.notify(TUPLES_CHANGED, {} satisfies TuplesChanged).catch((err) => {
      log.warn({ err }, 'could not send a decision-cache notice');
    });
    if (!connected) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, NOTICE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([sent, waited]);
    clearTimeout(timer);
  };
}
