import { openDatabase, type Database } from '@platform/db';
import { TooManyRequestsError } from '@platform/errors';
import { createLogger } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { LocalSignInFailures, SharedSignInFailures, SIGN_IN_FAILURES_TABLE, type SignInFailures } from '../src/sign-in-failures';

const log = createLogger('gateway-test', 'silent');
const MESSAGE = 'too many failed sign-in attempts from this address';

/** The 429 `reserve` throws for `key`, or undefined when it lets the key try (the place is given back at once). */
async function refusal(limiter: SignInFailures, key: string): Promise<TooManyRequestsError | undefined> {
  try {
    await (await limiter.reserve(key, MESSAGE)).release();
    return undefined;
  } catch (err) {
    if (err instanceof TooManyRequestsError) return err;
    throw err;
  }
}

/** One attempt of `key` that fails: a wrong password. */
const failOnce = async (limiter: SignInFailures, key: string) => (await limiter.reserve(key, MESSAGE)).fail();

/**
 * Retry-After is what is left of the 60 s window, which opened with the first failure, no earlier than `started`:
 * at most 60 s, and at least 60 s less the time this machine took since, however busy it is.
 */
function expectWaitLeft(retryAfter: unknown, started: number): void {
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - started) / 1000));
}

describe('failed sign-ins per address, counted in Postgres', () => {
  let test: { url: string; drop(): Promise<void> };
  // Two pools on one database: what two gateway replicas have.
  let first: Database;
  let second: Database;
  const limiters: SharedSignInFailures[] = [];
  const shared = (db: Database, max = 3, windowSeconds = 60) => {
    const limiter = new SharedSignInFailures(db, { max, windowSeconds }, log);
    limiters.push(limiter);
    return limiter;
  };

  beforeAll(async () => {
    test = await createTestDatabase();
    first = await openDatabase({ url: test.url, dataDir: '', schema: 'gateway' });
    second = await openDatabase({ url: test.url, dataDir: '', schema: 'gateway' });
    await first.migrate(migrations);
  });
  afterAll(async () => {
    for (const limiter of limiters) limiter.close();
    await first?.close();
    await second?.close();
    await test?.drop();
  });

  it('shares one count between two replicas: the (N+1)th attempt across both is refused, by both', async () => {
    const started = Date.now();
    const [a, b] = [shared(first), shared(second)];
    for (const replica of [a, b, a]) {
      expect(await refusal(replica, '192.0.2.1')).toBeUndefined();
      await failOnce(replica, '192.0.2.1');
    }
    for (const replica of [a, b]) {
      const refused = await refusal(replica, '192.0.2.1');
      expect(refused).toMatchObject({ httpStatus: 429 });
      expect(refused!.message).toMatch(/^too many failed sign-in attempts from this address; try again in \d+ s$/);
      expectWaitLeft(refused!.retryAfterSeconds, started);
    }
    // Another address has its own count.
    expect(await refusal(b, '192.0.2.2')).toBeUndefined();
    // In memory, as on the embedded platform, each process counts alone: the same three failures spread over two
    // processes leave both letting the address try.
    const [x, y] = [new LocalSignInFailures({ max: 3, windowSeconds: 60 }), new LocalSignInFailures({ max: 3, windowSeconds: 60 })];
    for (const replica of [x, y, x]) await failOnce(replica, '192.0.2.1');
    expect(await refusal(y, '192.0.2.1')).toBeUndefined();
  });

  it('counts concurrent failures from many replicas exactly', async () => {
    const replicas = [shared(first, 20), shared(second, 20)];
    await Promise.all(Array.from({ length: 20 }, (_, i) => failOnce(replicas[i % 2], '198.51.100.7')));
    expect(await first.table(SIGN_IN_FAILURES_TABLE).where({ key: 'address:198.51.100.7' }).first()).toMatchObject({ points: 20 });
    expect(await refusal(replicas[0], '198.51.100.7')).toBeDefined();
  });

  it('lets no more attempts through at once than the limit, over two replicas, and counts none it refused', async () => {
    const [a, b] = [shared(first, 5), shared(second, 5)];
    const row = () => first.table(SIGN_IN_FAILURES_TABLE).where({ key: 'address:192.0.2.77' }).first();
    const tried = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => [a, b][i % 2].reserve('192.0.2.77', MESSAGE)));
    const held = tried.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    const refused = tried.flatMap((t) => (t.status === 'rejected' ? [t.reason] : []));
    expect(held).toHaveLength(5);
    expect(refused).toHaveLength(35);
    for (const err of refused) expect(err).toBeInstanceOf(TooManyRequestsError);
    // The refused attempts gave their points back: only the five in flight are counted.
    expect(await row()).toMatchObject({ points: 5 });
    // Two fail and three end otherwise (signed in): the three places are given back, the failures stay.
    await Promise.all([held[0].fail(), held[1].fail(), held[2].release(), held[3].release(), held[4].release()]);
    await held[2].release(); // settling twice changes nothing
    expect(await row()).toMatchObject({ points: 2 });
    const next = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => [a, b][i % 2].reserve('192.0.2.77', MESSAGE)));
    expect(next.filter((t) => t.status === 'fulfilled')).toHaveLength(3);
    for (const t of next) if (t.status === 'fulfilled') await t.value.release();
    // Nothing but failures left, and an address whose attempts all succeeded keeps no row at all.
    expect(await row()).toMatchObject({ points: 2 });
    await (await a.reserve('192.0.2.78', MESSAGE)).release();
    expect(await first.table(SIGN_IN_FAILURES_TABLE).where({ key: 'address:192.0.2.78' }).first()).toBeUndefined();
  });

  it('lets the address try again once its window, opened at its first failure, has closed', async () => {
    const [a, b] = [shared(first, 2, 1), shared(second, 2, 1)];
    await failOnce(a, '203.0.113.5');
    await failOnce(b, '203.0.113.5');
    const refused = await refusal(b, '203.0.113.5');
    expect(refused?.retryAfterSeconds).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await refusal(a, '203.0.113.5')).toBeUndefined();
    // A new window: one failure is one, not three.
    await failOnce(a, '203.0.113.5');
    expect(await refusal(b, '203.0.113.5')).toBeUndefined();
  });

  it('deletes rows an hour past their window', async () => {
    const limiter = shared(first);
    await failOnce(limiter, '192.0.2.99');
    const count = async () =>
      Number((await first.table(SIGN_IN_FAILURES_TABLE).where({ key: 'address:192.0.2.99' }).count({ n: '*' }))[0].n);
    expect(await limiter.sweep()).toBe(0);
    expect(await count()).toBe(1);
    await limiter.sweep(Date.now() + 60_000 + 3_600_000 + 1000);
    expect(await count()).toBe(0);
  });

  it('counts in this process while the database cannot be reached, instead of failing the sign-in', async () => {
    const gone = await openDatabase({ url: test.url, dataDir: '', schema: 'gateway' });
    const limiter = shared(gone, 2);
    await gone.close();
    await failOnce(limiter, '192.0.2.50');
    expect(await refusal(limiter, '192.0.2.50')).toBeUndefined();
    await failOnce(limiter, '192.0.2.50');
    expect(await refusal(limiter, '192.0.2.50')).toMatchObject({ httpStatus: 429 });
  });
});
