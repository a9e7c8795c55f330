import { TooManyRequestsError } from '@platform/errors';
import { hashPassword, PASSWORD_THREADS, PasswordCheckGate, PasswordVerifier } from './passwords';

// The gate bounds how long a password check waits for a thread, on a clock of the test's: a check that cannot start
// in time is refused at once with 429, never queued into its caller's deadline.

describe('the gate of password checks', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A check that takes `ms` of the fake clock, as a derivation on a busy host would. */
  const taking = (ms: number) => () => new Promise<void>((done) => setTimeout(done, ms));

  it('answers 80 wrong passwords, 16 in flight, with checks slowed by a busy host, with answers and 429s only, each well inside the deadline', async () => {
    const gate = new PasswordCheckGate({ atOnce: 2, maxWaitMs: 2_000, firstCheckMs: 100, now: () => Date.now() });
    const answers: { arrived: number; answered: number; outcome: 'checked' | 'refused' | 'other'; retryAfter?: number; message?: string }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < 80) {
        next += 1;
        const arrived = Date.now();
        // Each check takes 300 ms where the gate first guesses 100: the host slowed since it last measured.
        const outcome = await gate.run(taking(300)).then(
          () => ({ outcome: 'checked' as const }),
          (err: unknown) =>
            err instanceof TooManyRequestsError
              ? { outcome: 'refused' as const, retryAfter: err.retryAfterSeconds, message: err.message }
              : { outcome: 'other' as const },
        );
        answers.push({ arrived, answered: Date.now(), ...outcome });
      }
    };
    const all = Promise.all(Array.from({ length: 16 }, worker));
    while (answers.length < 80) await jest.advanceTimersByTimeAsync(50);
    await all;
    expect(answers.filter((a) => a.outcome === 'other')).toEqual([]);
    expect(answers.filter((a) => a.outcome === 'checked').length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.outcome === 'refused').length).toBeGreaterThan(0);
    // Nothing waits into the caller's 10 s deadline: the longest answer is the give-up bound and one check.
    expect(Math.max(...answers.map((a) => a.answered - a.arrived))).toBeLessThanOrEqual(4_000 + 300);
    // Once a check has been measured, a check that cannot start in time is refused the moment it arrives.
    const measured = answers.filter((a) => a.arrived >= 300 && a.outcome === 'refused');
    expect(measured.length).toBeGreaterThan(0);
    for (const a of measured) expect(a.answered).toBe(a.arrived);
    for (const a of answers.filter((x) => x.outcome === 'refused')) {
      expect(a.message).toMatch(/^too many sign-in attempts on this site at once: the password check would wait too long; try again in \d+ s$/);
      expect(a.retryAfter).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses at once, with the wait the queue needs to drain, a check whose place × the measured check time passes the bound', async () => {
    const gate = new PasswordCheckGate({ atOnce: 2, maxWaitMs: 1_000, firstCheckMs: 400, now: () => Date.now() });
    const running = [gate.run(taking(400)), gate.run(taking(400))];
    // Two run, two at a time: the first two queued would start after 400 ms, the next two after 800 ms, a fifth after
    // 1,200 ms, past the bound.
    const queued = [gate.run(taking(400)), gate.run(taking(400)), gate.run(taking(400)), gate.run(taking(400))];
    let early: unknown;
    void gate.run(taking(400)).catch((err: unknown) => (early = err));
    await jest.advanceTimersByTimeAsync(0);
    expect(early).toBeInstanceOf(TooManyRequestsError);
    // Four wait and two run: the queue drains in 4 / 2 + 1 checks of 400 ms.
    expect((early as TooManyRequestsError).retryAfterSeconds).toBe(2);
    await jest.advanceTimersByTimeAsync(1_200);
    await expect(Promise.all([...running, ...queued])).resolves.toHaveLength(6);
  });

  it('measures a check by the last ones but their longest and shortest: one slow check (a thread starting) does not turn sign-ins away', async () => {
    const gate = new PasswordCheckGate({ atOnce: 1, maxWaitMs: 1_000, firstCheckMs: 100, now: () => Date.now() });
    for (const ms of [100, 100, 3_000, 100]) {
      const check = gate.run(taking(ms));
      await jest.advanceTimersByTimeAsync(ms);
      await check;
    }
    // One running and five waiting: the sixth starts after about 600 ms by the measure, well inside the bound.
    const all = Array.from({ length: 6 }, () => gate.run(taking(100)));
    await jest.advanceTimersByTimeAsync(600);
    await expect(Promise.all(all)).resolves.toHaveLength(6);
    // As the host slows for good, the measure follows within a few checks.
    for (let i = 0; i < 5; i += 1) {
      const check = gate.run(taking(3_000));
      await jest.advanceTimersByTimeAsync(3_000);
      await check;
    }
    const running = gate.run(taking(3_000));
    await expect(gate.run(taking(3_000))).rejects.toBeInstanceOf(TooManyRequestsError);
    await jest.advanceTimersByTimeAsync(3_000);
    await running;
  });

  it('lets a priority check in ahead of the others waiting', async () => {
    const gate = new PasswordCheckGate({ atOnce: 1, maxWaitMs: 10_000, firstCheckMs: 100, now: () => Date.now() });
    const order: string[] = [];
    const check = (name: string) => () => {
      order.push(name);
      return new Promise<void>((done) => setTimeout(done, 100));
    };
    const all = [
      gate.run(check('first')),
      gate.run(check('guess 1')),
      gate.run(check('guess 2')),
      gate.run(check('clean account'), { priority: true }),
      gate.run(check('guess 3')),
      gate.run(check('another clean account'), { priority: true }),
    ];
    await jest.advanceTimersByTimeAsync(600);
    await Promise.all(all);
    expect(order).toEqual(['first', 'clean account', 'another clean account', 'guess 1', 'guess 2', 'guess 3']);
  });

  it('refuses a check still waiting at the give-up bound (the host slowed after it was let in) and runs the next ones', async () => {
    const gate = new PasswordCheckGate({ atOnce: 1, maxWaitMs: 1_000, giveUpMs: 2_000, firstCheckMs: 100, now: () => Date.now() });
    const slow = gate.run(taking(5_000));
    const waiting = gate.run(taking(100)).catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(1_999);
    let settled = false;
    void waiting.then(() => (settled = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await waiting).toBeInstanceOf(TooManyRequestsError);
    await jest.advanceTimersByTimeAsync(3_000);
    await slow;
    // Measured at 5 s a check, the gate now refuses a second waiting check at once, and lets a first one run.
    const first = gate.run(taking(100));
    await expect(gate.run(taking(100))).rejects.toBeInstanceOf(TooManyRequestsError);
    await jest.advanceTimersByTimeAsync(100);
    await first;
  });
});

