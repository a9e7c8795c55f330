import { LRUCache } from 'lru-cache';
import { cacheMetrics } from '@platform/telemetry';
import type { Bus } from './bus';

/**
 * Which kept answers a notice makes stale: those carrying any of the tags it names (`org:7`, `account:3`), or
 * every one ('all'), when working out which answers depend on the change would be a second engine to get wrong.
 */
export interface NoticeRule {
  subject: string;
  stale(payload: unknown): readonly string[] | 'all';
  /**
   * What the notice brings anew, as Kubernetes' informers update the one object an event names: each answer kept under
   * one of these tags is handed to the tag's function and replaced by what it answers (the same answer: kept as it is),
   * or dropped when it answers nothing. Applied before `stale`, which should not name these tags again.
   */
  fresh?(payload: unknown): ReadonlyMap<string, (kept: any) => unknown>;
}

export interface NoticeCacheOptions {
  /** Names the cache in its metrics (`cache_lookups_total{cache}`). */
  name: string;
  /** How long an answer may be served; 0 keeps nothing. Bounds only what a notice lost in the bus itself can cost. */
  ttlMs: number;
  /** Most answers kept, least recently used first out; 0 keeps nothing. */
  maxEntries?: number;
  /**
   * Whether answers are kept before the cache follows a bus: for a process whose own writers evict it and that no
   * other replica writes behind (unit tests, a single process). Otherwise nothing is kept until it follows one.
   */
  keepWithoutBus?: boolean;
}

/** How an answer is kept. */
export interface Keeping<V> {
  /** The tags a notice or `evict` finds it by. */
  tags?: readonly string[] | ((value: V) => readonly string[]);
  /** Other keys the same answer is found by (an organization by its id and by its name). */
  alsoAt?: (value: V) => readonly string[];
  /** Whether it is kept at all (not an absent account); any answer by default. */
  keep?: (value: V) => boolean;
  /** A shorter lifetime for this answer in ms (a token that expires sooner); 0 keeps it not at all. */
  ttlMs?: (value: V) => number | undefined;
  /**
   * A load of this key is never shared with the concurrent reads of the same key: each missing read asks for itself
   * (an answer that is shown once, such as a secret, must reach one caller only).
   */
  alone?: boolean;
}

/** Most answers kept when the options name no size. */
const DEFAULT_MAX_ENTRIES = 10_000;

/** How long to wait before asking again when the bus could not catch up after a (re)connection. */
const RETRUST_RETRY_MS = 200;

interface Entry<V> {
  value: V;
  tags: readonly string[];
}

/**
 * The one cache of answers read from another service's or the database's state, kept correct by eviction rather
 * than by time (docs/decisions.md, "one cache building block"). Every cache that follows notices is one of these:
 * the decisions authz's readers keep (DecisionCache), the gateway's organization views and tokens, what its sections keep
 * (resolved hubs, teams and roles, accounts and team names, the dashboard's clusters, issued licenses and contract
 * counts, an organization's cluster UIDs, the metrics hook's facts), orgs-teams' organizations,
 * contracts' kept inventory, the service kit's credentials.
 *
 * - **Notices.** It follows the subjects its rules name, on every replica: a notice evicts the answers carrying the
 *   tags it names, or all of them. The writer's own replica evicts directly (`evict`), before it answers.
 * - **Fence.** Before a kept answer is served, the bus makes sure every notice sent before the request arrived has
 *   been handled here (`Bus.caughtUp`): a change answered by one replica is seen by the very next request to any
 *   other. One that cannot be made sure in time empties the cache and the answer is read afresh. Every cache of a
 *   process shares the bus's catch-ups, so concurrent requests share them whichever caches they use; in one process
 *   notices are handed over as they are sent, and there is nothing to wait for.
 * - **Lost bus.** While the connection is away notices may be missed: nothing is served or kept; once it is back
 *   the cache is trusted again only after the bus has caught up (the subscriptions are then in place on the server)
 *   and starts empty, so whatever a missed notice announced is read afresh.
 * - **Generation guard.** A read that started before an eviction never keeps what it read: an answer computed just
 *   before a change cannot outlive the change.
 * - **Bounds.** A lifetime (per cache, shorter per answer) and a size, least recently used first out.
 * - **Sharing.** Concurrent misses of one key share one read.
 * - **Metrics.** `cache_lookups_total{cache, result=hit|miss|bypass}` and `cache_evictions_total{cache, cause}`.
 */
