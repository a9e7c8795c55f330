import { Counter } from '@platform/telemetry';
import { createLogger, type Logger } from './logger';

const unavailableCalls = new Counter(
  'grpc_client_unavailable_total',
  'Calls that found a backend unavailable (the HTTP edge answers them 503), by backend.',
  ['backend'],
);

/**
 * Whether a backend answers, as this process's clients see it. An outage is logged once when it starts and once
 * when it ends, not once per failed call (which, under load, is tens of lines a second); the failed calls are
 * counted in grpc_client_unavailable_total.
 */
class BackendState {
  private downSince: number | undefined;
  private readonly calls;

  constructor(
    private readonly backend: string,
    private readonly log: Logger,
  ) {
    this.calls = unavailableCalls.child(backend);
  }

  /** Whether the last call found it answering (or none has failed since). */
  get available(): boolean {
    return this.downSince === undefined;
  }

  /** A call found it unavailable; `why` is gRPC's own account (no connection, a connection dropped), logged once. */
  unavailable(why: string): void {
    this.calls.inc();
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.log.warn({ backend: this.backend, why }, `${this.backend} is unavailable; calls to it fail with 503 until it answers again`);
  }

  /**
   * A call ran out of its own time without an answer; `why` is gRPC's account of where the time went (waiting for a
   * connection, or sent and not answered), logged under the call's request id since no server may have seen it.
   */
  late(call: { requestId: string; method: string }, why: string): void {
    this.log.warn({ backend: this.backend, ...call, why }, `${this.backend} did not answer in time`);
  }

  answered(): void {
    if (this.downSince === undefined) return;
    const downMs = Date.now() - this.downSince;
    this.downSince = undefined;
    this.log.info({ backend: this.backend, downMs }, `${this.backend} answers again`);
  }
}

// One state per backend name and process: several clients (services) of one backend share it.
const states = new Map<string, BackendState>();
const defaultLog = () => createLogger('grpc-client', process.env.LOG_LEVEL || 'info');

/** The state of the backend called `name` in this process. */
export function backendState(name: string, log?: Logger): BackendState {
  let state = states.get(name);
  if (!state) states.set(name, (state = new BackendState(name, log ?? defaultLog())));
  return state;
}
