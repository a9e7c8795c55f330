import type { RequestContext, TupleCondition } from './conditions';

export type { RequestContext, TupleCondition } from './conditions';

/** A relationship tuple in OpenFGA string form: `user:1 member organization:3`, `team:5#member assignee role:2`. */
export interface Tuple {
  /** `type:id`, a userset `type:id#relation`, or a wildcard `type:*`. */
  user: string;
  relation: string;
  /** `type:id`. */
  object: string;
  /**
   * The model's condition the tuple counts under (`[user with not_after]`) and the parameter values written
   * with it; the tuple grants only while the condition holds for a request's context.
   */
  condition?: TupleCondition;
}

/** One authorization question: does `user` hold `relation` on `object`? */
export interface CheckRequest {
  user: string;
  relation: string;
  object: string;
  /** Tuples that count for this check only, as OpenFGA's contextual tuples; they are never stored. */
  contextualTuples?: Tuple[];
  /** Parameter values for the conditions the check meets; a tuple's own values win over these, as in OpenFGA. */
  context?: RequestContext;
}

/** What a list-objects or list-users request brings besides the stored tuples. */
export interface ListOptions {
  contextualTuples?: Tuple[];
  context?: RequestContext;
  /**
   * Stop once this many are found, as OpenFGA's list-objects and list-users max results do: which ones come first is
   * not specified. Unset: every one.
   */
  maxResults?: number;
}

/** Which users hold a relation on an object: OpenFGA's ListUsers. */
export interface ListUsersRequest extends ListOptions {
  object: string;
  relation: string;
  /** The kinds of user to answer with: a type (`user`), or a userset type (`team` with `member`). */
  userFilters: { type: string; relation?: string }[];
}

/** Which stored tuples to read; every field narrows. `object` may be `type:` to match a whole type. */
export interface TupleFilter {
  user?: string;
  relation?: string;
  object?: string;
}

/** The authorization engine every service talks to through the authz service: embedded, or an OpenFGA server. */
export interface AuthzEngine {
  /** Whether the user holds the relation on the object. */
  check(request: CheckRequest): Promise<boolean>;
  /** Many checks at once; answers in request order. */
  batchCheck(requests: CheckRequest[]): Promise<boolean[]>;
  /** Which of `relations` the user holds on the object, in the order given. */
  listRelations(user: string, object: string, relations: string[]): Promise<string[]>;
  /** Every object of `type` on which the user holds the relation (`type:id` strings, sorted). */
  listObjects(user: string, relation: string, type: string, options?: ListOptions): Promise<string[]>;
  /**
   * Every user of the filters' kinds holding the relation on the object, as OpenFGA's ListUsers answers:
   * `user:anne`, a wildcard `user:*` when every user of the type holds it, a userset `team:5#member` (sorted).
   * A user excluded from a wildcard grant is not listed; the wildcard still is.
   */
  listUsers(request: ListUsersRequest): Promise<string[]>;
  /**
   * Writes and deletes tuples atomically: all of them take effect, or none does. With `idempotent`,
   * writing an existing tuple and deleting a missing one are no-ops (a retried change has the effect of one).
   */
  write(writes: Tuple[], deletes: Tuple[], opts?: WriteOptions): Promise<void>;
  /** The stored tuples matching the filter. */
  readTuples(filter: TupleFilter): Promise<Tuple[]>;
}

/** How a write treats tuples that already are as asked. */
export interface WriteOptions {
  idempotent?: boolean;
}
