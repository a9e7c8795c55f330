import { MARKETPLACE_CHANGED, type Bus, type MarketplaceChanged } from '@platform/bus';
import type { Logger } from '@platform/service-kit';

/**
 * The notice that what this service answered may have changed (MARKETPLACE_CHANGED), which drops everything its
 * readers keep (@platform/marketplace-listener-client): sent once a write method is over, answered or failed
 * (announcingWrites), once a notification its webhook routes processed wrote, once an outbox effect wrote, and at
 * start. Awaited before the answer, so the bus has it in its order before the caller hears of the change and another
 * gateway's fence proves it handled it. One that cannot be sent is logged; a gateway that misses it serves what it kept
 * for at most its ORG_CACHE_TTL_MS.
 */
export function marketplaceChangedNotice(bus: Bus, log: Logger): () => Promise<void> {
  return () =>
    bus
      .notify(MARKETPLACE_CHANGED, {} satisfies MarketplaceChanged)
      .catch((err) => log.warn({ err }, 'could not send a marketplace notice'));
}
