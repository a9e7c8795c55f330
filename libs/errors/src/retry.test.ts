import { retryDelayMs, withRetries, withRetriesSync, within } from './retry';

describe('withRetries', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** Runs `withRetries` to its end on fake timers; answers its outcome and when each attempt started, from the first. */
  async function run(policy: Parameters<typeof withRetries>[0], failures: unknown[], retryable = (_err: unknown) => true) {
    const started: number[] = [];
    const attempts: number[] = [];
    const told: number[] = [];
    const outcome = withRetries(
      policy,
      (err, failed) => (told.push(failed), retryable(err)),
      async (attempt) => {
        attempts.push(attempt);
        started.push(Date.now());
        if (failures.length > 0) throw failures.shift();
        return 'done';
      },
    ).then(
      (value): { value?: string; error?: unknown } => ({ value }),
      (error: unknown) => ({ error }),
    );
    await jest.runAllTimersAsync();
    return { ...(await outcome), started: started.map((t) => t - started[0]), attempts, told };
  }

  it('tries again until the call succeeds, numbering the attempts', async () => {
    const r = await run({ attempts: 4, baseDelayMs: 10, jitter: 'none' }, [new Error('a'), new Error('b')]);
    expect(r).toMatchObject({ value: 'done', attempts: [1, 2, 3], told: [1, 2] });
  });

  it('throws the last failure once the attempts are spent', async () => {
    const last = new Error('third');
    const r = await run({ attempts: 3, baseDelayMs: 10 }, [new Error('first'), new Error('second'), last, new Error('unused')]);
    expect(r.error).toBe(last);
    expect(r.attempts).toEqual([1, 2, 3]);
  });

  it('stops at a failure that is not retryable', async () => {
    const final = new Error('refused');
    const r = await run({ attempts: 5, baseDelayMs: 10 }, [new Error('lost'), final], (err) => err !== final);
    expect(r.error).toBe(final);
    expect(r.attempts).toEqual([1, 2]);
  });

  it('makes one attempt when the policy says fewer', async () => {
    const r = await run({ attempts: 0, baseDelayMs: 10 }, [new Error('once')]);
    expect(r.attempts).toEqual([1]);
  });

  it('without jitter waits the first delay, then multiplies it by the factor', async () => {
    const r = await run({ attempts: 4, baseDelayMs: 100, factor: 4, jitter: 'none' }, [1, 2, 3]);
    expect(r.started).toEqual([0, 100, 500, 2100]);
    expect((await run({ attempts: 3, baseDelayMs: 10, factor: 1, jitter: 'none' }, [1, 2])).started).toEqual([0, 10, 20]);
  });

  it('with full jitter (the default) draws each wait up to the doubled delay', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const r = await run({ attempts: 4, baseDelayMs: 200 }, [1, 2, 3]);
    expect(r.started).toEqual([0, 100, 300, 700]);
  });

  it('never waits longer than the longest wait', async () => {
    const r = await run({ attempts: 5, baseDelayMs: 50, maxDelayMs: 120, jitter: 'none' }, [1, 2, 3, 4]);
    expect(r.started).toEqual([0, 50, 150, 270, 390]);
  });
});

describe('retryDelayMs', () => {
  afterEach(() => jest.restoreAllMocks());

  it('is the base after one failure, multiplied after each next one, up to the longest wait, and never overflows', () => {
    const policy = { baseDelayMs: 10, maxDelayMs: 300_000, jitter: 'none' as const };
    expect([1, 2, 3, 17, 1_100].map((failed) => retryDelayMs(policy, failed))).toEqual([10, 20, 40, 300_000, 300_000]);
  });

  it('draws a wait at random up to that with full jitter', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.25);
    expect(retryDelayMs({ baseDelayMs: 100, factor: 3 }, 3)).toBe(225);
  });
});

describe('withRetriesSync', () => {
  it('tries again without yielding until the step succeeds, and throws a final failure at once', () => {
    const seen: number[] = [];
    const value = withRetriesSync(
      { attempts: 5, baseDelayMs: 1, jitter: 'none' },
      () => true,
      (attempt) => {
        seen.push(attempt);
        if (attempt < 3) throw new Error('raced');
        return 'held';
      },
    );
    expect({ value, seen }).toEqual({ value: 'held', seen: [1, 2, 3] });

    const final = new Error('in use');
    let tries = 0;
    expect(() =>
      withRetriesSync(
        { attempts: 5, baseDelayMs: 1 },
        (err) => err !== final,
        () => {
          tries += 1;
          throw final;
        },
      ),
    ).toThrow(final);
    expect(tries).toBe(1);
  });

  it('throws the last failure once the attempts are spent', () => {
    let tries = 0;
    expect(() =>
      withRetriesSync(
        { attempts: 3, baseDelayMs: 1 },
        () => true,
        () => {
          throw new Error(`attempt ${++tries}`);
        },
      ),
    ).toThrow('attempt 3');
  });
});

describe('within', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers what the work answers in time, and a rejection saying what was still open once the time is up', async () => {
    await expect(within(Promise.resolve(7), 1_000, 'late')).resolves.toBe(7);
    let open = 'the first step';
    const never = within(new Promise<void>(() => {}), 1_000, () => `still closing ${open}`);
    const failed = expect(never).rejects.toThrow('still closing the second step');
    open = 'the second step';
    await jest.advanceTimersByTimeAsync(1_000);
    await failed;
  });
});
