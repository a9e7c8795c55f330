import type { UserRef } from './tuple';

/** A family of users on one object#relation: all users of `type` (with `relation`, '' for plain users), or only `ids`. */
export interface UserShape {
  type: string;
  relation: string;
  ids?: string[];
}

/** One read of a check: for each of `objectIds`, the users of the tuples on `objectType:id#relation` that fit any shape. */
export interface UsersRead {
  objectType: string;
  objectIds: string[];
  relation: string;
  shapes: UserShape[];
  /**
   * Only tuples written without a condition count (the relation admits none): a conditioned tuple left from an
   * older model is not answered, as OpenFGA does not read it.
   */
  withoutConditions?: boolean;
}

/** Where evaluation reads tuples from: the stored ones, possibly overlaid with a check's contextual tuples. */
export interface TupleSource {
  /**
   * Answers several reads at once (one round trip to the store): for each read, in order, the users found per
   * object id (an object with none may be missing from the map).
   */
  readUsers(reads: UsersRead[]): Promise<Map<string, UserRef[]>[]>;
  /** Ids of the objects of `objectType` holding `relation` directly for any of the given users (a reverse lookup). */
  readObjectIds(objectType: string, relation: string, users: UserRef[]): Promise<string[]>;
}

/** Whether a user fits a shape. */
export function fitsShape(user: UserRef, shape: UserShape): boolean {
  return user.type === shape.type && user.relation === shape.relation && (!shape.ids || shape.ids.includes(user.id));
}
