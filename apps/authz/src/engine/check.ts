import { InvalidTupleError, ResolutionTooComplexError } from './errors';
import { matchesRestriction, type TypeSystem, type Userset } from './model';
import type { TupleSource, UserShape } from './source';
import { formatUser, type ObjectRef, type UserRef } from './tuple';

/** OpenFGA's default resolution depth: a check may dispatch this many nested lookups before it gives up. */
export const MAX_RESOLUTION_DEPTH = 25;

/** A sub-result: allowed or not, and whether a cycle was met (then "not allowed" depends on the path taken). */
interface Outcome {
  allowed: boolean;
  cycle: boolean;
}

const ALLOWED: Outcome = { allowed: true, cycle: false };
const DENIED: Outcome = { allowed: false, cycle: false };

type Branch = () => Promise<Outcome>;

/**
 * Evaluates checks against the model, the way OpenFGA's LocalChecker does: rewrites are walked from the
 * object#relation down to the user, each hop to another object#relation is a dispatch counted against the
 * depth limit, and a path that comes back to a key it already visits ends as a cycle (not allowed).
 *
 * One resolver serves one check (or one batch): it memoises sub-results and tuple reads, so a sub-problem
 * met twice (say `organization:1#owner` under several permissions) is read once.
 */
export class CheckResolver {
  private readonly results = new Map<string, Outcome>();
  private readonly reads = new Map<string, Promise<UserRef[]>>();

  constructor(
    private readonly model: TypeSystem,
    private readonly source: TupleSource,
  ) {}

  /** Whether the user holds the relation on the object (both already validated). */
  async check(object: ObjectRef, relation: string, user: UserRef): Promise<boolean> {
    return (await this.resolve(object, relation, user, 0, new Set())).allowed;
  }

  private async resolve(object: ObjectRef, relation: string, user: UserRef, depth: number, path: Set<string>): Promise<Outcome> {
    if (depth >= MAX_RESOLUTION_DEPTH) throw new ResolutionTooComplexError(MAX_RESOLUTION_DEPTH);
    const key = `${object.type}:${object.id}#${relation}@${formatUser(user)}`;
    if (path.has(key)) return { allowed: false, cycle: true };
    const known = this.results.get(key);
    if (known) return known;
    // A userset holds its own relation: team:5#member is a member of team:5.
    if (user.relation === relation && user.type === object.type && user.id === object.id) return ALLOWED;
    const rewrite = this.model.rewrite(object.type, relation);
    if (!rewrite) throw new InvalidTupleError(`relation '${relation}' is not defined on type '${object.type}'`);
    const outcome = await this.evaluate(object, relation, rewrite, user, depth, new Set(path).add(key));
    // A "no" reached through a cycle holds only for this path, so only cycle-free answers are reused.
    if (!outcome.cycle) this.results.set(key, outcome);
    return outcome;
  }

