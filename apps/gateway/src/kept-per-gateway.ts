import { NoticeCache, type Bus, type NoticeCacheOptions, type NoticeRule } from '@platform/bus';
import type { GatewayConfig } from './config';

/** What a section keeps of its backends' answers: one NoticeCache per gateway, and the notices it follows. */
export interface KeptPerGateway<V> {
  /** This gateway's cache. */
  of(config: GatewayConfig): NoticeCache<V>;
}

interface Registered {
  follow(config: GatewayConfig, bus: Bus): Promise<() => Promise<void>>;
}

const registry: Registered[] = [];

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
  registry.push({ follow: (config, bus) => of(config).follow(bus, rules) });
  return { of };
}

/** Makes every section's cache of this gateway follow the bus. Answers how to stop them all. */
export async function followKeptPerGateway(config: GatewayConfig, bus: Bus): Promise<() => Promise<void>> {
  const stops: (() => Promise<void>)[] = [];
  for (const kept of registry) stops.push(await kept.follow(config, bus));
  return async () => {
    for (const stop of stops) await stop();
  };
}
