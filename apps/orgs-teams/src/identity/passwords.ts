import { cacheMetrics, sizeOf } from '@platform/telemetry';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { TooManyRequestsError } from '@platform/errors';
import { PasswordThreads } from './password-threads';

// scrypt is memory-hard; N=2^15, r=8 uses 32 MiB per hash, ~60 ms here. Parameters are stored with the
// hash so they can be raised later without breaking existing passwords.
const PARAMS = { N: 1 << 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** The process's threads for scrypt (password-threads.ts): a sign-in's derivation never runs on the event loop's thread. */
export const PASSWORD_THREADS = new PasswordThreads();

function derive(password: string, salt: Buffer, opts: { N: number; r: number; p: number }): Promise<Buffer> {
  return PASSWORD_THREADS.derive(password, salt, KEY_LENGTH, { ...opts, maxmem: 128 * opts.N * opts.r * 2 });
}

/** Hashes a password as `scrypt$N$r$p$salt$key` (base64 parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** How long a check may expect to wait for a thread before it is refused at once: a fifth of the gateway's 10 s deadline. */
const MAX_WAIT_MS = 2_000;
/** How many of the last checks' durations the expected wait is measured from. */
const MEASURED_CHECKS = 9;

export interface PasswordCheckGateOptions {
  /** Checks run at once: as many as the password threads run (more would only queue inside them). */
  atOnce: number;
  /** A check whose expected wait for a turn is longer than this is refused at once with 429. */
  maxWaitMs: number;
  /** A check still waiting this long (the estimate was wrong: the host slowed) is refused then; 2 × maxWaitMs unless set. */
  giveUpMs?: number;
  /** What a check is taken to cost until one has been measured: 500 ms unless set, on the safe side of a busy host. */
  firstCheckMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface Waiting {
  priority: boolean;
  start: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Bounds how long the password checks of the process wait, not how many: a check that would wait for a turn longer
 * than `maxWaitMs` (its place in the queue × the measured time of a check ÷ the checks run at once) is refused AT ONCE
 * with 429 and a Retry-After of the queue's expected drain, rather than queued into its caller's deadline (504, right
 * passwords among them). The measured time is the mean of the last checks but their longest and shortest: it follows
 * the host within a few checks, a skewed spread of durations counts in full, and one outlier (a thread's first check,
 * which starts the thread) not at all.
 * Checks marked `priority` (accounts with no failures counted) are let in ahead of the others, so a flood of guesses
 * waits behind them; a check still waiting after `giveUpMs` is refused then (a safety net for a host that slowed after
 * it was let in, or a stream of priority checks), never run past its caller's deadline.
 */
export class PasswordCheckGate {
  private running = 0;
  /** The priority checks first, each lane in order of arrival. */
  private readonly queue: Waiting[] = [];
  /** The durations of the last checks (ms), oldest first. */
  private readonly lastChecks: number[] = [];
  private checkMs: number;
  private readonly giveUpMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: PasswordCheckGateOptions) {
    this.checkMs = opts.firstCheckMs ?? 500;
    this.giveUpMs = opts.giveUpMs ?? 2 * opts.maxWaitMs;
    this.now = opts.now ?? (() => performance.now());
  }

  async run<T>(check: () => Promise<T>, opts: { priority?: boolean } = {}): Promise<T> {
    // Nothing waits while a check could run, so a free place means an empty queue.
    if (this.running < this.opts.atOnce) this.running += 1;
    else await this.turn(opts.priority ?? false);
    const began = this.now();
    try {
      return await check();
    } finally {
      this.measure(this.now() - began);
      // The turn is handed over by the check that ends, so `running` never drops below what runs.
      const next = this.queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.start();
      } else this.running -= 1;
    }
  }

  /** Expected wait (ms) of a check with `ahead` checks queued before it and every place taken. */
  private expectedWait(ahead: number): number {
    return Math.ceil((ahead + 1) / this.opts.atOnce) * this.checkMs;
  }

  private refusal(): TooManyRequestsError {
    const wait = Math.max(1, Math.ceil(this.expectedWait(this.queue.length) / 1000));
    return new TooManyRequestsError(
      `too many sign-in attempts on this site at once: the password check would wait too long; try again in ${wait} s`,
      wait,
    );
  }

  /** Waits for a turn, or throws at once when the wait expected would be longer than `maxWaitMs`. */
  private turn(priority: boolean): Promise<void> {
    const ahead = priority ? this.queue.filter((w) => w.priority).length : this.queue.length;
    if (this.expectedWait(ahead) > this.opts.maxWaitMs) throw this.refusal();
    return new Promise<void>((start, refuse) => {
      const waiting: Waiting = {
        priority,
        start,
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(waiting), 1);
          refuse(this.refusal());
        }, this.giveUpMs),
      };
      this.queue.splice(ahead, 0, waiting);
    });
  }

  private measure(ms: number): void {
    this.lastChecks.push(ms);
    if (this.lastChecks.length > MEASURED_CHECKS) this.lastChecks.shift();
    const sorted = [...this.lastChecks].sort((a, b) => a - b);
    const kept = sorted.length > 2 ? sorted.slice(1, -1) : sorted;
    this.checkMs = kept.reduce((sum, d) => sum + d, 0) / kept.length;
  }
}