export class NoticeCache<V> {
  /**
   * The kept answers; made at the first answer kept, and again after a clear. A map is sized for `maxEntries` when it
   * is made (lru-cache allocates its arrays up front: megabytes for a decision cache of 100,000), which every cache
   * paid at its construction and again at the clears a start makes, kept answers or none.
   */
  private entries: LRUCache<string, Entry<V>> | undefined;
  /** Whether it keeps answers at all (a lifetime and a size above 0). */
  private readonly keeps: boolean;
  /** The keys of each tag's answers, so a notice finds them. */
  private byTag = new Map<string, Set<string>>();
  private readonly pending = new Map<string, { generation: number; read: Promise<V> }>();
  private generation = 0;
  /** Whether kept answers may be served and stored (see `follow`). */
  private trusted: boolean;
  /** The bus followed: its connection is asked at each lookup too, not only told through its health events. */
  private bus: Bus | undefined;
  private readonly metrics;

  constructor(private readonly opts: NoticeCacheOptions) {
    this.keeps = opts.ttlMs > 0 && (opts.maxEntries ?? DEFAULT_MAX_ENTRIES) > 0;
    this.trusted = opts.keepWithoutBus ?? false;
    const metrics = cacheMetrics(this);
    this.metrics = {
      ...metrics,
      notice: metrics.evicted('notice'),
      bus: metrics.evicted('bus'),
      fence: metrics.evicted('fence'),
      local: metrics.evicted('local'),
    };
  }

  /**
   * Whether a request arriving now may be served kept answers and keep what it reads: the cache is on, trusted, and
   * every notice sent before now has been handled. For a request that looks up several keys: ask once, then
   * `lookup`/`snapshot`/`keep` (the batch paths of authz); `through` asks it itself. `arrivedAt`: when the request
   * arrived (`performance.now()`); a fence asked after it covers the request (Bus.caughtUp).
   */
  async ready(arrivedAt?: number): Promise<boolean> {
    if (!this.keeps || !this.trusted) return false;
    const bus = this.bus;
    if (!bus) return true;
    if (!bus.health().connected) return false;
    const caughtUp = bus.caughtUp(arrivedAt);
    if (caughtUp === true || (await caughtUp)) return true;
    // Not made sure in time: notices may be held up as well, so nothing kept is trusted.
    this.clear('fence');
    return false;
  }

  /** The kept answer, if any, without a fence: only after `ready()` said yes for this request. */
  lookup(key: string): V | undefined {
    const entry = this.trusted ? this.entries?.get(key) : undefined;
    (entry ? this.metrics.hit : this.metrics.miss).inc();
    return entry?.value;
  }

  /** Taken before reading: `keep` stores what was read only if nothing was evicted since. */
  snapshot(): number {
    return this.generation;
  }

  /**
   * Keeps an answer read since `snapshot()` returned `since`, unless something was evicted meanwhile. What is kept is
   * frozen, for the caller that read it too: a reader that changed a kept answer would change it for the next request,
   * so it fails at once instead; and the same kept object then always means the same content (madeFrom).
   */
  keep(since: number, key: string, value: V, how: Keeping<V> = {}): void {
    if (!this.keeps || !this.trusted || since !== this.generation) return;
    if (how.keep && !how.keep(value)) return;
    const entries = (this.entries ??= this.emptyEntries());
    deepFreeze(value);
    const ttl = how.ttlMs?.(value);
    if (ttl === 0) return;
    const tags = typeof how.tags === 'function' ? how.tags(value) : (how.tags ?? []);
    const options = ttl === undefined ? undefined : { ttl: Math.min(Math.ceil(ttl), entries.ttl) };
    for (const at of new Set([key, ...(how.alsoAt?.(value) ?? [])])) {
      // Indexed after the set: replacing an answer disposes the old one, which unindexes its key.
      entries.set(at, { value, tags }, options);
      this.index(at, tags);
    }
  }

