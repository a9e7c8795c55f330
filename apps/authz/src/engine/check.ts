import type { RequestContext } from './conditions';
import { InvalidTupleError, ResolutionTooComplexError } from './errors';
import { matchesRestriction, type TypeSystem, type Userset } from './model';
import { batchHeight } from './plan';
import type { TupleSource, UserShape, UsersRead } from './source';
import { formatUser, type ObjectRef, type UserRef } from './tuple';

/** OpenFGA's default resolution depth: a check may dispatch this many nested lookups before it gives up. */
export const MAX_RESOLUTION_DEPTH = 25;

/** A sub-result: allowed or not, and whether a cycle was met (then "not allowed" depends on the path taken). */
interface Outcome {
  allowed: boolean;
  cycle: boolean;
}

/** Users read from one object#relation; `error` when a conditioned tuple among them could not be evaluated. */
type ReadUsers = UserRef[] & { error?: unknown };

const ALLOWED: Outcome = { allowed: true, cycle: false };
const DENIED: Outcome = { allowed: false, cycle: false };

type Branch = () => Promise<Outcome>;

/** An object#relation to resolve. */
interface Target {
  type: string;
  id: string;
  relation: string;
}

/** A read a batched level makes for some objects of one type, and what its answers lead to. */
interface Leaf {
  type: string;
  relation: string;
  shapes: UserShape[];
  ids: Set<string>;
  /** A direct read: these ids of the checked user's shape are a hit. */
  hit?: string[];
  /** A tuple-to-userset read: the relation to resolve on each parent found. */
  computed?: string;
}

/**
 * Evaluates checks against the model, the way OpenFGA's LocalChecker does: rewrites are walked from the
 * object#relation down to the user, each hop to another object#relation is a dispatch counted against the
 * depth limit, and a path that comes back to a key it already visits ends as a cycle (not allowed).
 *
 * Relations whose reachable rewrites are acyclic unions (see batchHeight: the whole platform model) are
 * resolved set-at-a-time instead: level by level, every read of a level (of any number of objects, say the
 * twenty teams assigned to an organization's roles) in one round trip. Other relations (recursive ones,
 * intersection, exclusion) are walked one object at a time, and hand batchable sub-relations to the batched
 * walk, several sibling objects at once.
 *
 * One resolver serves one check (or one batch): it memoises sub-results and tuple reads, so a sub-problem
 * met twice (say `organization:1#owner` under several permissions) is read once.
 */
export class CheckResolver {
  private readonly results = new Map<string, Outcome>();
  private readonly reads = new Map<string, Promise<ReadUsers>>();

  constructor(
    private readonly model: TypeSystem,
    private readonly source: TupleSource,
    /**
     * `batch: false` walks every relation one object at a time (the reference the batched walk is tested against);
     * `context`: the request's parameter values for the conditions of conditioned tuples.
     */
    private readonly options: { batch?: boolean; context?: RequestContext } = {},
  ) {}

  /** Whether the user holds the relation on the object (both already validated). */
  async check(object: ObjectRef, relation: string, user: UserRef): Promise<boolean> {
    return (await this.resolve(object, relation, user, 0, new Set())).allowed;
  }

  private async resolve(object: ObjectRef, relation: string, user: UserRef, depth: number, path: Set<string>): Promise<Outcome> {
    if (depth >= MAX_RESOLUTION_DEPTH) throw new ResolutionTooComplexError(MAX_RESOLUTION_DEPTH);
    const key = resultKey(object.type, object.id, relation, user);
    if (path.has(key)) return { allowed: false, cycle: true };
    const known = this.results.get(key);
    if (known) return known;
    // A userset holds its own relation: team:5#member is a member of team:5.
    if (user.relation === relation && user.type === object.type && user.id === object.id) return ALLOWED;
    const rewrite = this.model.rewrite(object.type, relation);
    if (!rewrite) throw new InvalidTupleError(`relation '${relation}' is not defined on type '${object.type}'`);
    const outcome = this.batchable(object.type, relation, depth)
      ? await this.resolveAny(object.type, [object.id], relation, user)
      : await this.evaluate(object, relation, rewrite, user, depth, new Set(path).add(key));
    // A "no" reached through a cycle holds only for this path, so only cycle-free answers are reused.
    if (!outcome.cycle) this.results.set(key, outcome);
    return outcome;
  }

