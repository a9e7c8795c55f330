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
  /** Failures counted in this window, those forgotten included. */
  failed: number;
  /** How many of the first failures a success forgot (they came before it began). */
  forgotten: number;
  /** Places held by attempts in flight (reserve()) and not settled yet: one per attempt, one per guess for those naming one. */
  inFlight: number;
  /** Attempts in flight per guess they named; those of one guess share one place. */
  guesses: Map<string, number>;
  resetAt: number;
}

const counted = (entry: Entry) => entry.failed - entry.forgotten;

/**
 * One attempt holding its place against a key's limit while its secret is checked (`FailureLimiter.reserve`). The
 * first of its calls settles it; later calls do nothing, so a `finally` may release whatever was not settled.
 */
export interface Attempt {
  /** It failed (a wrong password or code): its place becomes a counted failure. */
  fail(): void;
  /** It succeeded: its place is freed and the key's failures counted before it began are forgotten. */
  succeed(): void;
  /** It was neither (refused further on, incomplete, an error): its place is freed and nothing is counted. */
  release(): void;
}

/**
 * Counts failures (wrong passwords) per key (an account, a client address) in memory, in a fixed window
 * that opens at the key's first failure. Once `max` failures are counted the key is refused until the
 * window closes; a success may reset the key. Memory is bounded by `maxKeys`.
 *
 * `reserve` makes the limit exact under concurrency: an attempt takes its place before its secret is checked, and
 * attempts in flight count against the limit with the failures, so a burst of concurrent guesses checks at most
 * `max` of them (checking and counting as two steps let every attempt that arrived before the first failure through).
 * Attempts naming the same guess (one secret, as a keyed hash of it) share one place: a client sending its right password
 * on many requests at once is not refused for the number of them, and repeating one guess tells a guesser nothing new.
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
    if (!entry || counted(entry) < this.opts.max) return 0;
    return Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000));
  }

  /** Throws a 429 with Retry-After when `key` is over its limit; does nothing otherwise. */
  assertAllowed(key: string, message: string): void {
    const wait = this.retryAfterSeconds(key);
    if (wait > 0) throw new TooManyRequestsError(`${message}; try again in ${wait} s`, wait);
  }

  /**
   * Holds a place for one attempt of `key` before its secret is checked, or throws a 429 with Retry-After when the
   * key's failures and the places held in flight together reach `max`: over the limit, until the window closes; at it
   * only because of attempts still in flight, in 1 s (they may yet succeed). A refused attempt is not counted. An
   * attempt naming a `guess` already in flight for the key joins its place rather than taking another.
   */
  reserve(key: string, message: string, guess?: string): Attempt {
    const wait = this.retryAfterSeconds(key);
    if (wait > 0) throw new TooManyRequestsError(`${message}; try again in ${wait} s`, wait);
    const entry = this.live(key) ?? this.open(key, 0);
    const joins = guess !== undefined && entry.guesses.has(guess);
    if (!joins && counted(entry) + entry.inFlight >= this.opts.max) throw new TooManyRequestsError(`${message}; try again in 1 s`, 1);
    if (!joins) entry.inFlight += 1;
    if (guess !== undefined) entry.guesses.set(guess, (entry.guesses.get(guess) ?? 0) + 1);
    const failedBefore = entry.failed;
    let settled = false;
    /** The entry still holds this attempt's place, unless its window closed or the key was reset meanwhile. */
    const settle = (): Entry | undefined => {
      if (settled) return undefined;
      settled = true;
      if (this.live(key) !== entry) return undefined;
      if (guess === undefined) entry.inFlight -= 1;
      else {
        const left = entry.guesses.get(guess)! - 1;
        if (left > 0) entry.guesses.set(guess, left);
        else {
          entry.guesses.delete(guess);
          entry.inFlight -= 1;
        }
      }
      return entry;
    };
    return {
      fail: () => {
        if (settled) return;
        // A failure whose window closed while it was checked counts in the key's current window.
        const held = settle();
        if (held) held.failed += 1;
        else this.fail(key);
      },
      succeed: () => {
        const held = settle();
        if (!held) return;
        held.forgotten = Math.max(held.forgotten, failedBefore);
        this.dropIfEmpty(key, held);
      },
      release: () => {
        const held = settle();
        if (held) this.dropIfEmpty(key, held);
      },
    };
  }

  /** Failures of `key` counted in its current window (those a success forgot not included). */
  failures(key: string): number {
    const entry = this.live(key);
    return entry ? counted(entry) : 0;
  }

  /** Counts one failure of `key`. */
  fail(key: string): void {
    const entry = this.live(key) ?? this.open(key, 0);
    entry.failed += 1;
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

  /** A new window for `key`, opening now. */
  private open(key: string, failed: number): Entry {
    this.makeRoom();
    const entry = { failed, forgotten: 0, inFlight: 0, guesses: new Map<string, number>(), resetAt: this.now() + this.opts.windowMs };
    this.entries.set(key, entry);
    return entry;
  }

  /** Forgets a key with nothing counted and nothing in flight, so its window opens at its next failure again. */
  private dropIfEmpty(key: string, entry: Entry): void {
    if (entry.inFlight === 0 && counted(entry) === 0) this.entries.delete(key);
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
