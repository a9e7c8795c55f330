import { EventEmitter } from 'node:events';
import { DeadlineError, UnavailableError } from '@platform/errors';
import { createLogger } from './logger';
import { atDeadline, LazyCallContext } from './call-context';

// Why a handler's signal aborted when its caller cancelled: the caller's deadline passing (a cancel close to ours,
// which is counted from when this process read the call) or a cancellation. Clocks are jest's, never the machine's.

/** A grpc-js server call as the context sees it: cancelled once `cancel` is called. */
class FakeCall extends EventEmitter {
  cancelled = false;
  cancel(): void {
    this.cancelled = true;
    this.emit('cancelled');
  }
}

describe('a call cancelled by its caller', () => {
  const log = createLogger('call-context-test', 'silent');
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-30T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  /** The reason the handler's signal gives when the caller cancels `afterMs` into a call given `givenMs`. */
  const reasonOf = (givenMs: number, afterMs: number) => {
    const call = new FakeCall();
    const ctx = new LazyCallContext('r-1', log, {}, new Date(Date.now() + givenMs), call);
    const { signal } = ctx;
    jest.advanceTimersByTime(afterMs);
    call.cancel();
    ctx.end();
    return signal.reason;
  };

  it('reads as the deadline within a quarter of the time the call was given, and at least 100 ms', () => {
    expect(reasonOf(2_000, 1_600)).toBeInstanceOf(DeadlineError);
    expect(reasonOf(200, 120)).toBeInstanceOf(DeadlineError);
  });

  it('reads as a cancellation earlier than that', () => {
    expect(reasonOf(2_000, 1_400)).toBeInstanceOf(UnavailableError);
    expect(reasonOf(200, 50)).toBeInstanceOf(UnavailableError);
  });

  it('is no cancellation once the call is answered: grpc-js says "cancelled" when any stream closes', () => {
    const call = new FakeCall();
    const ctx = new LazyCallContext('r-3', log, {}, new Date(Date.now() + 2_000), call);
    const { signal } = ctx;
    ctx.end();
    call.cancel();
    expect(signal.aborted).toBe(false);
    // Nor for a signal first asked for after the answer (work the handler left running).
    const later = new LazyCallContext('r-4', log, {}, new Date(Date.now() + 2_000), call);
    later.end();
    expect(later.signal.aborted).toBe(false);
  });

  it('reads as the deadline when ours passes first', () => {
    const ctx = new LazyCallContext('r-2', log, {}, new Date(Date.now() + 300), new FakeCall());
    const { signal } = ctx;
    jest.advanceTimersByTime(300);
    expect(signal.reason).toBeInstanceOf(DeadlineError);
  });
});

describe("a call's deadline timer", () => {
  const log = createLogger('call-context-test', 'silent');
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-30T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  // Node counts a timer in milliseconds of its own monotonic clock, which can end a millisecond before the wall
  // clock's: the wall clock is set back by that millisecond here.
  it('aborts the handler only once the wall clock reaches the deadline, however early its timer fires', () => {
    const deadline = new Date(Date.now() + 300);
    const ctx = new LazyCallContext('r-3', log, {}, deadline, new FakeCall());
    const { signal } = ctx;
    jest.setSystemTime(Date.now() - 1);
    jest.advanceTimersByTime(300);
    expect(Date.now()).toBeLessThan(deadline.getTime());
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.reason).toBeInstanceOf(DeadlineError);
  });

  it('fires once, on time, when the clocks agree, and never once cancelled', () => {
    const fired: number[] = [];
    atDeadline(new Date(Date.now() + 100), () => fired.push(Date.now()));
    const cancel = atDeadline(new Date(Date.now() + 100), () => fired.push(-1));
    cancel();
    jest.advanceTimersByTime(1_000);
    expect(fired).toEqual([new Date('2026-11-30T00:00:00.100Z').getTime()]);
  });
});
