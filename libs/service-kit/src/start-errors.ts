import { setLogger } from '@grpc/grpc-js';
import { ConfigError } from './config';
import { DependencyError, EXIT_DEPENDENCY_UNAVAILABLE } from './dependency-error';

/**
 * What stops a start, as one line an operator can act on and the documented exit code:
 *
 * | exit | cause |
 * |---|---|
 * | 78 (EX_CONFIG) | a bad or incomplete setting, a port already in use, DATA_DIR held by another process |
 * | 69 (EX_UNAVAILABLE) | a dependency that cannot be used: NATS, the database |
 * | 1 | anything else (a fault of ours): logged with its stack |
 */

/** Exit code of a start stopped by its configuration (sysexits EX_CONFIG). */
export const EXIT_CONFIG = 78;

/** A port setting whose port cannot be had: in use by another process, or not permitted. */
export class PortInUseError extends ConfigError {
  constructor(
    readonly setting: string,
    readonly port: number,
    reason: 'in-use' | 'not-permitted' = 'in-use',
  ) {
    const message =
      reason === 'in-use'
        ? `${setting}: port ${port} is already in use; stop the process listening there or set ${setting} to a free port`
        : `${setting}: port ${port} may not be opened by this user; set ${setting} to a port above 1023`;
    super([message]);
    this.name = 'PortInUseError';
    this.message = message;
  }
}

/**
 * A listen error as a PortInUseError naming `setting`, or the error itself when it is something else.
 * Understands Node's `EADDRINUSE`/`EACCES` and grpc-js's bind message, which carries the same code in text.
 */
export function portError(err: unknown, setting: string, port: number): unknown {
  const code = (err as { code?: unknown }).code;
  const text = String((err as Error)?.message ?? '');
  if (code === 'EADDRINUSE' || /EADDRINUSE/.test(text)) return new PortInUseError(setting, port);
  if (code === 'EACCES' || /EACCES/.test(text)) return new PortInUseError(setting, port, 'not-permitted');
  return err;
}

let grpcLogFiltered = false;

/**
 * grpc-js writes a failed bind to stderr itself ("No address added out of total 1 resolved ...") before the
 * start reports it as one line naming GRPC_PORT: that line is dropped, every other grpc-js log line is
 * written as before. Once per process.
 */
export function quietGrpcBindErrors(): void {
  if (grpcLogFiltered) return;
  grpcLogFiltered = true;
  setLogger({
    error: (...args: unknown[]) => {
      if (args.some((a) => typeof a === 'string' && a.includes('No address added out of total'))) return;
      console.error(...args);
    },
  });
}

/** host:port/database of a postgres URL, never the user or password. */
export function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'the configured server';
  }
}

/** Connection-level failures of the pg driver and knex, by what the operator should do. */
function databaseProblem(err: unknown): { reason: string; hint: string } | undefined {
  const e = err as { code?: string; name?: string; message?: string };
  const code = e?.code ?? '';
  const start = 'start Postgres there or point DATABASE_URL at a running server';
  switch (code) {
    case 'ECONNREFUSED':
      return { reason: 'connection refused', hint: start };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { reason: 'host not found', hint: 'check the host name in DATABASE_URL' };
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { reason: 'not reachable (timed out)', hint: 'check the host, the port and the network path to it' };
    case 'ECONNRESET':
      return { reason: 'the connection was reset', hint: 'check that the port is a Postgres server (and its TLS settings)' };
    case '28P01':
    case '28000':
      return { reason: 'the server refused the credentials', hint: 'check the user and password in DATABASE_URL' };
    case '3D000':
      return { reason: 'the database does not exist', hint: 'create it (createdb) or name an existing one in DATABASE_URL' };
    case '57P03':
      return { reason: 'the server is starting up or shutting down', hint: 'retry when it is up' };
  }
  if (e?.name === 'KnexTimeoutError') return { reason: 'no connection within 10 s', hint: start };
  if (/Connection terminated unexpectedly/.test(e?.message ?? ''))
    return { reason: 'the server closed the connection', hint: 'check that the port is a Postgres server' };
  return undefined;
}

/**
 * A failure to open the database at start as a one-line DependencyError (exit 69) naming DATABASE_URL with
 * host:port/database only, or the error itself when it is not about reaching the server.
 */
export function databaseStartError(err: unknown, url: string | undefined): unknown {
  if (!url) return err;
  const problem = databaseProblem(err);
  if (!problem) return err;
  return new DependencyError(`cannot use the database at ${databaseAddress(url)} (DATABASE_URL): ${problem.reason}; ${problem.hint}`);
}

/** The one line and exit code a failed start is reported with, or undefined for a fault of ours (log it with its stack, exit 1). */
export function describeStartError(err: unknown): { line: string; exitCode: number } | undefined {
  if (err instanceof ConfigError) return { line: err.message, exitCode: EXIT_CONFIG };
  if (err instanceof DependencyError) return { line: err.message, exitCode: EXIT_DEPENDENCY_UNAVAILABLE };
  return undefined;
}
