import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
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
 *
 * An attempt takes its place against the limit before its password is checked (`reserve`), and attempts in flight
 * count with the failures, so however many arrive at once no more than `max` are checked: checking and counting as
 * two steps let every attempt that arrived before the first failure was recorded through.
 */
export interface SignInFailures {
  /**
   * Holds a place for one attempt of `key`, or throws a 429 with Retry-After when the key's failures and attempts
   * in flight reach its limit (a refused attempt is not counted).
   */
  reserve(key: string, message: string): Promise<SignInAttempt>;
}

/** An attempt holding its place (`SignInFailures.reserve`); the first of its calls settles it, later ones do nothing. */
export interface SignInAttempt {
  /** It failed (wrong credentials): its place becomes a counted failure. */
  fail(): Promise<void>;
  /** It did not fail (signed in, or refused further on): its place is given back. A success resets no address. */
  release(): Promise<void>;
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

  async reserve(key: string, message: string): Promise<SignInAttempt> {
    const attempt = this.limiter.reserve(key, message);
    return { fail: async () => attempt.fail(), release: async () => attempt.release() };
  }
}

/**
 * The counts in the gateway's Postgres schema, so every replica adds to and reads the same count: with N replicas
 * a client still gets `max` failures per window, not N × `max`. rate-limiter-flexible does the counting: one
 * atomic upsert per attempt (a row per key, its expiry the end of the window that opened at its first failure),
 * which counts the attempts in flight with the failures. Rows an hour past their window are deleted every 5 minutes
 * (here rather than by the library's own timer, which nothing could stop).
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
    limits: SignInFailureLimits,
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

  /**
   * One atomic upsert takes the place (the library's consume: +1, refused over `max`), so replicas checking at the
   * same moment cannot both take the last one. A refused attempt gives its point back at once: refusals are not
   * counted. A failure keeps its point; any other end gives it back.
   */
  async reserve(key: string, message: string): Promise<SignInAttempt> {
    try {
      await this.store.consume(key, 1);
      this.storeUp();
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        this.storeFailed(err);
        return this.fallback.reserve(key, message);
      }
      this.storeUp();
      await this.giveBack(key);
      const wait = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new TooManyRequestsError(`${message}; try again in ${wait} s`, wait);
    }
    let settled = false;
    const settle = (giveBack: boolean) => async () => {
      if (settled) return;
      settled = true;
      if (giveBack) await this.giveBack(key);
    };
    return { fail: settle(false), release: settle(true) };
  }

  /**
   * Takes back one point of `key` in its current window, never below zero (the library's reward would start a new
   * window at -1 once the old one closed, a free attempt), and deletes a row left at zero, so the key's window opens
   * at its next failure again. A concurrent consume between the two statements leaves the row above zero, and the
   * delete, evaluated on the row as it then is, keeps it. Not reachable: the point stays, counted as a failure.
   */
  private async giveBack(key: string): Promise<void> {
    const row = { key: this.store.getKey(key) };
    const now = Date.now();
    try {
      await this.db.table(SIGN_IN_FAILURES_TABLE).where(row).andWhere('expire', '>', now).andWhere('points', '>', 0).decrement('points', 1);
      await this.db.table(SIGN_IN_FAILURES_TABLE).where(row).andWhere('points', '<=', 0).delete();
    } catch (err) {
      this.storeFailed(err);
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
