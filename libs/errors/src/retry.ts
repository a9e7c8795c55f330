import { backOff } from 'exponential-backoff';

/**
 * The platform's one way to try again: a policy, the wait it gives after each failure, and `withRetries` (or, where
 * nothing may run in between, `withRetriesSync`) to run a call under it. Work that waits in a table between attempts
 * (the outbox, webhook deliveries) takes its wait from `retryDelayMs` too.
 */

/**
 * How a call is retried: attempts in all (the first included), the wait before the first retry, what each next wait
 * is multiplied by (2 unless said), the longest wait (none unless said) and whether waits are drawn at random below
 * that (full jitter, the default).
 */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  factor?: number;
  maxDelayMs?: number;
  jitter?: 'full' | 'none';
}

/**
 * The wait after `failed` failures in a row: base·factor^(failed−1), at most `maxDelayMs`, drawn at random below that
 * with full jitter, so replicas retrying one outage do not hammer it in step.
 */
export function retryDelayMs(policy: Omit<RetryPolicy, 'attempts'>, failed: number): number {
  const delay = Math.min(policy.maxDelayMs ?? Infinity, policy.baseDelayMs * (policy.factor ?? 2) ** Math.max(0, failed - 1));
  return (policy.jitter ?? 'full') === 'full' ? Math.round(Math.random() * delay) : delay;
}

/**
 * Runs `fn` until it succeeds, `retryable` says its failure is final, or the attempts are spent; the last failure is
 * thrown. `retryable` is told how many attempts have failed so far.
 */
export function withRetries<T>(
  policy: RetryPolicy,
  retryable: (err: unknown, failed: number) => boolean,
  fn: (attempt: number) => Promise<T>,
): Promise<T> {
  let attempt = 0;
  return backOff(() => fn(++attempt), {
    numOfAttempts: Math.max(1, policy.attempts),
    startingDelay: policy.baseDelayMs,
    timeMultiple: policy.factor ?? 2,
    maxDelay: policy.maxDelayMs ?? Infinity,
    jitter: policy.jitter ?? 'full',
    retry: (err, failed) => retryable(err, failed),
  });
}

/**
 * `withRetries` for a step that must not yield to other work between its attempts (taking a lock on a directory at
 * start-up): the thread sleeps through the waits, so keep them to milliseconds.
 */
export function withRetriesSync<T>(
  policy: RetryPolicy,
  retryable: (err: unknown, failed: number) => boolean,
  fn: (attempt: number) => T,
): T {
  const attempts = Math.max(1, policy.attempts);
  for (let attempt = 1; ; attempt++) {
    try {
      return fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !retryable(err, attempt)) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, retryDelayMs(policy, attempt));
    }
  }
}

/**
 * `promise`, or a rejection with `message` (or what `message()` says then) once `ms` have passed; the promise itself goes
 * on. `unref`: the timer does not keep the process alive by itself.
 */
export function within<T>(promise: Promise<T>, ms: number, message: string | (() => string), opts: { unref?: boolean } = {}): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(typeof message === 'function' ? message() : message)), ms);
    if (opts.unref) timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
