import type { authzV1 } from '@platform/proto';
import { InvalidTupleError, type AuthzEngine, type Tuple, type TypeSystem } from './engine';

type Node = authzV1.UsersetTree_Node;
/** A relation's rewrite in the model. */
type Userset = NonNullable<ReturnType<TypeSystem['rewrite']>>;

/** `type:id` as its two parts; anything else (a userset, a wildcard, no id) is an invalid argument. */
function objectParts(object: string): { type: string; id: string } {
  const i = object.indexOf(':');
  const type = object.slice(0, i);
  const id = object.slice(i + 1);
  if (i <= 0 || !id || id === '*' || /[\s#]/.test(object)) throw new InvalidTupleError(`invalid object '${object}': expected type:id`);
  return { type, id };
}

/** A tuple's user as the model's type restrictions see it: `user:7`, `user:*`, `team:3#member`. */
function userParts(user: string): { type: string; id: string; relation: string } {
  const hash = user.indexOf('#');
  const [head, relation] = hash < 0 ? [user, ''] : [user.slice(0, hash), user.slice(hash + 1)];
  const i = head.indexOf(':');
  return { type: head.slice(0, i), id: head.slice(i + 1), relation };
}

/**
 * OpenFGA's Expand over the model and the tuples the engine reads (its public readTuples, so either engine answers
 * it): the userset tree of `relation` on `object`, one level deep. A direct relation lists the users of its tuples,
 * stored and contextual, that the model's type restrictions still accept; a computed relation names the relation it
 * is; a tuple-to-userset names, for each object its tupleset's tuples point at, the relation computed there (when
 * that object's type defines it); union, intersection and difference are nodes of their parts, all named
 * `object#relation`. Conditions are not evaluated (as OpenFGA's Expand).
 */
export class Expansion {
  constructor(
    private readonly engine: AuthzEngine,
    private readonly model: TypeSystem,
  ) {}

  async expand(object: string, relation: string, contextualTuples: Tuple[] = []): Promise<authzV1.UsersetTree> {
    const ref = objectParts(object);
    this.model.assertRelation(ref, relation);
    for (const t of contextualTuples) this.model.validateTuple(t);
    const root = await this.node(ref.type, object, relation, this.model.rewrite(ref.type, relation)!, contextualTuples);
    return { root };
  }

  private async node(type: string, object: string, relation: string, rewrite: Userset, added: Tuple[]): Promise<Node> {
    const name = `${object}#${relation}`;
    const leaf = (value: authzV1.UsersetTree_Leaf['value']): Node => ({ name, value: { $case: 'leaf', value: { value } } });
    const children = (parts: Userset[]) => Promise.all(parts.map((part) => this.node(type, object, relation, part, added)));
    if (rewrite.this) {
      const users = (await this.tuples(type, object, relation, added)).map((t) => t.user);
      return leaf({ $case: 'users', value: { users: [...new Set(users)].sort() } });
    }
    if (rewrite.computedUserset) {
      return leaf({ $case: 'computed', value: { userset: `${object}#${rewrite.computedUserset.relation}` } });
    }
    if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      const parents = (await this.tuples(type, object, tupleset.relation, added))
        .map((t) => userParts(t.user))
        .filter((u) => !u.relation && u.id !== '*' && this.model.rewrite(u.type, computedUserset.relation));
      const computed = [...new Set(parents.map((u) => `${u.type}:${u.id}#${computedUserset.relation}`))].sort();
      return leaf({
        $case: 'tupleToUserset',
        value: { tupleset: `${object}#${tupleset.relation}`, computed: computed.map((userset) => ({ userset })) },
      });
    }
    if (rewrite.union) return { name, value: { $case: 'union', value: { nodes: await children(rewrite.union.child) } } };
    if (rewrite.intersection)
      return { name, value: { $case: 'intersection', value: { nodes: await children(rewrite.intersection.child) } } };
    if (rewrite.difference) {
      const [base, subtract] = await children([rewrite.difference.base, rewrite.difference.subtract]);
      return { name, value: { $case: 'difference', value: { base, subtract } } };
    }
    throw new InvalidTupleError(`relation '${relation}' of type '${type}' has a rewrite this server cannot expand`);
  }

  /** The stored and contextual tuples of object#relation the model accepts as they are (their user's shape and condition). */
  private async tuples(type: string, object: string, relation: string, added: Tuple[]): Promise<Tuple[]> {
    const stored = await this.engine.readTuples({ object, relation });
    const extra = added.filter((t) => t.object === object && t.relation === relation);
    return [...stored, ...extra].filter((t) => this.model.accepts(type, relation, userParts(t.user), t.condition?.name));
  }
}