  /** Whether type#relation, reached at this depth, can be resolved by the batched walk (see batchHeight). */
  private batchable(type: string, relation: string, depth: number): boolean {
    if (this.options.batch === false) return false;
    const height = batchHeight(this.model, type, relation);
    // Every lookup below stays under the depth limit, so the walk cannot fail on it.
    return height !== undefined && depth + height < MAX_RESOLUTION_DEPTH;
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
    const { shapes, ids } = this.directShapes(object.type, relation, user);
    const found = await this.readOne(object, relation, shapes);
    if (found.some((u) => u.type === user.type && u.relation === user.relation && ids.includes(u.id))) return ALLOWED;
    const usersets = found.filter((u) => u.relation).map((u) => ({ type: u.type, id: u.id, relation: u.relation }));
    const outcome = await union(this.branches(usersets, user, depth + 1, path));
    // A tuple whose condition could not be evaluated decides only when nothing else grants (OpenFGA's rule).
    if (!outcome.allowed && found.error) throw found.error;
    return outcome;
  }

  /**
   * What a direct read of type#relation looks for: every userset the relation admits, and the user itself (or
   * its type's wildcard) when admitted; `ids` are the user ids whose tuple is a hit.
   * Only shapes the model accepts are read: tuples left over from an older model are ignored, as in OpenFGA.
   */
  private directShapes(type: string, relation: string, user: UserRef): { shapes: UserShape[]; ids: string[] } {
    const restrictions = this.model.directTypes(type, relation);
    // `team#member` and `team#member with c` are one shape to read.
    const usersets = [
      ...new Map(
        restrictions.filter((r) => r.relation).map((r) => [`${r.type}#${r.relation}`, { type: r.type, relation: r.relation! }]),
      ).values(),
    ];
    const ids: string[] = [];
    if (restrictions.some((r) => matchesRestriction(r, user))) ids.push(user.id);
    const wildcard = { ...user, id: '*' };
    if (user.id !== '*' && restrictions.some((r) => matchesRestriction(r, wildcard))) ids.push('*');
    const shapes: UserShape[] = usersets.map((u) => ({ ...u }));
    const coveredByUserset = usersets.some((u) => u.type === user.type && u.relation === user.relation);
    if (ids.length && !coveredByUserset) shapes.push({ type: user.type, relation: user.relation, ids });
    return { shapes, ids };
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
    const shapes = this.parentShapes(object.type, tupleset, computed);
    const parents = await this.readOne(object, tupleset, shapes);
    const outcome = await union(
      this.branches(
        parents.map((p) => ({ type: p.type, id: p.id, relation: computed })),
        user,
        depth + 1,
        path,
      ),
    );
    if (!outcome.allowed && parents.error) throw parents.error;
    return outcome;
  }

  /** The parents a tuple-to-userset follows: only parent types that define the computed relation count (OpenFGA skips the others). */
  private parentShapes(type: string, tupleset: string, computed: string): UserShape[] {
    return this.model
      .directTypes(type, tupleset)
      .filter((r) => !r.relation && !r.wildcard && this.model.rewrite(r.type, computed))
      .map((r) => ({ type: r.type, relation: '' }));
  }

  /**
   * The union's operands for resolving each target: the targets of one batchable type#relation become one
   * operand, resolved together (placed where the first of them was); the others one operand each, in order.
   * Batchable operands cannot fail or meet a cycle, so their place in the union does not change its answer.
   */
  private branches(targets: Target[], user: UserRef, depth: number, path: Set<string>): Branch[] {
    const groups = new Map<string, Target[]>();
    const branches: Branch[] = [];
    for (const target of targets) {
      const group = `${target.type}#${target.relation}`;
      if (this.batchable(target.type, target.relation, depth)) {
        const members = groups.get(group);
        if (members) {
          members.push(target);
          continue;
        }
        const batch = [target];
        groups.set(group, batch);
        branches.push(() =>
          this.resolveAny(
            target.type,
            batch.map((t) => t.id),
            target.relation,
            user,
          ),
        );
      } else {
        branches.push(() => this.resolve({ type: target.type, id: target.id }, target.relation, user, depth, path));
      }
    }
    return branches;
  }

