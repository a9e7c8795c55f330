import { allOf, following, NoticeCache, type Bus, type NoticeCacheOptions, type NoticeRule, type ReadModel } from '@platform/bus';
import type { GatewayConfig } from './config';

/** What a section keeps of its backends' answers: one NoticeCache per gateway, and the notices it follows. */
export interface KeptPerGateway<V> {
  /** This gateway's cache. */
  of(config: GatewayConfig): NoticeCache<V>;
}

/** Each cache's follower, by gateway. */
const registry: ((config: GatewayConfig) => ReadModel)[] = [];

/**
 * A cache of a section's own (a resolved hub, a team, the metrics hook's facts), one per gateway: keyed by the
 * gateway's config object, so gateways sharing a process (the tests) never answer from another platform's state.
 * Each follows `rules` once its gateway calls `followKeptPerGateway` (app.ts); until then nothing is kept.
 */
export function keptPerGateway<V>(
  options: (config: GatewayConfig) => NoticeCacheOptions,
  rules: readonly NoticeRule[],
): KeptPerGateway<V> {
  const caches = new WeakMap<GatewayConfig, NoticeCache<V>>();
  const of = (config: GatewayConfig): NoticeCache<V> => {
    let cache = caches.get(config);
    if (!cache) caches.set(config, (cache = new NoticeCache<V>(options(config))));
    return cache;
  };
  registry.push((config) => following(of(config), rules));
  return { of };
}

/** Makes every section's cache of this gateway follow the bus. Answers how to stop them all. */
export function followKeptPerGateway(config: GatewayConfig, bus: Bus): Promise<() => Promise<void>> {
  return allOf(registry.map((kept) => kept(config))).follow(bus);
}
