import { openDatabase, type Database } from '@platform/db';
import { TooManyRequestsError } from '@platform/errors';
import { createLogger } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { LocalSignInFailures, SharedSignInFailures, SIGN_IN_FAILURES_TABLE, type SignInFailures } from '../src/sign-in-failures';

const log = createLogger('gateway-test', 'silent');
const MESSAGE = 'too many failed sign-in attempts from this address';

/** The 429 `assertAllowed` throws for `key`, or undefined when it lets the key try. */
async function refusal(limiter: SignInFailures, key: string): Promise<TooManyRequestsError | undefined> {
  try {
    await limiter.assertAllowed(key, MESSAGE);
    return undefined;
  } catch (err) {
    if (err instanceof TooManyRequestsError) return err;
    throw err;
  }
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
    const [a, b] = [shared(first), shared(second)];
    for (const replica of [a, b, a]) {
      expect(await refusal(replica, '192.0.2.1')).toBeUndefined();
      await replica.fail('192.0.2.1');
    }
    for (const replica of [a, b]) {
      const refused = await refusal(replica, '192.0.2.1');
      expect(refused).toMatchObject({ httpStatus: 429 });
      expect(refused!.message).toMatch(/^too many failed sign-in attempts from this address; try again in \d+ s$/);
      expect(refused!.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(refused!.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    // Another address has its own count.
    expect(await refusal(b, '192.0.2.2')).toBeUndefined();
    // In memory, as on the embedded platform, each process counts alone: the same three failures spread over two
    // processes leave both letting the address try.
    const [x, y] = [new LocalSignInFailures({ max: 3, windowSeconds: 60 }), new LocalSignInFailures({ max: 3, windowSeconds: 60 })];
    for (const replica of [x, y, x]) await replica.fail('192.0.2.1');
    expect(await refusal(y, '192.0.2.1')).toBeUndefined();
  });

  it('counts concurrent failures from many replicas exactly', async () => {
    const replicas = [shared(first, 20), shared(second, 20)];
    await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2].fail('198.51.100.7')));
    expect(await first.table(SIGN_IN_FAILURES_TABLE).where({ key: 'address:198.51.100.7' }).first()).toMatchObject({ points: 20 });
    expect(await refusal(replicas[0], '198.51.100.7')).toBeDefined();
  });

  it('lets the address try again once its window, opened at its first failure, has closed', async () => {
    const [a, b] = [shared(first, 2, 1), shared(second, 2, 1)];
    await a.fail('203.0.113.5');
    await b.fail('203.0.113.5');
    const refused = await refusal(b, '203.0.113.5');
    expect(refused?.retryAfterSeconds).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await refusal(a, '203.0.113.5')).toBeUndefined();
    // A new window: one failure is one, not three.
    await a.fail('203.0.113.5');
    expect(await refusal(b, '203.0.113.5')).toBeUndefined();
  });

  it('deletes rows an hour past their window', async () => {
    const limiter = shared(first);
    await limiter.fail('192.0.2.99');
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
    await limiter.fail('192.0.2.50');
    expect(await refusal(limiter, '192.0.2.50')).toBeUndefined();
    await limiter.fail('192.0.2.50');
    expect(await refusal(limiter, '192.0.2.50')).toMatchObject({ httpStatus: 429 });
  });
});
