/**
 * The auth hook's short-lived memory: a dashboard of forty panels asks the hook forty times within a second,
 * about the same cluster and the same caller. Answers (and lookups still running, so concurrent asks share one)
 * are kept `ttlMs`; a failed lookup is forgotten at once. This bounds how stale a decision may be: a member
 * removed from the organization, or a cluster moved to another owner, is refused at the latest `ttlMs` later.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    if (this.entries.size >= this.maxEntries) this.prune(now);
    const value = load();
    this.entries.set(key, { value, expires: now + this.ttlMs });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  /** Drops expired entries; when all are fresh, the oldest half (Map keeps insertion order). */
  private prune(now: number): void {
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
    if (this.entries.size < this.maxEntries) return;
    let drop = this.entries.size / 2;
    for (const k of this.entries.keys()) {
      if (drop-- <= 0) break;
      this.entries.delete(k);
    }
  }
}
