import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { CheckResolver } from './check';
import { readAnything, readObjects, readTag, recordedSource, wrote } from './recorded';
import { withContextualTuples, type ParsedTuple } from './contextual';
import { InvalidTupleError } from './errors';
import { ObjectCandidates } from './list-objects';
import { UserCandidates } from './list-users';
import { MemoryTuples, startLocalWrite, type MemoryTuplesOptions } from './memory-tuples';
import type { TypeSystem } from './model';
import type { TupleSource } from './source';
import { TupleStore } from './tuple-store';
import { assertRelationName, formatObject, formatUser, parseObject, parseUser, tupleKey } from './tuple';
import type { AuthzEngine, CheckRequest, ListOptions, ListUsersRequest, RequestContext, Tuple, TupleFilter, WriteOptions } from './types';

export interface EmbeddedEngineOptions {
  /**
   * Whether checks are answered from the tuples in memory (MemoryTuples) once they are loaded; default true, with
   * `strict` freshness on a Postgres server and `local` on the embedded PGlite. `false`: every check reads the table.
   */
  memory?: boolean | Partial<MemoryTuplesOptions>;
  /**
   * Condition parameters the engine supplies to every request, over the caller's (authz passes `current_time`, so
   * that time-bound grants end by themselves and no caller can move the clock back).
   */
  context?: () => RequestContext;
}

/**
 * The engine that needs no OpenFGA server: the same model, evaluated in-process over the authz schema's tuples.
 *
 * Checks read the tuples from memory (loaded on the first check, or by `load`, and kept current from the
 * table's change log), so a check costs no statement beyond the freshness read its mode asks for; until they
 * are loaded, checks read the table. An engine bound to a caller's transaction (a unit of work) always reads
 * the table, which is the only place its uncommitted writes are visible.
 */
export class EmbeddedEngine implements AuthzEngine {
  private readonly store: TupleStore;
  private readonly memory?: MemoryTuples;
  /** The caller's transaction this engine works in, if any. */
  private readonly trx?: Knex.Transaction;

  private readonly supplied?: () => RequestContext;

  constructor(
    db: Database,
    readonly model: TypeSystem,
    options: EmbeddedEngineOptions = {},
  ) {
    this.supplied = options.context;
    this.store = TupleStore.create(db);
    if (db.knex.isTransaction) this.trx = db.knex as Knex.Transaction;
    else if (options.memory !== false) {
      const onServer = !db.embedded;
      this.memory = new MemoryTuples(this.store, {
        freshness: onServer ? 'strict' : 'local',
        ...(typeof options.memory === 'object' ? options.memory : {}),
      });
    }
  }

  /** Loads the tuples into memory now rather than at the first check; resolves once checks are answered from there. */
  load(): Promise<void> {
    return this.memory ? this.memory.load() : Promise.resolve();
  }

  /** Stops keeping the tuples in memory (and its timer); checks read the table from then on. */
  close(): void {
    this.memory?.close();
  }

  /** The tuples in memory, when loaded (for tests and measurements). */
  get inMemory(): MemoryTuples | undefined {
    return this.memory;
  }

