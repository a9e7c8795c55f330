import type { UsersRead } from './source';
import type { TupleCondition } from './conditions';
import type { UserRef } from './tuple';
import { rowCondition, type TupleRow } from './tuple-store';

// Postgres text cannot hold NUL, so joining names with it gives one key per combination, whatever the stored
// values look like (even rows written by hand that the model would refuse).
const SEP = '\u0000';

/** `object_type relation user_type user_relation`: one kind of tuple, such as `team#member` held by plain users. */
const kindKey = (objectType: string, relation: string, userType: string, userRelation: string) =>
  objectType + SEP + relation + SEP + userType + SEP + userRelation;

/** Users of one kind of tuple on one object: one id as the string itself, several as a Set. */
type Family = string | Set<string>;

/**
 * The stored tuples in memory, indexed the way a check reads them: per kind of tuple (object type, relation, user
 * type and relation, a few dozen in a model), per object id, the user ids. A lookup is two map reads on strings
 * that already exist (no key is built per object), and the many one-tuple families (an organization's site, a
 * team's organization) keep the id itself instead of a Set.
 *
 * Answers `readUsers` exactly as the table does (TupleStore.readUsers): the same shapes, the same ids.
 */
export class TupleGraph {
  private readonly kinds = new Map<string, Map<string, Family>>();
  /**
   * The conditions of conditioned tuples, by kind, object id and user id. Kept apart so the common, unconditioned
   * tuple costs nothing more: while none is conditioned a read never looks here.
   */
  private readonly conditions = new Map<string, TupleCondition>();
  /** The number of tuples held. */
  size = 0;
  /** While loading: one string per distinct id, so ids repeated across tuples (a user in many teams) are stored once. */
  private interned?: Map<string, string>;

  /** Interns ids until `endLoading`. */
  beginLoading(): void {
    this.interned = new Map();
  }

  endLoading(): void {
    this.interned = undefined;
  }

  private intern(id: string): string {
    if (!this.interned) return id;
    const known = this.interned.get(id);
    if (known !== undefined) return known;
    this.interned.set(id, id);
    return id;
  }

  /** Adds a tuple; false when it was there already. */
  add(r: TupleRow): boolean {
    const key = kindKey(r.object_type, r.relation, r.user_type, r.user_relation);
    const condition = rowCondition(r);
    if (condition) this.conditions.set(key + SEP + r.object_id + SEP + r.user_id, condition);
    let kind = this.kinds.get(key);
    if (!kind) this.kinds.set(key, (kind = new Map()));
    const id = this.intern(r.user_id);
    const found = kind.get(r.object_id);
    if (found === undefined) {
      kind.set(this.intern(r.object_id), id);
    } else if (typeof found === 'string') {
      if (found === id) return false;
      kind.set(r.object_id, new Set([found, id]));
    } else {
      if (found.has(id)) return false;
      found.add(id);
    }
    this.size++;
    return true;
  }

  /** Removes a tuple; false when it was not there. */
  remove(r: TupleRow): boolean {
    const key = kindKey(r.object_type, r.relation, r.user_type, r.user_relation);
    if (this.conditions.size) this.conditions.delete(key + SEP + r.object_id + SEP + r.user_id);
    const kind = this.kinds.get(key);
    const found = kind?.get(r.object_id);
    if (found === undefined) return false;
    if (typeof found === 'string') {
      if (found !== r.user_id) return false;
      kind!.delete(r.object_id);
    } else {
      if (!found.delete(r.user_id)) return false;
      if (found.size === 1) kind!.set(r.object_id, found.values().next().value!);
    }
    this.size--;
    return true;
  }

  clear(): void {
    this.kinds.clear();
    this.conditions.clear();
    this.size = 0;
  }

  /** For each read, in order, the users found per object id (an object with none is missing from the map). */
  readUsers(reads: UsersRead[]): Map<string, UserRef[]>[] {
    return reads.map((read) => {
      const found = new Map<string, UserRef[]>();
      for (const shape of read.shapes) {
        const key = kindKey(read.objectType, read.relation, shape.type, shape.relation);
        const kind = this.kinds.get(key);
        if (!kind) continue;
        for (const objectId of read.objectIds) {
          const family = kind.get(objectId);
          if (family === undefined) continue;
          let users = found.get(objectId);
          if (!users) found.set(objectId, (users = []));
          if (shape.ids) {
            for (const id of shape.ids) {
              if (typeof family === 'string' ? family === id : family.has(id))
                users.push({ type: shape.type, id, relation: shape.relation });
            }
          } else if (typeof family === 'string') {
            users.push({ type: shape.type, id: family, relation: shape.relation });
          } else {
            for (const id of family) users.push({ type: shape.type, id, relation: shape.relation });
          }
        }
      }
      for (const [id, users] of found) if (users.length === 0) found.delete(id);
      if (this.conditions.size) this.attachConditions(read, found);
      return found;
    });
  }

  /**
   * Gives the users read from conditioned tuples their condition; for a read `withoutConditions`, leaves them out
   * (tuples left from an older model whose relation admits no condition now).
   */
  private attachConditions(read: UsersRead, found: Map<string, UserRef[]>): void {
    for (const [objectId, users] of found) {
      let stale = false;
      users.forEach((u, i) => {
        const condition = this.conditions.get(kindKey(read.objectType, read.relation, u.type, u.relation) + SEP + objectId + SEP + u.id);
        if (condition) users[i] = { ...u, condition };
        stale ||= !!condition && !!read.withoutConditions;
      });
      if (!stale) continue;
      const kept = users.filter((u) => !u.condition);
      if (kept.length) found.set(objectId, kept);
      else found.delete(objectId);
    }
  }

  /** Every tuple held, as rows (in no particular order). */
  *rows(): IterableIterator<TupleRow> {
    for (const [key, kind] of this.kinds) {
      const [object_type, relation, user_type, user_relation] = key.split(SEP);
      for (const [object_id, family] of kind) {
        for (const user_id of typeof family === 'string' ? [family] : family) {
          const condition = this.conditions.size ? this.conditions.get(key + SEP + object_id + SEP + user_id) : undefined;
          yield condition
            ? {
                object_type,
                object_id,
                relation,
                user_type,
                user_id,
                user_relation,
                condition_name: condition.name,
                condition_context: condition.context,
              }
            : { object_type, object_id, relation, user_type, user_id, user_relation };
        }
      }
    }
  }
}
