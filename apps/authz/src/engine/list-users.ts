import type { RequestContext } from './conditions';
import type { TypeSystem, Userset } from './model';
import type { TupleSource, UserShape } from './source';
import { formatUser, type UserRef } from './tuple';

/** A kind of user a list-users request asks for: plain users of a type, or usersets `type#relation`. */
export interface UserFilter {
  type: string;
  relation: string;
}

/**
 * The users who may hold a relation on an object, as OpenFGA's ListUsers finds them: a forward walk of the model
 * from `object#relation` down the tuples (direct users, usersets and the users of those, computed relations,
 * parents of tuple-to-userset), collecting every user of a filter's kind it meets: plain users, wildcards
 * (`user:*`), usersets named in tuples, and every `object#relation` the walk reaches that is of a userset filter's
 * kind (`team:5#member` holds `member` on `team:5`, whether or not a tuple names it). For union, direct, computed
 * and tuple-to-userset rewrites that is exact; intersection and exclusion contribute every operand's users, so the
 * caller confirms each candidate with a check (the same one Check answers, with the request's contextual tuples
 * and context). Each object#relation is walked once, so cycles end.
 *
 * Conditions are evaluated on the way with the request's context: a tuple whose condition does not hold ends its
 * path, and one that cannot be evaluated (a missing parameter) fails the whole list, whatever other paths grant, as
 * in OpenFGA. Tuples the model no longer admits (left from an older model) are not read. Relations from which no
 * kind of user the filters ask for can be reached are not walked, as OpenFGA does not walk them.
 */
export class UserCandidates {
  private readonly visited = new Set<string>();
  private readonly found = new Map<string, UserRef>();
  private readonly wantedKinds: Set<string>;

  constructor(
    private readonly model: TypeSystem,
    private readonly source: TupleSource,
    private readonly filters: UserFilter[],
    private readonly context?: RequestContext,
  ) {
    this.wantedKinds = new Set(filters.map((f) => `${f.type}#${f.relation}`));
  }

  /** Candidate users of object#relation (deduplicated, in the order met). */
  async of(type: string, id: string, relation: string): Promise<UserRef[]> {
    await this.expand(type, id, relation);
    return [...this.found.values()];
  }

  private wanted(u: UserRef): boolean {
    return this.filters.some((f) => f.type === u.type && f.relation === u.relation);
  }

  private collect(u: UserRef): void {
    if (this.wanted(u)) this.found.set(`${u.type}:${u.id}#${u.relation}`, { type: u.type, id: u.id, relation: u.relation });
  }

  private async expand(type: string, id: string, relation: string): Promise<void> {
    const key = `${type}:${id}#${relation}`;
    if (this.visited.has(key)) return;
    this.visited.add(key);
    // A userset holds its own relation: `team:5#member` is a member of `team:5`.
    this.collect({ type, id, relation });
    if (!reachesAny(this.model, type, relation, this.wantedKinds)) return;
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
    // Every operand of an exclusion is walked too: no user is listed for its subtracted set (the check says no),
    // but a condition there that cannot be evaluated fails the list, as in OpenFGA.
    const children =
      rewrite.union?.child ??
      rewrite.intersection?.child ??
      (rewrite.difference ? [rewrite.difference.base, rewrite.difference.subtract] : []);
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
      this.collect(u);
      if (u.relation) await this.expand(u.type, u.id, u.relation);
    }
  }

  /** The users of the tuples on object#relation that fit the shapes, the model admits and whose condition holds. */
  private async read(type: string, id: string, relation: string, shapes: UserShape[]): Promise<UserRef[]> {
    if (shapes.length === 0) return [];
    const [found] = await this.source.readUsers([{ objectType: type, objectIds: [id], relation, shapes }]);
    return (found.get(id) ?? []).filter(
      (u) =>
        this.model.accepts(type, relation, u, u.condition?.name) &&
        // Throws (failing the list) when the condition cannot be evaluated.
        (!u.condition || this.model.conditions.evaluate(`${type}:${id}#${relation}@${formatUser(u)}`, u.condition, this.context)),
    );
  }
}

// Per model, `type#relation` -> the kinds of user (`type#` for plain users and their wildcard, `type#relation` for
// usersets) a walk from it can meet.
const reachable = new WeakMap<TypeSystem, Map<string, Set<string>>>();

/** Whether a walk from type#relation can meet a user of one of `kinds` (a userset it reaches counts as one). */
function reachesAny(model: TypeSystem, type: string, relation: string, kinds: Set<string>): boolean {
  const met = kindsBelow(model, type, relation);
  for (const k of kinds) if (met.has(k)) return true;
  return false;
}

function kindsBelow(model: TypeSystem, type: string, relation: string): Set<string> {
  let memo = reachable.get(model);
  if (!memo) reachable.set(model, (memo = new Map()));
  const start = `${type}#${relation}`;
  const known = memo.get(start);
  if (known) return known;
  const kinds = new Set<string>();
  const seen = new Set<string>();
  const visit = (t: string, r: string, root = false): void => {
    const key = `${t}#${r}`;
    // Below the start (the start itself too, when a cycle leads back to it), every object#relation reached is a
    // userset the walk meets.
    if (!root) kinds.add(key);
    if (seen.has(key)) return;
    seen.add(key);
    const rewrite = model.rewrite(t, r);
    if (rewrite) walk(t, r, rewrite);
  };
  const walk = (t: string, r: string, rewrite: Userset): void => {
    if (rewrite.this) {
      for (const ref of model.directTypes(t, r)) {
        if (ref.relation) visit(ref.type, ref.relation);
        else kinds.add(`${ref.type}#`);
      }
    } else if (rewrite.computedUserset) {
      visit(t, rewrite.computedUserset.relation);
    } else if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      for (const ref of model.directTypes(t, tupleset.relation)) {
        if (!ref.relation && !ref.wildcard && model.rewrite(ref.type, computedUserset.relation)) visit(ref.type, computedUserset.relation);
      }
    } else {
      const children =
        rewrite.union?.child ??
        rewrite.intersection?.child ??
        (rewrite.difference ? [rewrite.difference.base, rewrite.difference.subtract] : []);
      for (const child of children) walk(t, r, child);
    }
  };
  visit(type, relation, true);
  memo.set(start, kinds);
  return kinds;
}
