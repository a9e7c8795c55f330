import { Counter, Gauge, type CounterChild } from './metrics';

/**
 * The metrics of every map a process keeps answers in (the caches that follow bus notices, remembered passwords, vouched
 * Kubernetes tokens, public keys, seen message ids, kept query results): how many it holds and may hold, and its
 * lookups by result, so an operator sees each one's size against its bound and its hit rate
 * (`cache_lookups_total{result="hit"} / cache_lookups_total`).
 */
const lookups = new Counter('cache_lookups_total', 'Lookups of the maps a process keeps answers in, by map and result.', [
  'cache',
  'result',
]);
const evictions = new Counter('cache_evictions_total', 'Evictions of the caches that follow bus notices, by cache and cause.', [
  'cache',
  'cause',
]);

/** The maps reporting now; held weakly, so a map no longer used (a test's, a stopped app's) stops reporting. */
const maps = new Set<WeakRef<KeptMapSize>>();

interface KeptMapSize {
  readonly name: string;
  readonly size: number;
  readonly maxEntries: number;
}

const sizes = new Gauge('cache_entries', 'Entries a map a process keeps answers in holds now, by map.');
sizes.source((add) => report(add, (map) => map.size));
const bounds = new Gauge('cache_max_entries', 'Most entries a map a process keeps answers in may hold (its bound), by map.');
bounds.source((add) => report(add, (map) => map.maxEntries));

/** One value per name: maps of one name (an app's replicas of a cache in one process) are summed. */
function report(add: (labels: Record<string, string>, value: number) => void, value: (map: KeptMapSize) => number): void {
  const byName = new Map<string, number>();
  for (const ref of maps) {
    const map = ref.deref();
    if (map) byName.set(map.name, (byName.get(map.name) ?? 0) + value(map));
    else maps.delete(ref);
  }
  for (const [name, total] of byName) add({ cache: name }, total);
}

/** A kept map's counters. */
export interface CacheMetrics {
  hit: CounterChild;
  miss: CounterChild;
  /** A lookup that could not use the map (not trusted now, turned off). */
  bypass: CounterChild;
  /** Entries dropped, by cause. */
  evicted(cause: string): CounterChild;
}

/**
 * Reports a map: `map.size` and `map.maxEntries` are read at every scrape for as long as `map` is in use; answers its
 * lookup and eviction counters.
 */
export function cacheMetrics(map: KeptMapSize): CacheMetrics {
  maps.add(new WeakRef(map));
  return {
    hit: lookups.child(map.name, 'hit'),
    miss: lookups.child(map.name, 'miss'),
    bypass: lookups.child(map.name, 'bypass'),
    evicted: (cause) => evictions.child(map.name, cause),
  };
}

/** A map's size as `cacheMetrics` reads it: an LRU's (or any map's) entries now, and its bound. */
export function sizeOf(name: string, map: { readonly size: number; readonly max?: number }, maxEntries = map.max ?? 0): KeptMapSize {
  return {
    name,
    get size() {
      return map.size;
    },
    maxEntries,
  };
}
