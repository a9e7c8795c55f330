import { z } from 'zod';
import { TooManyRequestsError } from '@platform/errors';

/** LOGIN_FAILURE_WINDOW_SECONDS: how long failed sign-in attempts are counted (gateway and orgs-teams). */
export const loginFailureWindowVar = z.coerce.number().int().min(1).max(86_400).default(900);

/** A count of failures allowed per window (LOGIN_MAX_FAILURES_PER_ACCOUNT, LOGIN_MAX_FAILURES_PER_ADDRESS). */
export const maxFailuresVar = z.coerce.number().int().min(1).max(100_000);

export interface FailureLimiterOptions {
  /** Failures a key may have in one window; the next attempt is refused until the window closes. */
  max: number;
  windowMs: number;
  /** Most keys remembered; beyond it expired keys are dropped first, then the oldest. */
  maxKeys?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface Entry {
  failures: number;
  resetAt: number;
}

/**
 * Counts failures (wrong passwords) per key (an account, a client address) in memory, in a fixed window
 * that opens at the key's first failure. Once `max` failures are counted the key is refused until the
 * window closes; a success may reset the key. Memory is bounded by `maxKeys`.
 *
 * Per process: with several replicas each keeps its own counts (see docs/authentication.md).
 */
export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly opts: FailureLimiterOptions) {
    this.maxKeys = opts.maxKeys ?? 100_000;
    this.now = opts.now ?? Date.now;
  }

  /** Whole seconds until `key` may try again (at least 1), or 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const entry = this.live(key);
    if (!entry || entry.failures < this.opts.max) return 0;
    return Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000));
  }

  /** Throws a 429 with Retry-After when `key` is over its limit; does nothing otherwise. */
  assertAllowed(key: string, message: string): void {
    const wait = this.retryAfterSeconds(key);
    if (wait > 0) throw new TooManyRequestsError(`${message}; try again in ${wait} s`, wait);
  }

  /** Counts one failure of `key`. */
  fail(key: string): void {
    const entry = this.live(key);
    if (entry) {
      entry.failures += 1;
      return;
    }
    this.makeRoom();
    this.entries.set(key, { failures: 1, resetAt: this.now() + this.opts.windowMs });
  }

  /** Forgets the failures of `key` (after a success). */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Keys currently remembered (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.resetAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * Drops expired keys, then the oldest while full. Keys are inserted at their first failure and every window
   * is equally long, so the map's order is the order of expiry: expired keys are at its front.
   */
  private makeRoom(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.resetAt > now) break;
      this.entries.delete(key);
    }
    while (this.entries.size >= this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
  }
}