  /**
   * One read through the cache: the kept answer when it may be served, else `load`'s, kept as `how` says. `arrivedAt`:
   * when the request being served arrived (`performance.now()`), so that it fences at most once (Bus.caughtUp).
   */
  async through(key: string, load: () => Promise<V>, how?: Keeping<V>, arrivedAt?: number): Promise<V> {
    if (!(await this.ready(arrivedAt))) {
      this.metrics.bypass.inc();
      return load();
    }
    const kept = this.entries?.get(key);
    if (kept) {
      this.metrics.hit.inc();
      return kept.value;
    }
    this.metrics.miss.inc();
    const since = this.generation;
    const shared = how?.alone ? undefined : this.pending.get(key);
    if (shared && shared.generation === since) return shared.read;
    const read = load();
    if (!how?.alone) this.pending.set(key, { generation: since, read });
    try {
      const value = await read;
      this.keep(since, key, value, how);
      return value;
    } finally {
      if (this.pending.get(key)?.read === read) this.pending.delete(key);
    }
  }

  /**
   * Many reads through the cache at once (a list showing many clusters or accounts): the kept answers, and the others
   * read together by one `load` of the keys missing and kept as `how` says. Keys `load` does not answer are left out
   * of the result and not kept.
   */
  async throughMany(
    keys: readonly string[],
    load: (missing: string[]) => Promise<Map<string, V>>,
    how?: Keeping<V>,
    arrivedAt?: number,
  ): Promise<Map<string, V>> {
    const found = new Map<string, V>();
    let missing = [...new Set(keys)];
    if (await this.ready(arrivedAt)) {
      missing = missing.filter((key) => {
        const kept = this.lookup(key);
        if (kept !== undefined) found.set(key, kept);
        return kept === undefined;
      });
    } else this.metrics.bypass.inc();
    if (missing.length === 0) return found;
    const since = this.snapshot();
    for (const [key, value] of await load(missing)) {
      found.set(key, value);
      this.keep(since, key, value, how);
    }
    return found;
  }

  /** Forgets the answers carrying any of these tags (a change this replica made), and what reads in flight read. */
  evict(tags: readonly string[], cause: 'local' | 'notice' = 'local'): void {
    this.generation++;
    this.pending.clear();
    for (const tag of tags) {
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      this.byTag.delete(tag);
      for (const key of keys) if (this.entries?.delete(key)) this.metrics[cause].inc();
    }
  }

  /**
   * Replaces each answer carrying one of these tags by what the tag's function makes of it, or forgets it when that is
   * nothing (a notice that brings the new state of what it names: `NoticeRule.fresh`). A replaced answer keeps its
   * tags and what is left of its lifetime. Reads in flight forget what they read, as at an eviction.
   */
  refresh(updates: ReadonlyMap<string, (kept: V) => V | undefined>): void {
    this.generation++;
    this.pending.clear();
    const entries = this.entries;
    if (!entries) return;
    for (const [tag, fresh] of updates) {
      for (const key of [...(this.byTag.get(tag) ?? [])]) {
        const entry = entries.peek(key);
        if (!entry) continue;
        const value = fresh(entry.value);
        if (value === entry.value) continue;
        if (value === undefined) {
          if (entries.delete(key)) this.metrics.notice.inc();
          continue;
        }
        // Replacing disposes the old entry, which unindexes its key: indexed again under the same tags.
        entries.set(key, { value: deepFreeze(value), tags: entry.tags }, { noUpdateTTL: true });
        this.index(key, entry.tags);
      }
    }
  }

