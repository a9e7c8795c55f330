import { DomainError } from './domain-error';
import { boundViolations, truncate } from './bounded';

/** What the HTTP edge sends for a failure. */
export interface HttpError {
  status: number;
  body: { message: string; url?: string; errors?: { field: string; description: string }[] };
  headers: Record<string, string>;
  /** True when the failure is ours (5xx) and its cause belongs in the log. */
  log: boolean;
}

/** Maps any thrown value to the HTTP answer; unknown errors become a generic 500. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof DomainError) {
    const status = err.httpStatus;
    const body: HttpError['body'] = { message: status === 500 ? 'internal server error' : truncate(err.message) };
    if (err.fieldViolations.length > 0) body.errors = boundViolations(err.fieldViolations);
    return { status, body, headers: err.headers, log: status >= 500 };
  }
  return { status: 500, body: { message: 'internal server error' }, headers: {}, log: true };
}
