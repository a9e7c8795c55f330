import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

// Small limits and a window short enough to wait out once, yet longer than a burst of a hundred sign-ins takes on a
// busy machine: with 6 s, the burst's failures had expired before the checks that count them ran (seen in CI).
const WINDOW_SECONDS = 20;

describe('password guessing on the Basic-auth routes is throttled', () => {
  let harness: TestPlatform;
  const createToken = (login: string, password: string, from?: string): Promise<Reply> =>
    harness.api(
      undefined,
      'POST',
      `/users/${login}/tokens`,
      { name: `t-${Math.random()}` },
      { authorization: basic(login, password), ...(from ? { 'x-forwarded-for': from } : {}) },
    );
  const expectThrottled = (res: Reply, by: 'account' | 'address') => {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      message: expect.stringMatching(
        new RegExp(`^too many failed sign-in attempts (for this account|from this address); try again in \\d+ s$`),
      ),
      url: expect.any(String),
    });
    expect(res.body.message).toContain(by === 'account' ? 'for this account' : 'from this address');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    return retryAfter;
  };

  beforeAll(async () => {
    harness = await bootTestPlatform({
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '5',
      LOGIN_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS),
      // Each case claims a client address of its own (X-Forwarded-For, believed from loopback only).
      TRUST_PROXY: 'loopback',
    });
    for (const login of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) await harness.signUp(login);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('answers 429 with Retry-After per account and per address, and lets the right password in after the window', async () => {
    // Three wrong passwords for alice are 401s; then alice is refused, even with her right password.
    for (let i = 0; i < 3; i += 1) expect((await createToken('alice', 'wrong-password')).status).toBe(401);
    expectThrottled(await createToken('alice', 'wrong-password'), 'account');
    expectThrottled(await createToken('alice', 'alice-password'), 'account');
    expectThrottled(await createToken('alice@example.com', 'alice-password'), 'account');

    // Bob's own count is untouched, but two more failures from this address reach its limit of five.
    for (let i = 0; i < 2; i += 1) expect((await createToken('bob', 'wrong-password')).status).toBe(401);
    expectThrottled(await createToken('bob', 'bob-password'), 'address');
    const wait = expectThrottled(await createToken('carol', 'carol-password'), 'address');
    // Tokens still work while Basic auth is refused.
    expect((await harness.api('carol', 'GET', '/user')).status).toBe(200);

    await new Promise((r) => setTimeout(r, wait * 1000 + 300));
    const created = await createToken('alice', 'alice-password');
    expect(created.status).toBe(201);
    expect(created.body.sha1).toMatch(/^[0-9a-f]{40}$/);
    expect((await createToken('bob', 'bob-password')).status).toBe(201);
  }, 30_000 + WINDOW_SECONDS * 1000);

  it('checks no more than the limit of a burst of 100 attempts, the right password among them, and answers none with 5xx', async () => {
    const from = '203.0.113.50';
    const RIGHT = 50;
    const answers = await Promise.all(
      // Each a guess of its own: attempts sending one password for one account share their place and their check.
      Array.from({ length: 100 }, (_, i) => createToken('dave', i === RIGHT ? 'dave-password' : `wrong-password-${i}`, from)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => ![201, 401, 429].includes(s))).toEqual([]);
    expect([201, 429]).toContain(statuses[RIGHT]);
    // Each 401 is a password checked and found wrong: no more than the account's limit of three.
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBeLessThanOrEqual(3);
    for (const a of answers.filter((r) => r.status === 429)) expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The address counted exactly those failures: it has five less them left, then it is refused.
    for (let i = checked; i < 5; i += 1) expect((await createToken('erin', 'wrong-password', from)).status).toBe(401);
    expectThrottled(await createToken('erin', 'erin-password', from), 'address');
  }, 30_000);

  it('a burst of 40 wrong passwords for one account checks exactly its limit; then its right password is 429 from anywhere', async () => {
    const statuses = (
      await Promise.all(Array.from({ length: 40 }, (_, i) => createToken('frank', `wrong-password-${i}`, '203.0.113.51')))
    ).map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(37);
    expectThrottled(await createToken('frank', 'frank-password', '203.0.113.52'), 'account');
  }, 30_000);
});
