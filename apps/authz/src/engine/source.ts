import type { UserRef } from './tuple';

/** A family of users on one object#relation: all users of `type` (with `relation`, '' for plain users), or only `ids`. */
export interface UserShape {
  type: string;
  relation: string;
  ids?: string[];
}

/** Where evaluation reads tuples from: the stored ones, possibly overlaid with a check's contextual tuples. */
export interface TupleSource {
  /** Users of the tuples on `objectType:objectId#relation` that fit any of the shapes. */
  readUsers(objectType: string, objectId: string, relation: string, shapes: UserShape[]): Promise<UserRef[]>;
  /** Ids of the objects of `objectType` holding `relation` directly for any of the given users (a reverse lookup). */
  readObjectIds(objectType: string, relation: string, users: UserRef[]): Promise<string[]>;
}

/** Whether a user fits a shape. */
export function fitsShape(user: UserRef, shape: UserShape): boolean {
  return user.type === shape.type && user.relation === shape.relation && (!shape.ids || shape.ids.includes(user.id));
}
