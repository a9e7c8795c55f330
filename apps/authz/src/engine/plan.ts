import type { TypeSystem, Userset } from './model';

// Per model, `type#relation` -> its batch height, or undefined when the relation cannot be batched.
const heights = new WeakMap<TypeSystem, Map<string, number | undefined>>();

/**
 * Whether `type#relation` may be resolved set-at-a-time (level by level, one round trip per level for any
 * number of objects), and if so how deep it dispatches: the longest chain of nested lookups below it.
 *
 * That holds when everything the relation can reach is a union of direct, computed and tuple-to-userset
 * rewrites (no intersection or exclusion, where one object's answer is not an "any of") and the reachable
 * type#relation graph has no cycle (so no path can meet a cycle, and with the height below the depth limit,
 * no lookup can fail): then "does the user hold it on any of these objects" is a plain reachability question,
 * whose answer does not depend on the order the paths are walked in. Everything else keeps the one-object,
 * depth-first walk.
 */
export function batchHeight(model: TypeSystem, type: string, relation: string): number | undefined {
  let memo = heights.get(model);
  if (!memo) heights.set(model, (memo = new Map()));
  return analyse(model, memo, new Set(), type, relation);
}

function analyse(
  model: TypeSystem,
  memo: Map<string, number | undefined>,
  active: Set<string>,
  type: string,
  relation: string,
): number | undefined {
  const key = `${type}#${relation}`;
  if (memo.has(key)) return memo.get(key);
  // A relation reached again while it is being analysed is a cycle: neither it nor anything above batches.
  if (active.has(key)) return undefined;
  const rewrite = model.rewrite(type, relation);
  if (!rewrite) return undefined;
  active.add(key);
  const below = (t: string, r: string) => {
    const h = analyse(model, memo, active, t, r);
    return h === undefined ? undefined : h + 1;
  };
  const height = heightOf(model, type, relation, rewrite, below);
  active.delete(key);
  memo.set(key, height);
  return height;
}

function heightOf(
  model: TypeSystem,
  type: string,
  relation: string,
  rewrite: Userset,
  below: (type: string, relation: string) => number | undefined,
): number | undefined {
  const highest = (hs: (number | undefined)[]) => (hs.some((h) => h === undefined) ? undefined : Math.max(0, ...(hs as number[])));
  // The same dispatches CheckResolver makes: a userset restriction to its relation, a computed userset on the
  // object, a tuple-to-userset to the parents' relation (only parent types that define it).
  if (rewrite.this) {
    return highest(
      model
        .directTypes(type, relation)
        .filter((r) => r.relation)
        .map((r) => below(r.type, r.relation!)),
    );
  }
  if (rewrite.computedUserset) return below(type, rewrite.computedUserset.relation);
  if (rewrite.tupleToUserset) {
    const { tupleset, computedUserset } = rewrite.tupleToUserset;
    return highest(
      model
        .directTypes(type, tupleset.relation)
        .filter((r) => !r.relation && !r.wildcard && model.rewrite(r.type, computedUserset.relation))
        .map((r) => below(r.type, computedUserset.relation)),
    );
  }
  if (rewrite.union) return highest(rewrite.union.child.map((c) => heightOf(model, type, relation, c, below)));
  return undefined;
}