  async check(request: CheckRequest): Promise<boolean> {
    return (await this.batchCheck([request]))[0];
  }

  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    // Requests without contextual tuples or context see the same tuples, so they share one resolver and its memo;
    // the whole batch is answered from one state of the tuples, brought up to date once.
    // Requests with the same context (the engine's own current time, say) share one too.
    let source: TupleSource | undefined;
    const shared = new Map<string, CheckResolver>();
    const answers: boolean[] = [];
    for (const req of requests) {
      const object = parseObject(req.object);
      const user = parseUser(req.user);
      this.model.assertRelation(object, req.relation);
      this.model.assertUser(user);
      source ??= await this.source();
      const context = this.contextOf(req.context);
      let resolver: CheckResolver;
      if (req.contextualTuples?.length) resolver = this.resolver(source, { ...req, context });
      else {
        const key = context ? JSON.stringify(context) : '';
        resolver = shared.get(key) ?? new CheckResolver(this.model, source, { context });
        shared.set(key, resolver);
      }
      answers.push(await resolver.check(object, req.relation, user));
    }
    return answers;
  }

  /** The request's context with what the engine supplies over it; undefined when both are empty. */
  private contextOf(context: RequestContext | undefined): RequestContext | undefined {
    const merged = this.supplied ? { ...context, ...this.supplied() } : context;
    return merged && Object.keys(merged).length ? merged : undefined;
  }

  /** A resolver of its own for a request with contextual tuples. */
  private resolver(source: TupleSource, options: ListOptions): CheckResolver {
    const read = options.contextualTuples?.length ? withContextualTuples(source, this.parseAll(options.contextualTuples)) : source;
    return new CheckResolver(this.model, read, { context: options.context });
  }

  /** Where checks read tuples now: memory when it is loaded and fresh enough, else the table. */
  private async source(): Promise<TupleSource> {
    return recordedSource(this.memory && (await this.memory.usable()) ? this.memory : this.store);
  }

  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    const held = await this.batchCheck(relations.map((relation) => ({ user, relation, object })));
    return relations.filter((_, i) => held[i]);
  }

  async listObjects(user: string, relation: string, type: string, options: ListOptions = {}): Promise<string[]> {
    const who = parseUser(user);
    this.model.assertUser(who);
    this.model.assertRelation({ type, id: '_' }, relation);
    const stored = await this.source();
    const source = options.contextualTuples?.length ? withContextualTuples(stored, this.parseAll(options.contextualTuples)) : stored;
    const candidates = await new ObjectCandidates(this.model, source, who).of(type, relation);
    const resolver = new CheckResolver(this.model, source, { context: this.contextOf(options.context) });
    const objects: string[] = [];
    // A candidate whose condition cannot be evaluated fails the list, as in OpenFGA (which answers with the error).
    for (const id of candidates) {
      if (objects.length === options.maxResults) break;
      if (await resolver.check({ type, id }, relation, who)) objects.push(formatObject({ type, id }));
    }
    return objects;
  }

  async listUsers(request: ListUsersRequest): Promise<string[]> {
    const object = parseObject(request.object);
    this.model.assertRelation(object, request.relation);
    if (request.userFilters.length === 0) throw new InvalidTupleError('list users needs at least one user filter');
    const filters = request.userFilters.map((f) => {
      this.model.assertUser({ type: f.type, id: '_', relation: f.relation ?? '' });
      return { type: f.type, relation: f.relation ?? '' };
    });
    const stored = await this.source();
    const source = request.contextualTuples?.length ? withContextualTuples(stored, this.parseAll(request.contextualTuples)) : stored;
    const context = this.contextOf(request.context);
    // Fails, as OpenFGA does, when a condition met on any path cannot be evaluated.
    const candidates = await new UserCandidates(this.model, source, filters, context).of(object.type, object.id, request.relation);
    const resolver = new CheckResolver(this.model, source, { context });
    const users: string[] = [];
    for (const user of candidates) {
      if (users.length === request.maxResults) break;
      if (await resolver.check(object, request.relation, user)) users.push(formatUser(user));
    }
    return users.sort();
  }

  async write(writes: Tuple[], deletes: Tuple[], opts: WriteOptions = {}): Promise<void> {
    // OpenFGA refuses a request naming one tuple twice. The one exception here: a tuple deleted with one condition
    // and written with another is how its condition changes (deletes go first; the OpenFGA engine sends those deletes
    // in a request before).
    const deleted = new Map(deletes.map((t) => [tupleKey(t), JSON.stringify(t.condition ?? null)]));
    for (const list of [writes, deletes]) {
      const seen = new Set<string>();
      for (const t of list) {
        const key = tupleKey(t);
        const rewrite = list === writes && deleted.has(key) && deleted.get(key) !== JSON.stringify(t.condition ?? null);
        if (seen.has(key) || (list === writes && deleted.has(key) && !rewrite)) {
          throw new InvalidTupleError(`duplicate tuple in write request: ${t.user} ${t.relation} ${t.object}`);
        }
        seen.add(key);
      }
    }
    // Deletes are validated by shape only: a tuple the model no longer accepts must still be removable.
    const parsedDeletes = deletes.map((t) => ({ object: parseObject(t.object), relation: t.relation, user: parseUser(t.user) }));
    const parsedWrites = this.parseAll(writes);
    // What is asked, before it is tried: a write that fails may have been applied in part.
    wrote(writes);
    wrote(deletes);
    const end = startLocalWrite(this.trx);
    try {
      await this.store.write(parsedWrites, parsedDeletes, opts);
    } finally {
      end();
    }
    // Committed: memory takes it from the log now (with whatever others committed before), so the writer's next
    // check needs nothing more. Should that read fail, the next check reads the log again.
    await this.memory?.catchUpIfLoaded().catch(() => undefined);
  }

  /**
   * The users of `object#relation` held in memory (of the types the model relates to it directly), or undefined unless
   * every tuple is in memory: how a write's notice finds an object's parent without a statement. A write's memory has
   * caught up with it (`write` above), so it holds every tuple committed before the write's own.
   */
  async keptUsers(object: string, relation: string): Promise<string[] | undefined> {
    if (this.memory?.mode !== 'memory') return undefined;
    const { type, id } = parseObject(object);
    const shapes = this.model
      .directTypes(type, relation)
      .filter((r) => !r.wildcard)
      .map((r) => ({ type: r.type, relation: r.relation ?? '' }));
    const [found] = await this.memory.readUsers([{ objectType: type, objectIds: [id], relation, shapes }]);
    return [...new Set((found.get(id) ?? []).map(formatUser))];
  }

  async readTuples(filter: TupleFilter): Promise<Tuple[]> {
    let objectType: string | undefined;
    let objectId: string | undefined;
    if (filter.object) {
      // `type:` selects a whole type, as in OpenFGA's Read.
      if (filter.object.endsWith(':')) objectType = filter.object.slice(0, -1);
      else ({ type: objectType, id: objectId } = parseObject(filter.object));
    }
    if (filter.relation) assertRelationName(filter.relation);
    const user = filter.user ? parseUser(filter.user) : undefined;
    if (objectId) readObjects(objectType!, [objectId]);
    else if (objectType) readTag(`${objectType}:*`);
    else if (user) readTag(`@${user.type}:${user.id}`);
    else readAnything();
    return this.store.read({ objectType, objectId, relation: filter.relation, user });
  }

  private parseAll(tuples: Tuple[]): ParsedTuple[] {
    return tuples.map((t) => ({ ...this.model.validateTuple(t), relation: t.relation }));
  }
}
