import { allOf, keptServiceReads, MARKETPLACE_CHANGED, type KeptRead, type ReadModel } from '@platform/bus';
import { marketplaceListenerV1 } from '@platform/proto';
import { backendState, createClients, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** marketplace-listener's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const MARKETPLACE_LISTENER_SERVICES = {
  listener: marketplaceListenerV1.MarketplaceListenerServiceService,
} as const;

/** marketplace-listener's services as another app calls them. */
export interface MarketplaceListenerClients {
  /**
   * Installers, the dashboard's marketplace rows (subscriptions, their audit log, the metering ping, configuration
   * warnings) and the metered-billing proxy (docs/marketplaces.md). The notifications arrive over its own HTTP root.
   */
  listener: PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;
}

/** What a reader keeps of marketplace-listener's answers, and how long at most (0 keeps nothing). */
export interface MarketplaceListenerKeeping {
  ttlMs: number;
  /** Names the cache in the metrics (`<reader>.marketplace-listener.listener`). */
  reader: string;
  /** Whether marketplace-listener answers (kept answers are not served while it does not). */
  available?: () => boolean;
}

/**
 * What every kept answer shows: subscriptions, installers, the audit log and the configuration warnings, all of them
 * marketplace-listener's own rows and settings, changed only by what it announces (`marketplace.changed`).
 */
const MARKETPLACE_ANSWER: KeptRead = { stale: [MARKETPLACE_CHANGED] };

/**
 * The reads a reader keeps, as marketplace-listener defines them. It announces every write it answers by method
 * (creating an installer, revoking a subscription, reporting usage: every method not declared a read), every
 * marketplace notification its webhook routes processed that wrote (a binding, a provisioning state, a redelivery or a
 * refusal written to the audit log), every outbox effect that wrote (a subscriber recorded on its subscription, by the
 * request or by the relay later), and its own start (its settings, which the warnings show, may have changed with it).
 * Each drops everything kept. The answers show nothing that changes with time alone (an audit period is the entry's own
 * UTC month, not today's).
 *
 * Not kept: the metering ping (`pingSubscription`) and `checkReadiness`, which ask the provider's metering service live,
 * whose answer changes with the provider and is the point of asking; `getVersion`, which the status pages ask to see
 * the app answer; and the writes.
 */
export const MARKETPLACE_READS = {
  listener: {
    listSubscriptions: MARKETPLACE_ANSWER,
    getSubscription: MARKETPLACE_ANSWER,
    listAuditReports: MARKETPLACE_ANSWER,
    listInstallers: MARKETPLACE_ANSWER,
    getSettingWarnings: MARKETPLACE_ANSWER,
  },
} satisfies { [S in keyof MarketplaceListenerClients]?: { [M in keyof MarketplaceListenerClients[S]]?: KeptRead } };

/** marketplace-listener's clients, answering the reads of MARKETPLACE_READS from what the reader keeps when `keep` is given. */
export function marketplaceListenerClients(
  address: string,
  opts: ClientOptions,
  keep?: MarketplaceListenerKeeping,
): { clients: MarketplaceListenerClients; readModel: ReadModel } {
  const clients: MarketplaceListenerClients = createClients(MARKETPLACE_LISTENER_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  return keptMarketplaceListener(clients, { ...keep, available: () => backendState(opts.name).available });
}

/** The clients with the reads of MARKETPLACE_READS kept, one cache per service. */
export function keptMarketplaceListener<C extends { [S in keyof typeof MARKETPLACE_READS]: object }>(
  clients: C,
  keep: MarketplaceListenerKeeping,
): { clients: C; readModel: ReadModel } {
  return keptServiceReads(clients, MARKETPLACE_READS as never, {
    name: `${keep.reader}.marketplace-listener`,
    ttlMs: keep.ttlMs,
    available: keep.available,
  });
}

/** Every read of marketplace-listener a reader keeps (the gateway's `kept.marketplaceListener`, KeptDoor). */
export const MARKETPLACE_LISTENER_KEPT = MARKETPLACE_READS;
