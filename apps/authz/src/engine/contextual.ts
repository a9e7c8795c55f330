import type { TupleCondition } from './conditions';
import { fitsShape, type TupleSource, type UsersRead } from './source';
import type { ObjectRef, UserRef } from './tuple';

/** A parsed tuple. */
export interface ParsedTuple {
  object: ObjectRef;
  relation: string;
  user: UserRef;
  condition?: TupleCondition;
}

/** The stored tuples plus a check's contextual tuples, which count as if written but are never stored. */
export function withContextualTuples(source: TupleSource, tuples: ParsedTuple[]): TupleSource {
  if (tuples.length === 0) return source;
  const sameUser = (a: UserRef, b: UserRef) => a.type === b.type && a.id === b.id && a.relation === b.relation;
  return {
    async readUsers(reads: UsersRead[]) {
      const stored = await source.readUsers(reads);
      return reads.map((read, i) => {
        const found = new Map(stored[i]);
        for (const t of tuples) {
          if (t.object.type !== read.objectType || t.relation !== read.relation || !read.objectIds.includes(t.object.id)) continue;
          if (!read.shapes.some((s) => fitsShape(t.user, s))) continue;
          const users = found.get(t.object.id) ?? [];
          const user = t.condition ? { ...t.user, condition: t.condition } : t.user;
          if (!users.some((u) => sameUser(u, t.user))) found.set(t.object.id, [...users, user]);
        }
        return found;
      });
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
