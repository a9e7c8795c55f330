import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

// Small limits and a short window, so the test can wait the window out.
const WINDOW_SECONDS = 6;

describe('password guessing on the Basic-auth routes is throttled', () => {
  let harness: TestPlatform;
  const createToken = (login: string, password: string): Promise<Reply> =>
    harness.api(undefined, 'POST', `/users/${login}/tokens`, { name: `t-${Math.random()}` }, { authorization: basic(login, password) });
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
    });
    for (const login of ['alice', 'bob', 'carol']) await harness.signUp(login);
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
  }, 30_000);
});
