import { UnavailableError } from './domain-error';

/**
 * Seconds a client is told to wait before trying again after a 503 that says nothing else: a dependency down, busy or
 * restarting is usually back within seconds, and a client that waits this long spares it the retries that keep it busy.
 */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

/** Why the database cannot take a request now, by SQLSTATE: its resources, or its connection. */
function databaseReason(code: string): string | undefined {
  if (code === '53300') return 'it has no connection to spare (too many clients)';
  if (code === '53400') return 'it is at a configured limit';
  if (code.startsWith('53')) return `it is short of resources (SQLSTATE ${code})`;
  if (code.startsWith('08')) return 'the connection to it failed';
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'it is shutting down or starting up';
  return undefined;
}

/**
 * The 503 a driver's failure stands for, when it says a dependency cannot take the request now rather than that the
 * request or our code is wrong: Postgres out of connections (SQLSTATE 53300) or another resource (class 53), a lost
 * or refused connection (class 08, 57P01-03, pg's "Connection terminated"), knex finding no connection free in its pool
 * in time (KnexTimeoutError), a connection refused or reset. Undefined for anything else, which stays a 500.
 * Recognised by shape, so no driver is needed here; its message names no address or credential.
 */
export function unavailableDependency(err: unknown): UnavailableError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, name, message, syscall } = err as { code?: unknown; name?: unknown; message?: unknown; syscall?: unknown };
  const reason =
    (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && databaseReason(code)) ||
    (name === 'KnexTimeoutError' && 'it has no connection to spare (none free in the pool in time)') ||
    (typeof message === 'string' && /^Connection terminated\b/.test(message) && 'the connection to it was lost') ||
    undefined;
  if (reason) return new UnavailableError(`the database cannot take this request now: ${reason}; try again shortly`);
  if ((code === 'ECONNREFUSED' || code === 'ECONNRESET') && typeof syscall === 'string')
    return new UnavailableError('a service this one depends on refused or dropped the connection; try again shortly');
  return undefined;
}