  /**
   * Whether the user holds `relation` on any of the objects `ids` of `type`, which must be batchable: a
   * breadth-first walk of the rewrites, one round trip per level for all the objects of the level. Each
   * object#relation is visited once; when none holds, each is remembered as not holding.
   */
  private async resolveAny(type: string, ids: string[], relation: string, user: UserRef): Promise<Outcome> {
    const visited = new Set<string>();
    let error: unknown;
    let goals: Target[] = ids.map((id) => ({ type, id, relation }));
    while (goals.length > 0) {
      const leaves = new Map<string, Leaf>();
      // Computed usersets and unions need no read: they add goals of this level, or leaves to read.
      for (let i = 0; i < goals.length; i++) {
        const goal = goals[i];
        const key = resultKey(goal.type, goal.id, goal.relation, user);
        if (visited.has(key)) continue;
        visited.add(key);
        if (user.relation === goal.relation && user.type === goal.type && user.id === goal.id) return ALLOWED;
        const known = this.results.get(key);
        if (known?.allowed) return ALLOWED;
        if (known) continue;
        this.plan(goal, this.model.rewrite(goal.type, goal.relation)!, user, goals, leaves);
      }
      const list = [...leaves.values()];
      const answers = await this.read(list);
      const next: Target[] = [];
      for (const [i, leaf] of list.entries()) {
        for (const users of answers[i].values()) {
          error ??= users.error;
          for (const u of users) {
            if (leaf.computed) next.push({ type: u.type, id: u.id, relation: leaf.computed });
            else if (u.type === user.type && u.relation === user.relation && leaf.hit!.includes(u.id)) return ALLOWED;
            else if (u.relation) next.push({ type: u.type, id: u.id, relation: u.relation });
          }
        }
      }
      goals = next;
    }
    // Nothing granted, but a condition could not be evaluated: the answer is that error, and it is not remembered.
    if (error) throw error;
    for (const key of visited) this.results.set(key, DENIED);
    return DENIED;
  }

  /** Adds the reads one goal's rewrite needs to `leaves` (merged per type#relation), its computed usersets to `goals`. */
  private plan(goal: Target, rewrite: Userset, user: UserRef, goals: Target[], leaves: Map<string, Leaf>): void {
    const leaf = (relation: string, computed: string | undefined, make: () => Omit<Leaf, 'ids'>) => {
      const key = `${goal.type}#${relation}#${computed ?? ''}`;
      let found = leaves.get(key);
      if (!found) leaves.set(key, (found = { ...make(), ids: new Set() }));
      found.ids.add(goal.id);
    };
    if (rewrite.this) {
      leaf(goal.relation, undefined, () => {
        const { shapes, ids } = this.directShapes(goal.type, goal.relation, user);
        return { type: goal.type, relation: goal.relation, shapes, hit: ids };
      });
    } else if (rewrite.computedUserset) {
      goals.push({ type: goal.type, id: goal.id, relation: rewrite.computedUserset.relation });
    } else if (rewrite.tupleToUserset) {
      const { tupleset, computedUserset } = rewrite.tupleToUserset;
      const computed = computedUserset.relation;
      leaf(tupleset.relation, computed, () => ({
        type: goal.type,
        relation: tupleset.relation,
        shapes: this.parentShapes(goal.type, tupleset.relation, computed),
        computed,
      }));
    } else if (rewrite.union) {
      for (const child of rewrite.union.child) this.plan(goal, child, user, goals, leaves);
    } else {
      throw new Error(`${goal.type}#${goal.relation} is not batchable`);
    }
  }

