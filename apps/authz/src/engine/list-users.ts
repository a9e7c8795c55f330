import type { TypeSystem, Userset } from './model';
import type { TupleSource, UserShape } from './source';
import type { UserRef } from './tuple';

/** A kind of user a list-users request asks for: plain users of a type, or usersets `type#relation`. */
export interface UserFilter {
  type: string;
  relation: string;
}

/**
 * The users who may hold a relation on an object: a forward walk of the model from `object#relation` down the
 * tuples (direct users, usersets and the users of those, computed relations, parents of tuple-to-userset),
 * collecting every user of a filter's kind it meets: plain users, wildcards (`user:*`) and usersets. For union,
 * direct, computed and tuple-to-userset rewrites that is exact; intersection and exclusion contribute every
 * operand's users, so the caller confirms each candidate with a check (the same one Check answers, with the
 * request's contextual tuples and context). Each object#relation is walked once, so cycles end.
 */
export class UserCandidates {
  private readonly visited = new Set<string>();
  private readonly found = new Map<string, UserRef>();

  constructor(
    private readonly model: TypeSystem,
    private readonly source: TupleSource,
    private readonly filters: UserFilter[],
  ) {}

  /** Candidate users of object#relation (deduplicated, in the order met). */
  async of(type: string, id: string, relation: string): Promise<UserRef[]> {
    await this.expand(type, id, relation);
    return [...this.found.values()];
  }

  private wanted(u: UserRef): boolean {
    return this.filters.some((f) => f.type === u.type && f.relation === u.relation);
  }

  private async expand(type: string, id: string, relation: string): Promise<void> {
    const key = `${type}:${id}#${relation}`;
    if (this.visited.has(key)) return;
    this.visited.add(key);
    const rewrite = this.model.rewrite(type, relation);
    if (rewrite) await this.rewrite(type, id, relation, rewrite);
  }

  private async rewrite(type: string, id: string, relation: string, rewrite: Userset): Promise<void> {
    if (rewrite.this) return this.direct(type, id, relation);
    if (rewrite.computedUserset) return this.expand(type, id, rewrite.computedUserset.relation);
    if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      const shapes = this.model
        .directTypes(type, tupleset.relation)
        .filter((r) => !r.relation && !r.wildcard && this.model.rewrite(r.type, computedUserset.relation))
        .map((r) => ({ type: r.type, relation: '' }));
      for (const parent of await this.read(type, id, tupleset.relation, shapes)) {
        await this.expand(parent.type, parent.id, computedUserset.relation);
      }
      return;
    }
    const children = rewrite.union?.child ?? rewrite.intersection?.child ?? (rewrite.difference ? [rewrite.difference.base] : []);
    for (const child of children) await this.rewrite(type, id, relation, child);
  }

  private async direct(type: string, id: string, relation: string): Promise<void> {
    // Every shape the relation admits: plain users (and so their wildcard) and usersets.
    const shapes = new Map<string, UserShape>();
    for (const r of this.model.directTypes(type, relation)) {
      const k = `${r.type}#${r.relation ?? ''}`;
      const known = shapes.get(k);
      if (r.wildcard) {
        if (!known) shapes.set(k, { type: r.type, relation: '', ids: ['*'] });
      } else if (!known || known.ids) {
        shapes.set(k, { type: r.type, relation: r.relation ?? '' });
      }
    }
    for (const u of await this.read(type, id, relation, [...shapes.values()])) {
      const user = { type: u.type, id: u.id, relation: u.relation };
      if (this.wanted(user)) this.found.set(`${u.type}:${u.id}#${u.relation}`, user);
      if (u.relation) await this.expand(u.type, u.id, u.relation);
    }
  }

  private async read(type: string, id: string, relation: string, shapes: UserShape[]): Promise<UserRef[]> {
    if (shapes.length === 0) return [];
    const [found] = await this.source.readUsers([{ objectType: type, objectIds: [id], relation, shapes }]);
    return found.get(id) ?? [];
  }
}