/** How long a verified password is remembered after it was last given: a client repeating it pays scrypt once. */
const VERIFIED_TTL_MS = 60_000;

/**
 * Checks passwords against their stored hashes: scrypt on the password threads through a gate that bounds the wait,
 * with two shortcuts that never weaken a check. Concurrent checks of one password against one hash share one
 * derivation. A password verified and given again within a minute is known by a keyed hash (HMAC-SHA256 under a key
 * of this process alone) of the stored hash and the password, compared in constant time, so a client sending its right
 * Basic credentials on every request pays scrypt once; keyed by the stored hash, an entry stops matching the moment
 * the password changes (a new hash, a new salt). Only successes are remembered.
 */
export class PasswordVerifier {
  private readonly key = randomBytes(32);
  /** Per stored hash: the keyed hash of the password last verified against it. */
  private readonly verified: LRUCache<string, Buffer>;
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly metrics;

  constructor(
    readonly gate: PasswordCheckGate,
    opts: { ttlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.verified = new LRUCache<string, Buffer>({
      max: opts.max ?? 10_000,
      ttl: opts.ttlMs ?? VERIFIED_TTL_MS,
      // Each match starts the minute again, so a client that keeps sending it never pays a derivation in the middle
      // of a flood (when its check could be refused).
      updateAgeOnGet: true,
      ttlResolution: 0,
      ...(opts.now && { perf: { now: opts.now } }),
    });
    this.metrics = cacheMetrics(sizeOf('orgs-teams.verified-passwords', this.verified));
  }

  /**
   * One guess of a password against a stored hash by `who` (the account tried), as an opaque text: attempts of one
   * guess share a place in a FailureLimiter.
   */
  guess(password: string, stored: string, who = ''): string {
    return this.tag(password, stored, who).toString('base64');
  }

  /**
   * Whether `password` is the one `stored` was made from, in constant time. `priority` lets the check in first; `who`
   * names the account tried, so checks share a derivation only within one account (many unknown names share one hash).
   */
  async verify(password: string, stored: string, opts: { priority?: boolean; who?: string } = {}): Promise<boolean> {
    const [kind, n, r, p, salt, key] = stored.split('$');
    if (kind !== 'scrypt' || !key) return false;
    const tag = this.tag(password, stored, opts.who ?? '');
    const kept = this.verified.get(stored);
    if (kept && timingSafeEqual(kept, tag)) return (this.metrics.hit.inc(), true);
    this.metrics.miss.inc();
    const id = tag.toString('base64');
    const joined = this.pending.get(id);
    if (joined) return joined;
    const check = (async () => {
      const expected = Buffer.from(key, 'base64');
      const actual = await this.gate.run(
        () => derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }),
        opts,
      );
      const ok = actual.length === expected.length && timingSafeEqual(actual, expected);
      if (ok) this.verified.set(stored, tag);
      return ok;
    })().finally(() => this.pending.delete(id));
    this.pending.set(id, check);
    return check;
  }

  private tag(password: string, stored: string, who: string): Buffer {
    const hmac = createHmac('sha256', this.key);
    // Each part led by its length, so no two different triples read as the same bytes.
    for (const part of [who, stored, password]) hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    return hmac.digest();
  }
}

/** The process's checks: as many at once as the password threads run, refused at once beyond a wait of MAX_WAIT_MS. */
export const PASSWORD_VERIFIER = new PasswordVerifier(new PasswordCheckGate({ atOnce: PASSWORD_THREADS.size, maxWaitMs: MAX_WAIT_MS }));

/** Checks a password against a stored hash in constant time, through the process's verifier (or the one given). */
export function verifyPassword(
  password: string,
  stored: string,
  opts: { priority?: boolean; who?: string; verifier?: PasswordVerifier } = {},
): Promise<boolean> {
  return (opts.verifier ?? PASSWORD_VERIFIER).verify(password, stored, opts);
}
