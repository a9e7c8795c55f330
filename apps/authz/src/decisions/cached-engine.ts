import type { AuthzEngine, CheckRequest, Tuple, TupleFilter } from '../engine';
import type { ListOptions, ListUsersRequest, WriteOptions } from '../engine/types';
import { decisionKey, type DecisionCache } from '@platform/bus';

/** A check with contextual tuples or a context answers for that request only: it is never kept nor served from the cache. */
const keyOf = (r: CheckRequest): string | undefined =>
  r.contextualTuples?.length || (r.context && Object.keys(r.context).length) ? undefined : decisionKey(r.user, r.relation, r.object);

/**
 * The engine with its check answers kept in a DecisionCache: checks, batched checks and relation lists are
 * served from it where it has the answer and asked of the engine for the rest (in one call, as they came). Writes
 * go to the engine and then, succeeded or not, empty the cache here and on every replica (`tuplesChanged`):
 * a failed write may have been applied in part before it was undone.
 */
export class CachedEngine implements AuthzEngine {
  constructor(
    private readonly engine: AuthzEngine,
    private readonly cache: DecisionCache,
    private readonly tuplesChanged: () => Promise<void>,
  ) {}

  check(request: CheckRequest): Promise<boolean> {
    const key = keyOf(request);
    const ask = () => this.engine.check(request);
    return key === undefined ? ask() : this.cache.through(key, ask);
  }

  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    if (!(await this.cache.ready())) return this.engine.batchCheck(requests);
    const keys = requests.map(keyOf);
    const answers = keys.map((key) => (key === undefined ? undefined : this.cache.lookup(key)));
    const missing = answers.flatMap((a, i) => (a === undefined ? [i] : []));
    if (missing.length === 0) return answers as boolean[];
    const since = this.cache.snapshot();
    const fresh = await this.engine.batchCheck(missing.map((i) => requests[i]));
    missing.forEach((i, n) => {
      answers[i] = fresh[n];
      if (keys[i] !== undefined) this.cache.keep(since, keys[i]!, fresh[n]);
    });
    return answers as boolean[];
  }

  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    if (!(await this.cache.ready())) return this.engine.listRelations(user, object, relations);
    const held = relations.map((relation) => this.cache.lookup(decisionKey(user, relation, object)));
    const missing = [...new Set(relations.filter((_, i) => held[i] === undefined))];
    if (missing.length > 0) {
      const since = this.cache.snapshot();
      const found = new Set(await this.engine.listRelations(user, object, missing));
      for (const relation of missing) this.cache.keep(since, decisionKey(user, relation, object), found.has(relation));
      relations.forEach((relation, i) => (held[i] ??= found.has(relation)));
    }
    return relations.filter((_, i) => held[i]);
  }

  /** Passed through: lists are asked rarely (an admin's view), so there is nothing to gain from keeping them. */
  listObjects(user: string, relation: string, type: string, options?: ListOptions): Promise<string[]> {
    return this.engine.listObjects(user, relation, type, options);
  }

  listUsers(request: ListUsersRequest): Promise<string[]> {
    return this.engine.listUsers(request);
  }

  async write(writes: Tuple[], deletes: Tuple[], opts?: WriteOptions): Promise<void> {
    if (writes.length === 0 && deletes.length === 0) return this.engine.write(writes, deletes, opts);
    try {
      await this.engine.write(writes, deletes, opts);
    } finally {
      await this.tuplesChanged();
    }
  }

  readTuples(filter: TupleFilter): Promise<Tuple[]> {
    return this.engine.readTuples(filter);
  }
}
