import { randomBytes, timingSafeEqual } from 'node:crypto';
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

/**
 * Bounds the password checks of the process: `atOnce` run, `waiting` wait for a turn, and one more is refused at once
 * (429, Retry-After 1 s). Each account's and each address's checks in flight are bounded by their failure limits
 * (FailureLimiter.reserve); this bounds the sum over many accounts and addresses. Unbounded, checks would queue
 * inside Node's thread pool until their callers' deadlines passed, and the sign-ins, right passwords among them,
 * would end in 504 instead of an answer.
 */
export class PasswordCheckGate {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly atOnce: number,
    private readonly waiting: number,
  ) {}

  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.queue.length >= this.waiting)
        throw new TooManyRequestsError('too many sign-in attempts on this site at once; try again in 1 s', 1);
      // The turn is handed over by the check that ends, so `running` never drops below what runs.
      await new Promise<void>((turn) => this.queue.push(turn));
    } else {
      this.running += 1;
    }
    try {
      return await check();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/**
 * The process's gate: 4 checks at once handed to the password threads (which run as many as they have threads and
 * queue the rest), and 32 waiting take a few seconds on a busy 2-core machine, well inside the gateway's 10 s deadline.
 */
const PASSWORD_CHECKS = new PasswordCheckGate(4, 32);

/** Checks a password against a stored hash in constant time, through the process's gate of password checks. */
export async function verifyPassword(password: string, stored: string, gate = PASSWORD_CHECKS): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$');
  if (kind !== 'scrypt' || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await gate.run(() => derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
