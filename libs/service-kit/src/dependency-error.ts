import { BusConnectError } from '@platform/bus';

/** Exit code of a start that failed because a dependency could not be used (sysexits EX_UNAVAILABLE). */
export const EXIT_DEPENDENCY_UNAVAILABLE = 69;

/**
 * A dependency (NATS) that cannot be used at start. Its message is one line naming the variable to check,
 * with host:port only, never credentials; runMain prints it without a stack and exits with code 69.
 */
export class DependencyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DependencyError';
  }
}

const NATS_HINTS: Record<BusConnectError['kind'], string> = {
  unreachable: 'start NATS with JetStream there (nats-server -js) or point NATS_URL at a running one',
  credentials: 'check the user and password (or token) in NATS_URL',
  'no-jetstream': 'start nats-server with JetStream enabled (-js)',
};

/** The one line an operator reads when the bus cannot be opened at start. */
export function natsDependencyError(err: BusConnectError): DependencyError {
  return new DependencyError(`cannot use NATS at ${err.server} (NATS_URL): ${err.reason}; ${NATS_HINTS[err.kind]}`);
}
