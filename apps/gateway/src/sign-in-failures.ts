import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Database } from '@platform/db';
import { TooManyRequestsError } from '@platform/errors';
import { FailureLimiter, type Logger } from '@platform/service-kit';

/** The gateway's table of failure counts (migrations/): one row per counted key, as rate-limiter-flexible keeps them. */
export const SIGN_IN_FAILURES_TABLE = 'sign_in_failures';
const SWEEP_INTERVAL_MS = 5 * 60_000;
/** Rows are deleted this long after their window closed: replicas' clocks may differ by seconds, never by this much. */
const SWEEP_AFTER_MS = 60 * 60_000;

/**
 * Failed Basic-auth attempts per key (a client address): a fixed window opening at the key's first failure; once
 * `max` failures are counted the key is refused until the window closes. Refused attempts are not counted.
 */
export interface SignInFailures {
  /** Throws a 429 with Retry-After when `key` is over its limit; does nothing otherwise. */
  assertAllowed(key: string, message: string): Promise<void>;
  /** Counts one failure of `key`. */
  fail(key: string): Promise<void>;
}

export interface SignInFailureLimits {
  max: number;
  windowSeconds: number;
}

/** The counts of this process alone: the embedded platform, where one process is the one gateway. */
export class LocalSignInFailures implements SignInFailures {
  private readonly limiter: FailureLimiter;

  constructor(limits: SignInFailureLimits) {
    this.limiter = new FailureLimiter({ max: limits.max, windowMs: limits.windowSeconds * 1000 });
  }

  async assertAllowed(key: string, message: string): Promise<void> {
    this.limiter.assertAllowed(key, message);
  }

  async fail(key: string): Promise<void> {
    this.limiter.fail(key);
  }
}

/**
 * The counts in the gateway's Postgres schema, so every replica adds to and reads the same count: with N replicas
 * a client still gets `max` failures per window, not N × `max`. rate-limiter-flexible does the counting: one
 * atomic upsert per failure (a row per key, its expiry the end of the window that opened at its first failure) and
 * one select per check. Rows an hour past their window are deleted every 5 minutes (here rather than by the
 * library's own timer, which nothing could stop).
 *
 * While Postgres cannot be reached the counts fall back to this process's memory (logged once per outage), so
 * sign-in keeps its limit per replica, as before, instead of failing with 500.
 */
export class SharedSignInFailures implements SignInFailures {
  private readonly store: RateLimiterPostgres;
  private readonly fallback: LocalSignInFailures;
  private storeDown = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    private readonly limits: SignInFailureLimits,
    private readonly log: Logger,
  ) {
    this.store = new RateLimiterPostgres({
      storeClient: db.knex,
      storeType: 'knex',
      schemaName: db.schema,
      tableName: SIGN_IN_FAILURES_TABLE,
      // The table is the migration's: the library must not run DDL of its own.
      tableCreated: true,
      keyPrefix: 'address',
      points: limits.max,
      duration: limits.windowSeconds,
      clearExpiredByTimeout: false,
    });
    this.fallback = new LocalSignInFailures(limits);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  async assertAllowed(key: string, message: string): Promise<void> {
    let counted;
    try {
      counted = await this.store.get(key);
      this.storeUp();
    } catch (err) {
      this.storeFailed(err);
      return this.fallback.assertAllowed(key, message);
    }
    if (!counted || counted.consumedPoints < this.limits.max) return;
    const wait = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    throw new TooManyRequestsError(`${message}; try again in ${wait} s`, wait);
  }

  async fail(key: string): Promise<void> {
    try {
      await this.store.penalty(key, 1);
      this.storeUp();
    } catch (err) {
      this.storeFailed(err);
      await this.fallback.fail(key);
    }
  }

  /** Deletes the rows whose window closed over an hour ago; a failure is left for the next sweep. */
  async sweep(now = Date.now()): Promise<number> {
    return this.db
      .table(SIGN_IN_FAILURES_TABLE)
      .where('expire', '<', now - SWEEP_AFTER_MS)
      .delete()
      .catch(() => 0);
  }

  /** Stops the sweeps (the database is closed by its owner). */
  close(): void {
    clearInterval(this.sweeper);
  }

  private storeFailed(err: unknown): void {
    if (this.storeDown) return;
    this.storeDown = true;
    this.log.warn({ err }, 'sign-in failure counts: the database cannot be reached; counting in this process until it can');
  }

  private storeUp(): void {
    if (!this.storeDown) return;
    this.storeDown = false;
    this.log.info('sign-in failure counts: the database is back; counting there again');
  }
}