  /**
   * Forgets every answer, and makes every read in flight forget what it read. Empty maps are swapped in rather than
   * the kept answers disposed one by one: a clear costs the same whatever the cache holds.
   */
  clear(cause: 'local' | 'notice' | 'bus' | 'fence' = 'local'): void {
    this.generation++;
    this.pending.clear();
    if (!this.entries?.size) return;
    this.metrics[cause].inc(this.entries.size);
    this.entries = undefined;
    this.byTag = new Map();
  }

  private emptyEntries(): LRUCache<string, Entry<V>> {
    const entries: LRUCache<string, Entry<V>> = new LRUCache<string, Entry<V>>({
      max: this.opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
      ttl: Math.ceil(this.opts.ttlMs),
      // Lifetimes are counted on the process's performance clock, looked up at each use rather than the one lru-cache
      // captured when it loaded: the same clock, which a test's fake timers then drive as they drive Date.
      perf: { now: () => performance.now() },
      // Whatever removes an answer (a notice, its lifetime, room for another, a newer one) also unindexes it; the
      // answers of a map swapped out by `clear` no longer have an index to leave.
      dispose: (entry, key) => {
        if (this.entries === entries) this.unindex(key, entry.tags);
      },
    });
    return entries;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** Most answers kept (0 when it keeps none). */
  get maxEntries(): number {
    return this.keeps ? (this.opts.maxEntries ?? DEFAULT_MAX_ENTRIES) : 0;
  }

  /** Its name in the metrics. */
  get name(): string {
    return this.opts.name;
  }

  /**
   * Evicts on every replica's notices and follows the bus connection: a lost connection empties the cache and keeps
   * it empty until the connection is back. Trust comes (and comes back) only once the bus has caught up: the
   * subscriptions are then in place on the server, since it takes them before asking, so no later notice is
   * missed; the cache is emptied at that point, so whatever a missed notice announced is read afresh. Notices the bus
   * reports missed while connected are handled the same way. Answers how to stop; stopped, it keeps nothing.
   */
  async follow(bus: Bus, rules: readonly NoticeRule[]): Promise<() => Promise<void>> {
    const unlisten = await Promise.all(
      rules.map((rule) =>
        bus.listen(rule.subject, (_subject, payload) => {
          const fresh = rule.fresh?.(payload);
          if (fresh?.size) this.refresh(fresh as ReadonlyMap<string, (kept: V) => V | undefined>);
          const stale = rule.stale(payload);
          if (stale === 'all') this.clear('notice');
          else this.evict(stale, 'notice');
        }),
      ),
    );
    this.bus = bus;
    let epoch = 0;
    let stopped = false;
    const apply = async (connected: boolean) => {
      const current = ++epoch;
      this.clear('bus');
      this.trusted = false;
      while (connected && current === epoch && !stopped) {
        if (await bus.caughtUp()) {
          if (current !== epoch || stopped) return;
          this.clear('bus');
          this.trusted = true;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRUST_RETRY_MS).unref());
      }
    };
    await apply(bus.health().connected);
    const unwatch = bus.onHealthChange((h) => void apply(h.connected));
    // Notices missed while connected (the bus's order moved on past some unread): start over as after a loss.
    const unmissed = bus.onNoticesMissed(() => void apply(bus.health().connected));
    return async () => {
      stopped = true;
      this.trusted = false;
      this.bus = undefined;
      this.clear();
      unwatch();
      unmissed();
      // All of them, even when the connection is already closed and unsubscribing fails.
      await Promise.allSettled(unlisten.map((stop) => stop()));
    };
  }

  private index(key: string, tags: readonly string[]): void {
    for (const tag of tags) {
      let keys = this.byTag.get(tag);
      if (!keys) this.byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, tags: readonly string[]): void {
    for (const tag of tags) {
      const keys = this.byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.byTag.delete(tag);
    }
  }
}

/** Freezes a value and everything it holds (bytes excepted: a typed array cannot be frozen); answers the value. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
