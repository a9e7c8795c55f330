// What a gRPC service is to the service kit, below its server and its clients: a generated definition with its
// handlers (a binding), the request id's metadata key, and a service's full name. The server, the clients, the
// request limits and the announcing writes all build on it, and it on none of them.
import type { CallContext } from './call-context';

/** Metadata key carrying the request id from the gateway through every hop. */
export const REQUEST_ID_KEY = 'x-request-id';

export type UnaryMethod = {
  requestDeserialize: (b: Buffer) => unknown;
  responseSerialize: (v: never) => Buffer;
  path: string;
  responseStream?: boolean;
};
type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

/**
 * Handlers for every method of a generated service definition: a promise of the answer, or, for a method that
 * answers a stream (`returns (stream ...)`), the messages as an async iterable, sent as they come with the
 * stream's backpressure (so a handler reading a cursor holds a bounded part of the answer).
 */
export type Handlers<D> = {
  [K in keyof D]: D[K] extends { responseStream: true }
    ? (request: RequestOf<D[K]>, ctx: CallContext) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, ctx: CallContext) => Promise<ResponseOf<D[K]>>;
};

/** One gRPC service to serve: its generated definition and its handlers. */
/** Length limits of a method's request fields, by field path (limits.ts). */
export type FieldLimits = Record<string, number>;

/** One gRPC service to serve: its generated definition and its handlers. */
export interface ServiceBinding<D = Record<string, UnaryMethod>> {
  definition: D;
  handlers: Handlers<D>;
  /** Length limits of request fields per method (see withLimits); every other string field gets MAX_STRING_FIELD. */
  limits?: { [K in keyof D]?: FieldLimits };
  /**
   * Per method, the request with what it names by another name made the one its policy and handler read (an
   * organization given by name gets its id), run once the caller is known and before the policy: so a method may
   * accept either name while its policy asks about one. See withNames.
   */
  names?: { [K in keyof D]?: (request: RequestOf<D[K]>, ctx: CallContext) => Promise<RequestOf<D[K]>> };
}

/** Builds a binding with the handler types checked against the definition. */
export function bindService<D>(definition: D, handlers: Handlers<D>): ServiceBinding<D> {
  return { definition, handlers };
}

/** A binding whose methods also accept what they name by another name (ServiceBinding.names). */
export function withNames<D>(binding: ServiceBinding<D>, names: NonNullable<ServiceBinding<D>['names']>): ServiceBinding<D> {
  return { ...binding, names };
}

/** "platformadmin.orgsteams.v1.OrgsTeamsService" from a generated definition's method paths. */
export function fullServiceName(definition: unknown): string {
  const first = Object.values(definition as Record<string, UnaryMethod>)[0];
  return first.path.split('/')[1];
}
