import { LRUCache } from 'lru-cache';
import type { Bus } from './bus';
import { NoticeFence } from './notice-fence';
import { TUPLES_CHANGED } from './notices';

export interface DecisionCacheOptions {
  /** How long an answer may be served (AUTHZ_DECISION_CACHE_TTL_MS); 0 keeps nothing. */
  ttlMs: number;
  /** Most answers kept, least recently used first out (AUTHZ_DECISION_CACHE_SIZE); 0 keeps nothing. */
  maxEntries: number;
}

/** How long to wait before sending another fence when one did not come back after a reconnect. */
const RETRUST_RETRY_MS = 200;

/** The key of one question: who, which relation, on what. JSON so that no two questions share a key. */
export const decisionKey = (user: string, relation: string, object: string): string => JSON.stringify([user, relation, object]);

/**
 * Answers of checks (does this user hold this relation on this object), kept in memory so that a request asking
 * what an earlier one asked costs no tuple reads (in authz) and no call to authz (in the gateway).
 *
 * Correct by eviction, not by time. Any tuple change empties the whole cache: one tuple can change answers
 * about objects it does not name (a team's member holds every permission the team's roles grant on the
 * organization), and working out which answers depend on it would be a second evaluation engine to get wrong.
 * A read that started before an eviction never stores what it read (a generation count), so an answer computed
 * from tuples just before a change cannot outlive the change. While the bus is disconnected other replicas'
 * notices may be missed, so nothing is served or stored until it is back, and then the cache starts empty. The
 * lifetime only bounds what a notice lost otherwise (a writer that crashed between its commit and its notice)
 * can cost. Before a request is served from memory, a fence (NoticeFence) makes sure every notice sent before it
 * arrived has been handled here, so a change answered by one replica is refused by the next request to any other.
 */
export class DecisionCache {
  private readonly answers: LRUCache<string, boolean> | undefined;
  private generation = 0;
  /** Whether kept answers may be served and stored: always, without a bus; with one, while it is connected (see follow). */
  private trusted = true;
  private fence: NoticeFence | undefined;

  constructor(opts: DecisionCacheOptions) {
    this.answers = opts.ttlMs > 0 && opts.maxEntries > 0 ? new LRUCache({ max: opts.maxEntries, ttl: opts.ttlMs }) : undefined;
  }

  /**
   * Whether a request arriving now may be served kept answers and keep what it reads: the cache is on, the bus
   * connected, and every notice sent before now has been handled. Asked once per request, before `lookup`.
   */
  async ready(): Promise<boolean> {
    if (!this.answers || !this.trusted) return false;
    if (!this.fence || (await this.fence.pass())) return true;
    // The fence did not come back in time: notices may be held up as well, so nothing kept is trusted.
    this.evictAll();
    return false;
  }

  /** The kept answer, if any and if the cache may be trusted now. */
  lookup(key: string): boolean | undefined {
    return this.trusted ? this.answers?.get(key) : undefined;
  }

  /** Taken before reading tuples: `keep` stores what was read only if nothing was evicted since. */
  snapshot(): number {
    return this.generation;
  }

  keep(since: number, key: string, allowed: boolean): void {
    if (this.answers && this.trusted && since === this.generation) this.answers.set(key, allowed);
  }

  /**
   * One check through the cache: the kept answer when it may be served, else `ask`'s, kept unless something was
   * evicted while it was asked.
   */
  async answer(key: string, ask: () => Promise<boolean>): Promise<boolean> {
    if (!(await this.ready())) return ask();
    const kept = this.lookup(key);
    if (kept !== undefined) return kept;
    const since = this.snapshot();
    const allowed = await ask();
    this.keep(since, key, allowed);
    return allowed;
  }

  /** Forgets every answer, and makes every read in flight forget what it read. */
  evictAll(): void {
    this.generation++;
    this.answers?.clear();
  }

  /** How many answers are kept (for tests and metrics). */
  get size(): number {
    return this.answers?.size ?? 0;
  }

  /**
   * Evicts on every replica's tuple-change notice and follows the bus connection: a lost connection empties the
   * cache and keeps it empty until the connection is back (notices sent meanwhile are missed). Answers how to stop.
   *
   * Trust comes back (and comes at first) only once a fence has returned: the subscriptions are then in place on
   * the server, since it takes them before the fence, so no later notice is missed; and the cache is emptied at
   * that point, so whatever a missed notice announced was committed before and is read afresh.
   */
  async follow(bus: Bus): Promise<() => Promise<void>> {
    const unlisten = await bus.listen(TUPLES_CHANGED, () => this.evictAll());
    const fence = (this.fence = await NoticeFence.open(bus, 'authz.decisions.fence'));
    let epoch = 0;
    let stopped = false;
    const apply = async (connected: boolean) => {
      const current = ++epoch;
      this.evictAll();
      this.trusted = false;
      while (connected && current === epoch && !stopped) {
        if (await fence.pass()) {
          if (current !== epoch || stopped) return;
          this.evictAll();
          this.trusted = true;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRUST_RETRY_MS).unref());
      }
    };
    await apply(bus.health().connected);
    const stop = bus.onHealthChange((h) => void apply(h.connected));
    return async () => {
      stopped = true;
      stop();
      // Both, even when the connection is already closed and unsubscribing fails.
      await Promise.allSettled([unlisten(), fence.close()]);
    };
  }
}
