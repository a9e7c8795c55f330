import { backOff } from 'exponential-backoff';

/** How a provider call is retried: attempts in all, and the first delay (doubled each time, with full jitter). */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
}

/**
 * Runs `fn` until it succeeds, `retryable` says its failure is final, or the attempts are spent; the last
 * failure is thrown. Delays grow exponentially with full jitter (a random wait up to base·2^n), so replicas
 * retrying one provider outage do not hammer it in step.
 */
export function withRetries<T>(policy: RetryPolicy, retryable: (err: unknown) => boolean, fn: (attempt: number) => Promise<T>): Promise<T> {
  let attempt = 0;
  return backOff(() => fn(++attempt), {
    numOfAttempts: Math.max(1, policy.attempts),
    startingDelay: policy.baseDelayMs,
    timeMultiple: 2,
    jitter: 'full',
    retry: (err) => retryable(err),
  });
}

/** Splits `items` into consecutive batches of at most `size`. */
export function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
