import { DomainError } from './domain-error';
import { boundViolations, truncate } from './bounded';
import { RETRY_AFTER_UNAVAILABLE_SECONDS, unavailableDependency } from './unavailable';

/** What the HTTP edge sends for a failure. */
export interface HttpError {
  status: number;
  body: { message: string; url?: string; errors?: { field: string; description: string }[] };
  headers: Record<string, string>;
  /** True when the failure is ours (5xx) and its cause belongs in the log. */
  log: boolean;
}

/**
 * Maps any thrown value to the HTTP answer; a driver's failure saying a dependency cannot take the request now is a 503,
 * other unknown errors a generic 500. Every 503 says when to try again (Retry-After), its own value or the default.
 */
export function toHttpError(thrown: unknown): HttpError {
  const err = thrown instanceof DomainError ? thrown : unavailableDependency(thrown);
  if (err) {
    const status = err.httpStatus;
    const body: HttpError['body'] = { message: status === 500 ? 'internal server error' : truncate(err.message) };
    if (err.fieldViolations.length > 0) body.errors = boundViolations(err.fieldViolations);
    const headers =
      status === 503 && !Object.keys(err.headers).some((h) => h.toLowerCase() === 'retry-after')
        ? { ...err.headers, 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) }
        : err.headers;
    return { status, body, headers, log: status >= 500 };
  }
  return { status: 500, body: { message: 'internal server error' }, headers: {}, log: true };
}
