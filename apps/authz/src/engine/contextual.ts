import { fitsShape, type TupleSource, type UserShape } from './source';
import type { ObjectRef, UserRef } from './tuple';

/** A parsed tuple. */
export interface ParsedTuple {
  object: ObjectRef;
  relation: string;
  user: UserRef;
}

/** The stored tuples plus a check's contextual tuples, which count as if written but are never stored. */
export function withContextualTuples(source: TupleSource, tuples: ParsedTuple[]): TupleSource {
  if (tuples.length === 0) return source;
  const sameUser = (a: UserRef, b: UserRef) => a.type === b.type && a.id === b.id && a.relation === b.relation;
  return {
    async readUsers(objectType, objectId, relation, shapes: UserShape[]) {
      const stored = await source.readUsers(objectType, objectId, relation, shapes);
      const extra = tuples
        .filter((t) => t.object.type === objectType && t.object.id === objectId && t.relation === relation)
        .map((t) => t.user)
        .filter((u) => shapes.some((s) => fitsShape(u, s)) && !stored.some((s) => sameUser(s, u)));
      return [...stored, ...extra];
    },
    async readObjectIds(objectType, relation, users) {
      const ids = new Set(await source.readObjectIds(objectType, relation, users));
      for (const t of tuples) {
        if (t.object.type === objectType && t.relation === relation && users.some((u) => sameUser(u, t.user))) ids.add(t.object.id);
      }
      return [...ids];
    },
  };
}