describe('the verifier of passwords', () => {
  const derived = jest.spyOn(PASSWORD_THREADS, 'derive');
  afterAll(() => derived.mockRestore());
  const derivationsOf = async <T>(work: () => Promise<T>) => {
    const before = derived.mock.calls.length;
    const result = await work();
    return { result, derivations: derived.mock.calls.length - before };
  };

  it('remembers a right password, by the hash it matched, while it is given again within a minute: repeated, it costs no derivation; changed, it is derived again', async () => {
    let now = 1_000_000;
    const verifier = new PasswordVerifier(new PasswordCheckGate({ atOnce: 2, maxWaitMs: 2_000 }), { now: () => now });
    const stored = await hashPassword('correct horse');
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 1 });
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 0 });
    // A wrong password is never remembered, and does not displace the right one.
    expect(await derivationsOf(() => verifier.verify('wrong horse', stored))).toEqual({ result: false, derivations: 1 });
    expect(await derivationsOf(() => verifier.verify('wrong horse', stored))).toEqual({ result: false, derivations: 1 });
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 0 });
    // The password changed: a new hash (a new salt), against which the old password is checked in full, and fails.
    const changed = await hashPassword('battery staple');
    expect(await derivationsOf(() => verifier.verify('correct horse', changed))).toEqual({ result: false, derivations: 1 });
    expect(await derivationsOf(() => verifier.verify('battery staple', changed))).toEqual({ result: true, derivations: 1 });
    // Each match starts its minute again; a minute without one forgets it.
    now += 59_000;
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 0 });
    now += 59_000;
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 0 });
    now += 60_001;
    expect(await derivationsOf(() => verifier.verify('correct horse', stored))).toEqual({ result: true, derivations: 1 });
  });

  it('checks one password against one hash once for all the requests that send it at once, per account tried', async () => {
    const verifier = new PasswordVerifier(new PasswordCheckGate({ atOnce: 2, maxWaitMs: 2_000 }));
    const stored = await hashPassword('correct horse');
    const same = await derivationsOf(() => Promise.all(Array.from({ length: 10 }, () => verifier.verify('correct horse', stored, { who: 'id:1' }))));
    expect(same).toEqual({ result: Array(10).fill(true), derivations: 1 });
    const wrong = await derivationsOf(() =>
      Promise.all([verifier.verify('wrong', stored, { who: 'name:a' }), verifier.verify('wrong', stored, { who: 'name:a' }), verifier.verify('wrong', stored, { who: 'name:b' })]),
    );
    expect(wrong).toEqual({ result: [false, false, false], derivations: 2 });
    expect(verifier.guess('wrong', stored, 'name:a')).toBe(verifier.guess('wrong', stored, 'name:a'));
    expect(verifier.guess('wrong', stored, 'name:a')).not.toBe(verifier.guess('wrong', stored, 'name:b'));
    expect(verifier.guess('wrong', stored, 'name:a')).not.toContain('wrong');
  });

  it('answers false, deriving nothing, for a stored value that is no scrypt hash', async () => {
    const verifier = new PasswordVerifier(new PasswordCheckGate({ atOnce: 1, maxWaitMs: 2_000 }));
    expect(await derivationsOf(() => verifier.verify('x', ''))).toEqual({ result: false, derivations: 0 });
  });
});
