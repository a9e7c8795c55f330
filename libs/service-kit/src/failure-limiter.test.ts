import { TooManyRequestsError } from '@platform/errors';
import { FailureLimiter } from './failure-limiter';

describe('FailureLimiter', () => {
  let now = 1_000_000;
  const limiter = (max: number, maxKeys?: number) => new FailureLimiter({ max, windowMs: 60_000, maxKeys, now: () => now });

  it('refuses a key after max failures until the window that opened at its first failure closes', () => {
    const l = limiter(3);
    l.fail('alice');
    now += 10_000;
    l.fail('alice');
    expect(l.retryAfterSeconds('alice')).toBe(0);
    l.fail('alice');
    expect(l.retryAfterSeconds('alice')).toBe(50);
    expect(() => l.assertAllowed('alice', 'too many failed sign-in attempts')).toThrow(TooManyRequestsError);
    try {
      l.assertAllowed('alice', 'too many failed sign-in attempts');
    } catch (err) {
      expect((err as TooManyRequestsError).retryAfterSeconds).toBe(50);
      expect((err as Error).message).toBe('too many failed sign-in attempts; try again in 50 s');
    }
    expect(l.retryAfterSeconds('bob')).toBe(0);
    now += 49_500;
    expect(l.retryAfterSeconds('alice')).toBe(1);
    now += 500;
    expect(l.retryAfterSeconds('alice')).toBe(0);
    l.fail('alice');
    expect(l.retryAfterSeconds('alice')).toBe(0); // a new window, one failure
  });

  it('forgets a key on reset', () => {
    const l = limiter(1);
    l.fail('alice');
    expect(l.retryAfterSeconds('alice')).toBeGreaterThan(0);
    l.reset('alice');
    expect(l.retryAfterSeconds('alice')).toBe(0);
  });

  it('keeps at most maxKeys, dropping expired keys first and then the oldest', () => {
    const l = limiter(1, 3);
    l.fail('a');
    now += 30_000;
    l.fail('b');
    l.fail('c');
    now += 30_000; // a expires
    l.fail('d');
    expect(l.size).toBe(3);
    expect(l.retryAfterSeconds('b')).toBeGreaterThan(0);
    l.fail('e'); // full, nothing expired: b (the oldest) goes
    expect(l.size).toBe(3);
    expect(l.retryAfterSeconds('b')).toBe(0);
    expect(['c', 'd', 'e'].map((k) => l.retryAfterSeconds(k) > 0)).toEqual([true, true, true]);
  });
});
