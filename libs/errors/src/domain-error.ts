/** A field of a request that failed validation. */
export interface FieldViolation {
  field: string;
  description: string;
}

/**
 * The one vocabulary of failures every service throws. Each kind maps once to a gRPC status
 * (grpc.ts) and once to an HTTP status (http.ts); nothing else in the code picks status codes.
 */
export type ErrorKind =
  | 'input' // 400: invalid request, parameter, type or state
  | 'unauthenticated' // 401
  | 'not-allowed' // 403
  | 'not-found' // 404
  | 'method-not-allowed' // 405: e.g. license issue on a revoked contract
  | 'conflict' // 409
  | 'validation' // 422: malformed body or schema violation
  | 'too-many-requests' // 429
  | 'unavailable' // 503: a dependency is down
  | 'deadline' // 504
  | 'internal'; // 500

/** HTTP status of each kind. */
export const HTTP_STATUS_OF: Record<ErrorKind, number> = {
  input: 400,
  unauthenticated: 401,
  'not-allowed': 403,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  validation: 422,
  'too-many-requests': 429,
  unavailable: 503,
  deadline: 504,
  internal: 500,
};

/** Base class of every expected failure. Its message is safe to show to clients. */
export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly fieldViolations: FieldViolation[];
  /** Extra response headers the HTTP edge should set (for example Location on a redirect). */
  readonly headers: Record<string, string>;
  /** An HTTP status the vocabulary does not name (302 redirect); wins over the kind's status. */
  readonly httpStatusOverride?: number;

  constructor(
    kind: ErrorKind,
    message: string,
    opts: { fieldViolations?: FieldViolation[]; headers?: Record<string, string>; httpStatus?: number } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.kind = kind;
    this.fieldViolations = opts.fieldViolations ?? [];
    this.headers = opts.headers ?? {};
    this.httpStatusOverride = opts.httpStatus;
  }

  /** The HTTP status this error answers with. */
  get httpStatus(): number {
    return this.httpStatusOverride ?? HTTP_STATUS_OF[this.kind];
  }
}

export class InputError extends DomainError {
  constructor(message: string, fieldViolations?: FieldViolation[]) {
    super('input', message, { fieldViolations });
  }
}
export class ValidationError extends DomainError {
  constructor(message: string, fieldViolations?: FieldViolation[]) {
    super('validation', message, { fieldViolations });
  }
}
export class NotAuthenticatedError extends DomainError {
  constructor(message = 'token is required') {
    super('unauthenticated', message);
  }
}
export class NotAllowedError extends DomainError {
  constructor(message = 'forbidden') {
    super('not-allowed', message);
  }
}
export class NotFoundError extends DomainError {
  constructor(message = 'not found') {
    super('not-found', message);
  }
}
export class MethodNotAllowedError extends DomainError {
  constructor(message: string) {
    super('method-not-allowed', message);
  }
}
export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}
/** 429. With `retryAfterSeconds` it carries a `Retry-After` header, which crosses gRPC hops in the ErrorDetail. */
export class TooManyRequestsError extends DomainError {
  constructor(message: string, retryAfterSeconds?: number) {
    super('too-many-requests', message, {
      headers: retryAfterSeconds === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  }

  /** Seconds the client should wait before trying again, when known. */
  get retryAfterSeconds(): number | undefined {
    const v = Number(this.headers['retry-after']);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  }
}
export class UnavailableError extends DomainError {
  constructor(message: string) {
    super('unavailable', message);
  }
}
export class DeadlineError extends DomainError {
  constructor(message: string) {
    super('deadline', message);
  }
}
/** A failure whose details must not reach the client; the message shown is generic. */
export class InternalError extends DomainError {
  constructor(message = 'internal server error') {
    super('internal', message);
  }
}
