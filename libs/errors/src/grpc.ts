import { Metadata, status as Status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { errorDetail } from '@platform/proto';
import {
  ConflictError,
  DeadlineError,
  DomainError,
  type ErrorKind,
  HTTP_STATUS_OF,
  InputError,
  InternalError,
  MethodNotAllowedError,
  NotAllowedError,
  NotAuthenticatedError,
  NotFoundError,
  TooManyRequestsError,
  UnavailableError,
  ValidationError,
} from './domain-error';
import { boundViolations, PayloadTooLargeError, truncate } from './bounded';
import { unavailableDependency } from './unavailable';

/** Trailer carrying platformadmin.common.v1.ErrorDetail; the -bin suffix makes gRPC send it as binary. */
export const ERROR_DETAIL_KEY = 'platform-error-bin';

const GRPC_CODE_OF: Record<ErrorKind, Status> = {
  input: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  'not-allowed': Status.PERMISSION_DENIED,
  'not-found': Status.NOT_FOUND,
  'method-not-allowed': Status.FAILED_PRECONDITION,
  conflict: Status.ALREADY_EXISTS,
  validation: Status.INVALID_ARGUMENT,
  'too-many-requests': Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  deadline: Status.DEADLINE_EXCEEDED,
  internal: Status.INTERNAL,
};

/** The standard gRPC-to-HTTP table (grpc-gateway runtime/errors.go), used when no detail says otherwise. */
const KIND_OF_GRPC_CODE: Partial<Record<Status, ErrorKind>> = {
  [Status.INVALID_ARGUMENT]: 'input',
  [Status.FAILED_PRECONDITION]: 'input',
  [Status.OUT_OF_RANGE]: 'input',
  [Status.UNAUTHENTICATED]: 'unauthenticated',
  [Status.PERMISSION_DENIED]: 'not-allowed',
  [Status.NOT_FOUND]: 'not-found',
  [Status.ALREADY_EXISTS]: 'conflict',
  [Status.ABORTED]: 'conflict',
  [Status.RESOURCE_EXHAUSTED]: 'too-many-requests',
  [Status.UNAVAILABLE]: 'unavailable',
  [Status.DEADLINE_EXCEEDED]: 'deadline',
};

const KIND_OF_HTTP: Map<number, ErrorKind> = new Map((Object.entries(HTTP_STATUS_OF) as [ErrorKind, number][]).map(([k, s]) => [s, k]));

/**
 * Turns anything a handler threw into a gRPC status. Domain errors keep their message and carry the
 * exact HTTP status in the ErrorDetail trailer; a driver's failure saying a dependency cannot take the call
 * now (the database out of connections) is UNAVAILABLE; anything else becomes INTERNAL with a generic
 * message (the caller logs the original).
 */
export function toGrpcStatus(err: unknown): Partial<StatusObject> {
  const domain = err instanceof DomainError ? err : unavailableDependency(err);
  if (!domain) {
    return { code: Status.INTERNAL, details: 'internal server error', metadata: new Metadata() };
  }
  const metadata = new Metadata();
  // Message and violations are cut to a few KiB: trailers larger than the peer's header-list limit (64 KiB)
  // stall the HTTP/2 connection, and with it every call on the channel, until their deadlines.
  const detail = errorDetail.ErrorDetail.encode({
    httpStatus: domain.httpStatus,
    fieldViolations: boundViolations(domain.fieldViolations),
    headers: domain.headers,
  }).finish();
  metadata.set(ERROR_DETAIL_KEY, Buffer.from(detail));
  return { code: GRPC_CODE_OF[domain.kind], details: truncate(domain.message), metadata };
}

/** grpc-js's own texts for a message over `grpc.max_send_message_length` / `grpc.max_receive_message_length`. */
const REQUEST_TOO_LARGE = /^Attempted to send message with a size larger than/;
const RESPONSE_TOO_LARGE = /^Sent message larger than max/;
const RECEIVED_TOO_LARGE = /^Received message (larger than max|that decompresses to a size larger than)/;

/**
 * A call that failed because a message exceeded a gRPC message-size limit, as a 413 naming the service and
 * the direction: the request (refused by this client before sending), the answer (refused by the server
 * before sending), or, when one side's limit is lower than the other's, a message one side received.
 * Undefined for every other failure, RESOURCE_EXHAUSTED from a handler (429) included.
 */
export function messageSizeError(err: ServiceError, service: string, limitBytes?: number): PayloadTooLargeError | undefined {
  if (err.code !== Status.RESOURCE_EXHAUSTED || err.metadata?.get(ERROR_DETAIL_KEY)?.length) return undefined;
  const limit = limitBytes ? ` of ${limitBytes} bytes` : '';
  if (REQUEST_TOO_LARGE.test(err.details)) {
    return new PayloadTooLargeError(`request too large: the call to ${service} exceeds the gRPC message size limit${limit}`);
  }
  if (RESPONSE_TOO_LARGE.test(err.details)) {
    return new PayloadTooLargeError(`response too large: the answer of ${service} exceeds the gRPC message size limit${limit}`);
  }
  if (RECEIVED_TOO_LARGE.test(err.details)) {
    return new PayloadTooLargeError(`message too large: a message to or from ${service} exceeds the gRPC message size limit`);
  }
  return undefined;
}

const CLASS_OF: Record<ErrorKind, new (message: string) => DomainError> = {
  input: InputError,
  unauthenticated: NotAuthenticatedError,
  'not-allowed': NotAllowedError,
  'not-found': NotFoundError,
  'method-not-allowed': MethodNotAllowedError,
  conflict: ConflictError,
  validation: ValidationError,
  'too-many-requests': TooManyRequestsError,
  unavailable: UnavailableError,
  deadline: DeadlineError,
  internal: InternalError,
};

/** The error class of a kind, so `instanceof NotFoundError` holds on the client as on the server. */
function domainError(
  kind: ErrorKind,
  message: string,
  extra: Partial<Pick<DomainError, 'fieldViolations' | 'headers' | 'httpStatusOverride'>> = {},
) {
  const err = new CLASS_OF[kind](message);
  // The fields are readonly for code that handles errors; restoring them from the wire is their construction.
  return Object.assign(err, Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined)));
}

/** Turns a failed client call back into the DomainError the server threw (or the closest kind). */
export function fromGrpcError(err: ServiceError): DomainError {
  const raw = err.metadata?.get(ERROR_DETAIL_KEY)?.[0];
  if (raw instanceof Buffer) {
    const detail = errorDetail.ErrorDetail.decode(raw);
    const kind = KIND_OF_HTTP.get(detail.httpStatus);
    return domainError(kind ?? KIND_OF_GRPC_CODE[err.code] ?? 'internal', err.details, {
      fieldViolations: detail.fieldViolations,
      headers: detail.headers,
      httpStatusOverride: kind ? undefined : detail.httpStatus || undefined,
    });
  }
  const kind = KIND_OF_GRPC_CODE[err.code] ?? 'internal';
  const message = kind === 'internal' ? 'internal server error' : err.details;
  return domainError(kind, message);
}
