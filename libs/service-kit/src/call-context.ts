import { randomUUID } from 'node:crypto';
import { DeadlineError, UnavailableError } from '@platform/errors';
import type { CallingAccount } from '@platform/proto';
import type { Logger } from './logger';

/** Who is calling a gRPC method: one of the platform's apps, or a service account of another team. */
export type Caller = { kind: 'app'; app: string } | { kind: 'account'; account: CallingAccount & { login: string } };

/**
 * What one call is served with: the request id that travels from the gateway through every hop, a logger
 * that names it, and when the caller stops waiting. Features take it in place of loose `(requestId, log)`
 * arguments and hand it to the clients they call (`client.method(req, ctx)`), so an outgoing call carries the
 * request id, never outlives the incoming deadline, and is cancelled with the incoming call.
 */
export interface CallContext {
  /** The incoming `x-request-id`, or a new id when the caller sent none. */
  readonly requestId: string;
  /** The service's logger with `requestId` (and the RPC) bound; made on first use. */
  readonly log: Logger;
  /** When the caller stops waiting; absent when it set no deadline. */
  readonly deadline?: Date;
  /** Aborts when the caller cancels the call or its deadline passes. */
  readonly signal: AbortSignal;
  /** Who called, once the server has admitted the call (a platform app or a service account); absent for work no call asked for. */
  readonly caller?: Caller;
  /**
   * When the call arrived (`performance.now()` in this process); absent for work no call asked for. Kept answers the
   * call reads fence once, for all of them (Bus.caughtUp).
   */
  readonly arrivedAt?: number;
}

/** What a cancelled call or a passed deadline reads as where its signal is the cause. */
const cancelled = () => new UnavailableError('the call was cancelled by its caller');
const deadlinePassed = () => new DeadlineError("the caller's deadline passed");

/**
 * A cancellation this close to the deadline is the deadline passing on the caller's side: at least 100 ms, and a
 * quarter of the time the call was given. Our deadline is counted from when this process read the call, so on a
 * loaded machine it runs later than the caller's by however long the call waited to be read; the caller's cancel at
 * its own deadline then arrives that much before ours.
 */
const CLOCK_SLACK_MS = 100;
const SLACK_SHARE = 0.25;

/**
 * Runs `fire` once the wall clock reaches `deadline`, never before; answers what cancels it. Node counts a timer in
 * whole milliseconds of its own monotonic clock, whose millisecond does not begin with the wall clock's, so a timer
 * can fire a millisecond before `Date.now()` reaches its deadline (11 of 1,500 did on a busy machine): a handler told
 * its deadline passed could then answer while its caller, reading the wall clock, still waits and takes the answer.
 * A timer that fires early waits again for what is left. `unref`: the wait keeps no process alive.
 */
export function atDeadline(deadline: Date, fire: () => void, opts: { unref?: boolean } = {}): () => void {
  let timer: NodeJS.Timeout | undefined;
  const wait = (ms: number) => {
    timer = setTimeout(() => {
      const left = deadline.getTime() - Date.now();
      if (left > 0) wait(left);
      else fire();
    }, ms);
    if (opts.unref) timer.unref();
  };
  wait(Math.max(0, deadline.getTime() - Date.now()));
  return () => clearTimeout(timer);
}

/** The grpc-js server call as a context needs it: cancelled flag and event. */
interface CancellableCall {
  readonly cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
}

/**
 * A CallContext whose child logger and abort signal are made only when a handler uses them: most calls need
 * neither, and a child logger per call was measurable.
 */
export class LazyCallContext implements CallContext {
  private childLog?: Logger;
  private controller?: AbortController;
  caller?: Caller;
  readonly arrivedAt = performance.now();
  private stopTimer?: () => void;
  /** Set once the call is answered (`end`). */
  private ended = false;
  /** How close to the deadline a caller's cancel counts as the deadline (CLOCK_SLACK_MS). */
  private readonly slackMs: number;

  constructor(
    readonly requestId: string,
    private readonly parentLog: Logger,
    private readonly bindings: Record<string, unknown>,
    readonly deadline?: Date,
    private readonly call?: CancellableCall,
    private readonly parentSignal?: AbortSignal,
  ) {
    this.slackMs = Math.max(CLOCK_SLACK_MS, deadline ? (deadline.getTime() - Date.now()) * SLACK_SHARE : 0);
  }

  get log(): Logger {
    return (this.childLog ??= this.parentLog.child({ requestId: this.requestId, ...this.bindings }));
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = (this.controller = new AbortController());
    const abort = (reason: () => Error) => {
      if (controller.signal.aborted) return;
      this.stopTimer?.();
      controller.abort(reason());
    };
    // The caller's own deadline timer cancels the call a hair before ours fires (its clock started first).
    const whyCancelled = () => (this.deadline && this.deadline.getTime() - Date.now() <= this.slackMs ? deadlinePassed() : cancelled());
    // grpc-js tells a server call "cancelled" whenever its stream closes, an answered call's too: only a call still
    // unanswered was cancelled (and an error made for every answered call was measurable).
    const onCancelled = () => {
      if (!this.ended) abort(whyCancelled);
    };
    if (this.call?.cancelled) onCancelled();
    else this.call?.once('cancelled', onCancelled);
    if (this.parentSignal?.aborted) abort(() => this.parentSignal!.reason);
    else this.parentSignal?.addEventListener('abort', () => abort(() => this.parentSignal!.reason), { once: true });
    if (this.deadline && !controller.signal.aborted) {
      if (this.deadline.getTime() <= Date.now()) abort(deadlinePassed);
      else this.stopTimer = atDeadline(this.deadline, () => abort(deadlinePassed), { unref: true });
    }
    return controller.signal;
  }

  /** Releases the deadline timer once the call is answered; its stream closing afterwards is no cancellation. */
  end(): void {
    this.ended = true;
    this.stopTimer?.();
  }
}

/**
 * A context for work that no incoming call asked for (start-up bootstrap, scripts, tests): a new request id
 * unless one is given, the given logger, and a deadline or signal only when given.
 */
export function createCallContext(log: Logger, opts: { requestId?: string; deadline?: Date; signal?: AbortSignal } = {}): CallContext {
  return new LazyCallContext(opts.requestId ?? randomUUID(), log, {}, opts.deadline, undefined, opts.signal);
}
