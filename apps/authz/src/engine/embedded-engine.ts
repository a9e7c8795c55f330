import type { Database } from '@platform/db';
import { CheckResolver } from './check';
import { withContextualTuples, type ParsedTuple } from './contextual';
import { InvalidTupleError } from './errors';
import { ObjectCandidates } from './list-objects';
import type { TypeSystem } from './model';
import { TupleStore } from './tuple-store';
import { assertRelationName, formatObject, parseObject, parseUser, tupleKey } from './tuple';
import type { AuthzEngine, CheckRequest, Tuple, TupleFilter, WriteOptions } from './types';

/** The engine that needs no OpenFGA server: the same model, evaluated in-process over the authz schema's tuples. */
export class EmbeddedEngine implements AuthzEngine {
  private readonly store: TupleStore;

  constructor(
    db: Database,
    readonly model: TypeSystem,
  ) {
    this.store = new TupleStore(db);
  }

  async check(request: CheckRequest): Promise<boolean> {
    return (await this.batchCheck([request]))[0];
  }

  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    // Requests without contextual tuples see the same tuples, so they share one resolver and its memo.
    let shared: CheckResolver | undefined;
    const answers: boolean[] = [];
    for (const req of requests) {
      const object = parseObject(req.object);
      const user = parseUser(req.user);
      this.model.assertRelation(object, req.relation);
      this.model.assertUser(user);
      const resolver = req.contextualTuples?.length
        ? new CheckResolver(this.model, withContextualTuples(this.store, this.parseAll(req.contextualTuples)))
        : (shared ??= new CheckResolver(this.model, this.store));
      answers.push(await resolver.check(object, req.relation, user));
    }
    return answers;
  }

  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    const held = await this.batchCheck(relations.map((relation) => ({ user, relation, object })));
    return relations.filter((_, i) => held[i]);
  }

  async listObjects(user: string, relation: string, type: string): Promise<string[]> {
    const who = parseUser(user);
    this.model.assertUser(who);
    this.model.assertRelation({ type, id: '_' }, relation);
    const candidates = await new ObjectCandidates(this.model, this.store, who).of(type, relation);
    const resolver = new CheckResolver(this.model, this.store);
    const objects: string[] = [];
    for (const id of candidates) {
      if (await resolver.check({ type, id }, relation, who)) objects.push(formatObject({ type, id }));
    }
    return objects;
  }

  async write(writes: Tuple[], deletes: Tuple[], opts: WriteOptions = {}): Promise<void> {
    const seen = new Set<string>();
    for (const t of [...writes, ...deletes]) {
      const key = tupleKey(t);
      // OpenFGA refuses a request naming one tuple twice, in writes or deletes alike.
      if (seen.has(key)) throw new InvalidTupleError(`duplicate tuple in write request: ${t.user} ${t.relation} ${t.object}`);
      seen.add(key);
    }
    // Deletes are validated by shape only: a tuple the model no longer accepts must still be removable.
    const parsedDeletes = deletes.map((t) => ({ object: parseObject(t.object), relation: t.relation, user: parseUser(t.user) }));
    await this.store.write(this.parseAll(writes), parsedDeletes, opts);
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
    return this.store.read({ objectType, objectId, relation: filter.relation, user });
  }

  private parseAll(tuples: Tuple[]): ParsedTuple[] {
    return tuples.map((t) => ({ ...this.model.validateTuple(t), relation: t.relation }));
  }
}
