import { LRUCache } from 'lru-cache';

/**
 * The auth hook's short-lived memory: a dashboard of forty panels asks the hook forty times within a second,
 * about the same cluster and the same caller. Answers (and lookups still running, so concurrent asks share one)
 * are kept `ttlMs`; a failed lookup is forgotten at once. This bounds how stale a decision may be: a member
 * removed from the organization, or a cluster moved to another owner, is refused at the latest `ttlMs` later.
 * When full, the least recently used answer makes room.
 */
export class TtlCache<V> {
  private readonly entries: LRUCache<string, Promise<V>> | undefined;

  constructor(ttlMs: number, maxEntries = 10_000) {
    // A lifetime of 0 keeps nothing: every ask looks up.
    this.entries = ttlMs > 0 ? new LRUCache<string, Promise<V>>({ max: maxEntries, ttl: Math.ceil(ttlMs) }) : undefined;
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries?.get(key);
    if (hit) return hit;
    const value = load();
    if (!this.entries) return value;
    this.entries.set(key, value);
    value.catch(() => {
      // Only this lookup's entry: a newer one for the key may have replaced it meanwhile.
      if (this.entries!.peek(key) === value) this.entries!.delete(key);
    });
    return value;
  }
}