  private evaluate(
    object: ObjectRef,
    relation: string,
    rewrite: Userset,
    user: UserRef,
    depth: number,
    path: Set<string>,
  ): Promise<Outcome> {
    const sub =
      (r: Userset): Branch =>
      () =>
        this.evaluate(object, relation, r, user, depth, path);
    if (rewrite.this) return this.direct(object, relation, user, depth, path);
    if (rewrite.computedUserset) return this.resolve(object, rewrite.computedUserset.relation, user, depth + 1, path);
    if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      return this.tupleToUserset(object, tupleset.relation, computedUserset.relation, user, depth, path);
    }
    if (rewrite.union) return union(rewrite.union.child.map(sub));
    if (rewrite.intersection) return intersection(rewrite.intersection.child.map(sub));
    if (rewrite.difference) return exclusion(sub(rewrite.difference.base), sub(rewrite.difference.subtract));
    throw new Error(`unsupported rewrite on ${object.type}#${relation}: ${JSON.stringify(rewrite)}`);
  }

  /** `[user, user:*, team#member]`: a tuple naming the user (or its type's wildcard), or a userset that holds it. */
  private async direct(object: ObjectRef, relation: string, user: UserRef, depth: number, path: Set<string>): Promise<Outcome> {
    const restrictions = this.model.directTypes(object.type, relation);
    const usersets = restrictions.filter((r) => r.relation).map((r) => ({ type: r.type, relation: r.relation! }));
    // Only shapes the model accepts are read: tuples left over from an older model are ignored, as in OpenFGA.
    const ids: string[] = [];
    if (restrictions.some((r) => matchesRestriction(r, user))) ids.push(user.id);
    const wildcard = { ...user, id: '*' };
    if (user.id !== '*' && restrictions.some((r) => matchesRestriction(r, wildcard))) ids.push('*');
    const shapes: UserShape[] = usersets.map((u) => ({ ...u }));
    const coveredByUserset = usersets.some((u) => u.type === user.type && u.relation === user.relation);
    if (ids.length && !coveredByUserset) shapes.push({ type: user.type, relation: user.relation, ids });
    const found = await this.read(object, relation, shapes);
    if (found.some((u) => u.type === user.type && u.relation === user.relation && ids.includes(u.id))) return ALLOWED;
    return union(
      found.filter((u) => u.relation).map((u) => () => this.resolve({ type: u.type, id: u.id }, u.relation, user, depth + 1, path)),
    );
  }

  /** `computed from tupleset`: the user holds `computed` on some object the tupleset relation points to. */
  private async tupleToUserset(
    object: ObjectRef,
    tupleset: string,
    computed: string,
    user: UserRef,
    depth: number,
    path: Set<string>,
  ): Promise<Outcome> {
    // Only parent types that define the computed relation count (OpenFGA skips the others).
    const shapes = this.model
      .directTypes(object.type, tupleset)
      .filter((r) => !r.relation && !r.wildcard && this.model.rewrite(r.type, computed))
      .map((r) => ({ type: r.type, relation: '' }));
    const parents = await this.read(object, tupleset, shapes);
    return union(parents.map((p) => () => this.resolve({ type: p.type, id: p.id }, computed, user, depth + 1, path)));
  }

  private read(object: ObjectRef, relation: string, shapes: UserShape[]): Promise<UserRef[]> {
    const key = `${object.type}:${object.id}#${relation}|${JSON.stringify(shapes)}`;
    let users = this.reads.get(key);
    if (!users) {
      users = this.source.readUsers(object.type, object.id, relation, shapes);
      this.reads.set(key, users);
    }
    return users;
  }
}

// The set operators short-circuit in order and treat errors as OpenFGA does: a definite answer from another
// operand wins over an error (union: any yes; intersection: any no), otherwise the error is the answer.

async function union(branches: Branch[]): Promise<Outcome> {
  let cycle = false;
  let error: unknown;
  for (const branch of branches) {
    try {
      const o = await branch();
      if (o.allowed) return ALLOWED;
      cycle ||= o.cycle;
    } catch (err) {
      error ??= err;
    }
  }
  if (error) throw error;
  return cycle ? { allowed: false, cycle } : DENIED;
}

async function intersection(branches: Branch[]): Promise<Outcome> {
  let error: unknown;
  for (const branch of branches) {
    try {
      const o = await branch();
      if (!o.allowed) return o;
    } catch (err) {
      error ??= err;
    }
  }
  if (error) throw error;
  return ALLOWED;
}

async function exclusion(base: Branch, subtract: Branch): Promise<Outcome> {
  let error: unknown;
  try {
    const b = await base();
    if (!b.allowed) return b;
  } catch (err) {
    error = err;
  }
  // A cycle in the subtracted set means it could not be decided, so the base is not granted (as OpenFGA).
  const s = await subtract();
  if (s.allowed || s.cycle) return { allowed: false, cycle: s.cycle };
  if (error) throw error;
  return ALLOWED;
}
