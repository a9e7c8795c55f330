import { DomainError, type FieldViolation } from './domain-error';

/** How much of a client's value an error message may repeat (see `quote`). */
export const QUOTE_MAX = 64;
/** Longest error message that leaves a service: gRPC status details and HTTP `message`. */
export const MAX_ERROR_MESSAGE_LENGTH = 1024;
/** Longest field name or description of one field violation, and most violations one error carries. */
export const MAX_VIOLATION_TEXT = 256;
export const MAX_VIOLATIONS = 20;

/** At most `max` UTF-16 units of `s`, never ending inside a surrogate pair. */
function head(s: string, max: number): string {
  let out = s.slice(0, max);
  const last = out.charCodeAt(out.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  return out;
}

/**
 * A client-supplied value as an error message or log line may show it: JSON-quoted (so control characters
 * and newlines are escaped) and cut to `max` characters, with the full length noted when cut. Never put an
 * input into a message any other way: a message travels in gRPC trailers and HTTP bodies, and an unbounded
 * one can wedge the HTTP/2 connection every tenant's calls share.
 */
export function quote(value: unknown, max = QUOTE_MAX): string {
  const s = typeof value === 'string' ? value : String(value);
  if (s.length <= max) return JSON.stringify(s);
  return `${JSON.stringify(`${head(s, max)}…`)} (${s.length} characters)`;
}

/** `text` cut to `max` characters (with an ellipsis); for messages built elsewhere that might carry input. */
export function truncate(text: string, max = MAX_ERROR_MESSAGE_LENGTH): string {
  return text.length <= max ? text : `${head(text, max - 1)}…`;
}

/** Field violations as they may leave a service: at most MAX_VIOLATIONS, each field and description cut. */
export function boundViolations(violations: FieldViolation[]): FieldViolation[] {
  return violations.slice(0, MAX_VIOLATIONS).map((v) => ({
    field: truncate(v.field, MAX_VIOLATION_TEXT),
    description: truncate(v.description, MAX_VIOLATION_TEXT),
  }));
}

/**
 * 413: a request (or the answer it asks for) larger than a limit, e.g. a JSON body over the gateway's
 * limit or a gRPC message over GRPC_MAX_MESSAGE_BYTES. The message says which, never the content.
 */
export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super('input', message, { httpStatus: 413 });
  }
}
