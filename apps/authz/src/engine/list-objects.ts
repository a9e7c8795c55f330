import type { TypeSystem, Userset } from './model';
import { matchesRestriction } from './model';
import type { TupleSource } from './source';
import type { UserRef } from './tuple';

/**
 * The objects of a type on which the user may hold a relation: a reverse walk of the model from the user up
 * to `type#relation`, following tuples through the user-first index. For union, direct, computed and
 * tuple-to-userset rewrites the walk is exact; for intersection and exclusion it yields the candidates of
 * one operand, so the caller confirms every candidate with a check. Recursive relations (a team of teams)
 * are walked to a fixpoint.
 */
export class ObjectCandidates {
  /** Per `type#relation`, the object ids found so far; only ever grows. */
  private readonly found = new Map<string, Set<string>>();
  private readonly active = new Set<string>();
  private visited = new Set<string>();
  private grew = false;
  private recursed = false;

  constructor(
    private readonly model: TypeSystem,
    private readonly source: TupleSource,
    private readonly user: UserRef,
  ) {}

  /** Candidate object ids of `type` for `relation`. */
  async of(type: string, relation: string): Promise<string[]> {
    // A pass that met a relation still being expanded (recursion) may have missed objects found later in
    // that pass, so such passes repeat until nothing new turns up.
    do {
      this.grew = false;
      this.recursed = false;
      this.visited = new Set();
      await this.expand(type, relation);
    } while (this.grew && this.recursed);
    return [...(this.found.get(`${type}#${relation}`) ?? [])].sort();
  }

  private async expand(type: string, relation: string): Promise<Set<string>> {
    const key = `${type}#${relation}`;
    const known = this.found.get(key) ?? new Set<string>();
    this.found.set(key, known);
    if (this.active.has(key)) this.recursed = true;
    if (this.visited.has(key) || this.active.has(key)) return known;
    const rewrite = this.model.rewrite(type, relation);
    if (!rewrite) return known;
    this.active.add(key);
    try {
      const ids = await this.rewrite(type, relation, rewrite);
      // A userset user holds its own relation on its own object.
      if (this.user.relation === relation && this.user.type === type) ids.add(this.user.id);
      for (const id of ids) {
        if (!known.has(id)) {
          known.add(id);
          this.grew = true;
        }
      }
    } finally {
      this.active.delete(key);
      this.visited.add(key);
    }
    return known;
  }

  private async rewrite(type: string, relation: string, rewrite: Userset): Promise<Set<string>> {
    if (rewrite.this) return this.direct(type, relation);
    if (rewrite.computedUserset) return new Set(await this.expand(type, rewrite.computedUserset.relation));
    if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      const ids = new Set<string>();
      for (const r of this.model.directTypes(type, tupleset.relation)) {
        if (r.relation || r.wildcard || !this.model.rewrite(r.type, computedUserset.relation)) continue;
        const parents = await this.expand(r.type, computedUserset.relation);
        const users = [...parents].map((id) => ({ type: r.type, id, relation: '' }));
        if (users.length) for (const id of await this.source.readObjectIds(type, tupleset.relation, users)) ids.add(id);
      }
      return ids;
    }
    if (rewrite.union) {
      const ids = new Set<string>();
      for (const child of rewrite.union.child) for (const id of await this.rewrite(type, relation, child)) ids.add(id);
      return ids;
    }
    // Anything in an intersection is in its first operand; anything in a difference is in its base.
    if (rewrite.intersection) return this.rewrite(type, relation, rewrite.intersection.child[0]);
    if (rewrite.difference) return this.rewrite(type, relation, rewrite.difference.base);
    return new Set();
  }

  private async direct(type: string, relation: string): Promise<Set<string>> {
    const users: UserRef[] = [];
    const restrictions = this.model.directTypes(type, relation);
    if (restrictions.some((r) => matchesRestriction(r, this.user))) users.push(this.user);
    const wildcard = { ...this.user, id: '*' };
    if (this.user.id !== '*' && restrictions.some((r) => matchesRestriction(r, wildcard))) users.push(wildcard);
    for (const r of restrictions) {
      if (!r.relation) continue;
      for (const id of await this.expand(r.type, r.relation)) users.push({ type: r.type, id, relation: r.relation });
    }
    return new Set(users.length ? await this.source.readObjectIds(type, relation, users) : []);
  }
}
