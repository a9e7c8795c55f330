import { quote } from '@platform/errors';
import { InvalidTupleError } from './errors';
import type { TupleCondition } from './conditions';
import type { Tuple } from './types';

/** An object `type:id`. */
export interface ObjectRef {
  type: string;
  id: string;
}

/** A user `type:id`, userset `type:id#relation` or wildcard `type:*`; `relation` is '' when there is none. */
export interface UserRef {
  type: string;
  id: string;
  relation: string;
  /** The condition the tuple that named this user was written with (only on users read from conditioned tuples). */
  condition?: TupleCondition;
}

// OpenFGA's own limits on names: no separators or whitespace in a type or relation, none in an id either
// (ids may hold other punctuation, such as UUIDs or `a|b`).
const NAME = /^[^\s:#@*]{1,254}$/;
const ID = /^[^\s#]{1,256}$/;

/** Parses `type:id`; rejects wildcards, which only a user may be. */
export function parseObject(value: string): ObjectRef {
  const i = value.indexOf(':');
  const type = value.slice(0, i);
  const id = value.slice(i + 1);
  if (i < 0 || !NAME.test(type) || !ID.test(id) || id === '*') {
    throw new InvalidTupleError(`invalid object ${quote(value)}: expected type:id`);
  }
  return { type, id };
}

/** Parses a user `type:id`, userset `type:id#relation` or wildcard `type:*`. */
export function parseUser(value: string): UserRef {
  const hash = value.indexOf('#');
  const relation = hash < 0 ? '' : value.slice(hash + 1);
  const i = value.indexOf(':');
  const type = value.slice(0, i);
  const id = value.slice(i + 1, hash < 0 ? undefined : hash);
  const ok = i > 0 && i < (hash < 0 ? value.length : hash) && NAME.test(type) && ID.test(id);
  if (!ok || (hash >= 0 && !NAME.test(relation)) || (id === '*' && relation !== '')) {
    throw new InvalidTupleError(`invalid user ${quote(value)}: expected type:id, type:id#relation or type:*`);
  }
  return { type, id, relation };
}

/** Checks a relation name's shape. */
export function assertRelationName(relation: string): void {
  if (!NAME.test(relation)) throw new InvalidTupleError(`invalid relation ${quote(relation)}`);
}

/** `type:id`. */
export function formatObject(o: ObjectRef): string {
  return `${o.type}:${o.id}`;
}

/** `type:id` or `type:id#relation`. */
export function formatUser(u: UserRef): string {
  return u.relation ? `${u.type}:${u.id}#${u.relation}` : `${u.type}:${u.id}`;
}

/** The tuple as one string, `object#relation@user`, as OpenFGA prints it; used as a map key. */
export function tupleKey(t: Tuple): string {
  return `${t.object}#${t.relation}@${t.user}`;
}
