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

  it('counts attempts in flight against the limit, so no more than max are let through at once; refusals count nothing', () => {
    const l = limiter(3);
    const held = [l.reserve('alice', 'too many'), l.reserve('alice', 'too many'), l.reserve('alice', 'too many')];
    const busy = (() => {
      try {
        l.reserve('alice', 'too many');
      } catch (err) {
        return err as TooManyRequestsError;
      }
    })();
    // At the limit only because three are in flight: they may yet succeed, so "try again" is a second away.
    expect(busy).toBeInstanceOf(TooManyRequestsError);
    expect(busy!.retryAfterSeconds).toBe(1);
    expect(busy!.message).toBe('too many; try again in 1 s');
    held[0].release();
    held[1].fail();
    const third = l.reserve('alice', 'too many'); // the released place is free again; the refusal was not counted
    third.fail();
    held[2].fail();
    held[2].release(); // settled once: nothing more
    expect(l.retryAfterSeconds('alice')).toBe(60);
    expect(() => l.reserve('alice', 'too many')).toThrow('too many; try again in 60 s');
  });

  it('forgets on success the failures counted before the attempt began, not those of attempts beside it', () => {
    const l = limiter(4);
    l.fail('bob');
    l.fail('bob');
    const right = l.reserve('bob', 'too many');
    const wrong = l.reserve('bob', 'too many');
    wrong.fail();
    right.succeed();
    // The two earlier failures are forgotten; the one checked at the same time stays.
    const more = [l.reserve('bob', 'too many'), l.reserve('bob', 'too many'), l.reserve('bob', 'too many')];
    expect(() => l.reserve('bob', 'too many')).toThrow(TooManyRequestsError);
    for (const m of more) m.release();
    // Nothing counted and nothing in flight: the key is forgotten, its next window opens at its next failure.
    l.reset('carol');
    l.reserve('carol', 'too many').succeed();
    expect(l.size).toBe(1);
  });

  it('lets attempts naming one guess share one place, so one secret sent on many requests at once is never refused for it', () => {
    const l = limiter(3);
    const right = Array.from({ length: 20 }, () => l.reserve('alice', 'too many', 'tag of the right password'));
    // The one place left after the shared one and a wrong guess is still free for another guess.
    const wrong = l.reserve('alice', 'too many', 'tag of a wrong password');
    const other = l.reserve('alice', 'too many', 'tag of another wrong password');
    expect(() => l.reserve('alice', 'too many', 'tag of a third wrong password')).toThrow('too many; try again in 1 s');
    expect(() => l.reserve('alice', 'too many')).toThrow('too many; try again in 1 s');
    for (const r of right.slice(1)) r.succeed();
    // The guess is still in flight once: its place is still held.
    expect(() => l.reserve('alice', 'too many')).toThrow('too many; try again in 1 s');
    right[0].succeed();
    l.reserve('alice', 'too many').release();
    wrong.fail();
    other.fail();
    expect(l.failures('alice')).toBe(2);
    // Locked, a guess in flight or not is refused: sharing a place never gets round the limit.
    const last = l.reserve('alice', 'too many', 'tag of a wrong password');
    last.fail();
    expect(() => l.reserve('alice', 'too many', 'tag of a wrong password')).toThrow('too many; try again in 60 s');
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
