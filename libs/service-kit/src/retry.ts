import { backOff } from 'exponential-backoff';

/**
 * How a call is retried: attempts in all (the first included), the wait before the first retry, what each next wait
 * is multiplied by (2 unless said) and whether waits are drawn at random below that (full jitter, the default).
 */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  factor?: number;
  jitter?: 'full' | 'none';
}

/**
 * Runs `fn` until it succeeds, `retryable` says its failure is final, or the attempts are spent; the last failure is
 * thrown. `retryable` is told how many attempts have failed so far. With full jitter a wait is drawn at random up to
 * base·factor^n, so replicas retrying one outage do not hammer it in step; without, it is exactly that.
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
    jitter: policy.jitter ?? 'full',
    retry: (err, failed) => retryable(err, failed),
  });
}
