import { NoticeCache } from './notice-cache';
import { TUPLES_CHANGED, tuplesNamed } from './notices';

export interface DecisionCacheOptions {
  /** How long an answer may be served (AUTHZ_DECISION_CACHE_TTL_MS); 0 keeps nothing. */
  ttlMs: number;
  /** Most answers kept, least recently used first out (AUTHZ_DECISION_CACHE_SIZE); 0 keeps nothing. */
  maxEntries: number;
  /** Names it in the metrics: `<reader>.decisions` (`gateway.decisions`). */
  name?: string;
}

/** The key of one question: who, which relation, on what. JSON so that no two questions share a key. */
export const decisionKey = (user: string, relation: string, object: string): string => JSON.stringify([user, relation, object]);

/**
 * Answers of checks (does this user hold this relation on this object), or of other questions the tuples alone
 * answer (who has access to an object), as authz's readers keep them (its read model, @platform/authz-client), so
 * that a request asking what an earlier one asked makes no call to authz. One tuple can change answers about objects
 * it does not name (a team's member holds every permission the team's roles grant on the organization), so an answer
 * is not kept under what it asked about but under what authz read to answer it (its `dependsOn`: every object whose
 * tuples it read, found or not), and a tuple notice drops the answers that read what it names (`tuplesNamed`): exact,
 * with no second evaluation engine to get wrong. Like every reader's cache it keeps nothing until it follows a bus.
 */
export class DecisionCache<V = boolean> extends NoticeCache<V> {
  constructor(opts: DecisionCacheOptions) {
    super({ name: opts.name ?? 'authz.decisions', ttlMs: opts.ttlMs, maxEntries: opts.maxEntries });
  }

  /** Follows the tuple notices of every authz replica (see NoticeCache.follow). */
  followTuples(bus: Parameters<NoticeCache<V>['follow']>[0]): Promise<() => Promise<void>> {
    return this.follow(bus, [{ subject: TUPLES_CHANGED, stale: tuplesNamed }]);
  }
}