  /** The users on one object#relation that fit the shapes. */
  private async readOne(object: ObjectRef, relation: string, shapes: UserShape[]): Promise<ReadUsers> {
    const [found] = await this.read([{ type: object.type, relation, shapes, ids: new Set([object.id]) }]);
    return found.get(object.id)!;
  }

  /**
   * The users found on each object of each leaf, read once per resolver: reads met before are reused, the
   * others go to the source together, in one round trip.
   */
  private async read(leaves: Pick<Leaf, 'type' | 'relation' | 'shapes' | 'ids'>[]): Promise<Map<string, ReadUsers>[]> {
    const pending = new Map<string, { read: UsersRead; keys: string[] }>();
    const queued = new Set<string>();
    const keyed = leaves.map((leaf) => {
      const shapes = JSON.stringify(leaf.shapes);
      return [...leaf.ids].map((id) => {
        const key = `${leaf.type}:${id}#${leaf.relation}|${shapes}`;
        if (leaf.shapes.length > 0 && !this.reads.has(key) && !queued.has(key)) {
          queued.add(key);
          const group = `${leaf.type}#${leaf.relation}|${shapes}`;
          let p = pending.get(group);
          if (!p) {
            // A relation that admits no condition reads only unconditioned tuples; the others are admitted below.
            const withoutConditions = !this.model.conditional(leaf.type, leaf.relation);
            p = {
              read: { objectType: leaf.type, objectIds: [], relation: leaf.relation, shapes: leaf.shapes, withoutConditions },
              keys: [],
            };
            pending.set(group, p);
          }
          p.read.objectIds.push(id);
          p.keys.push(key);
        }
        return { id, key };
      });
    });
    if (pending.size > 0) {
      const batch = [...pending.values()];
      const answer = this.source.readUsers(batch.map((p) => p.read));
      batch.forEach((p, i) => {
        const { objectType, relation, withoutConditions } = p.read;
        const strict = !withoutConditions && this.model.requiresCondition(objectType, relation);
        p.read.objectIds.forEach((id, j) => {
          const users = !withoutConditions
            ? answer.then((a) => this.admit(objectType, id, relation, a[i].get(id) ?? [], strict))
            : answer.then((a) => a[i].get(id) ?? []);
          // A failed read rejects for whoever awaits it; the copies nobody awaits must not count as unhandled.
          users.catch(() => undefined);
          this.reads.set(p.keys[j], users);
        });
      });
    }
    return Promise.all(
      keyed.map(async (objects) => {
        const users = await Promise.all(objects.map(({ key }) => this.reads.get(key) ?? NONE));
        return new Map(objects.map(({ id }, i) => [id, users[i]]));
      }),
    );
  }
  /**
   * The users whose tuple counts for this request: an unconditioned one always, a conditioned one when its
   * condition holds for the request's context. A condition that cannot be evaluated (a missing parameter) leaves
   * its tuple out and is kept as the list's error, for the caller to raise when nothing else grants.
   * A tuple the model's restrictions do not admit with its condition (or without one), left from an older model,
   * does not count and is not evaluated, as OpenFGA does not read it.
   */
  private admit(type: string, id: string, relation: string, users: UserRef[], strict: boolean): ReadUsers {
    // `strict`: some kind of user counts here only with a condition, so an unconditioned tuple is looked at too.
    if (!strict && !users.some((u) => u.condition)) return users;
    const admitted: ReadUsers = [];
    for (const u of users) {
      if (!this.model.accepts(type, relation, u, u.condition?.name)) continue;
      if (!u.condition) {
        admitted.push(u);
        continue;
      }
      try {
        const tuple = `${type}:${id}#${relation}@${formatUser(u)}`;
        if (this.model.conditions.evaluate(tuple, u.condition, this.options.context)) admitted.push(u);
      } catch (err) {
        admitted.error ??= err;
      }
    }
    return admitted;
  }
}

const NONE: Promise<ReadUsers> = Promise.resolve([]);

const resultKey = (type: string, id: string, relation: string, user: UserRef) => `${type}:${id}#${relation}@${formatUser(user)}`;

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
