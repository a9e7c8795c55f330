/** How a provider call is retried: attempts in all, and the first delay (doubled each time, with full jitter). */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
}

/**
 * Runs `fn` until it succeeds, `retryable` says its failure is final, or the attempts are spent. Delays grow
 * exponentially with full jitter (a random wait up to base·2^n), so replicas retrying one provider outage do
 * not hammer it in step.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  retryable: (err: unknown) => boolean,
  fn: (attempt: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= policy.attempts || !retryable(err)) throw err;
      await sleep(Math.random() * policy.baseDelayMs * 2 ** (attempt - 1));
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Splits `items` into consecutive batches of at most `size`. */
export function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
