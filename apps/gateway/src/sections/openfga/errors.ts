import { DomainError, toHttpError } from '@platform/errors';

/**
 * An error as OpenFGA's HTTP API answers it: a status and `{code, message}`, `code` one of OpenFGA's error codes
 * (openfga/api `errors_ignore.proto`), so its SDKs read it as they read OpenFGA's own (400 and 422 a validation error,
 * 401 and 403 an authentication error, 404 not found, 429 and 5xx retried).
 */
export class OpenFgaError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A request OpenFGA would refuse as invalid (400 `validation_error`, or the more precise code given). */
export const invalid = (message: string, code = 'validation_error') => new OpenFgaError(400, code, message);

export const storeNotFound = () => new OpenFgaError(404, 'store_id_not_found', 'Store ID not found');

export const modelNotFound = (id: string) =>
  new OpenFgaError(400, 'authorization_model_not_found', `Authorization Model '${id}' not found`);

export const undefinedEndpoint = (method: string, path: string) =>
  new OpenFgaError(404, 'undefined_endpoint', `no OpenFGA endpoint ${method} ${path.slice(0, 128)}`);

/** OpenFGA's code for each status the platform's errors map to, as OpenFGA names the gRPC status behind it. */
const CODES: Record<number, string> = {
  400: 'validation_error',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'undefined_endpoint',
  409: 'already_exists',
  413: 'validation_error',
  415: 'validation_error',
  422: 'validation_error',
  429: 'resource_exhausted',
  500: 'internal_error',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

/** What a failed request is answered: its status, OpenFGA's body, extra headers, and whether it is our fault (logged). */
export interface OpenFgaAnswer {
  status: number;
  body: { code: string; message: string };
  headers: Record<string, string>;
  log: boolean;
}

/**
 * Any failure as OpenFGA's answer. The platform's errors (those authz answered, mapped once by @platform/errors) keep
 * their status, except 422, which OpenFGA answers as 400; a message of a fault never leaves (`internal server error`).
 */
export function openFgaAnswer(err: unknown): OpenFgaAnswer {
  if (err instanceof OpenFgaError) return { status: err.status, body: { code: err.code, message: err.message }, headers: {}, log: false };
  const mapped = toHttpError(bodyParserError(err));
  const status = mapped.status === 422 ? 400 : mapped.status;
  const code = CODES[status] ?? (status >= 500 ? 'internal_error' : 'validation_error');
  return { status, body: { code, message: mapped.body.message }, headers: mapped.headers ?? {}, log: mapped.log };
}

/** What body-parser throws for a body it cannot read, as the platform's errors (OpenFGA answers 400 for malformed JSON). */
function bodyParserError(err: unknown): unknown {
  if (err instanceof URIError) return new DomainError('input', 'the path is not validly percent-encoded');
  const { type, status } = (err ?? {}) as { type?: string; status?: number };
  if (type === 'entity.parse.failed') return new DomainError('input', 'malformed JSON');
  if (type === 'entity.too.large') return new DomainError('validation', 'request body too large', { httpStatus: 413 });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new DomainError('validation', 'unsupported body encoding', { httpStatus: 415 });
  if (typeof status === 'number' && status >= 400 && status < 500 && !(err instanceof DomainError))
    return new DomainError('input', 'the request body could not be read');
  return err;
}
