import { bootTestPlatform, type TestPlatform } from './harness';

// Few sign-ups per address, so the test reaches the limit.
const MAX_SIGNUPS = 7;

describe('sign-up honours the site settings', () => {
  let harness: TestPlatform;
  const signUp = (username: string, email = `${username}@example.com`, password = 'signup-password') =>
    harness.api(undefined, 'POST', '/user/signup', { username, email, password });
  const setRegistration = (disable: boolean) =>
    harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: disable });

  beforeAll(async () => {
    harness = await bootTestPlatform({ SIGNUP_MAX_PER_ADDRESS: String(MAX_SIGNUPS), SIGNUP_WINDOW: '10m' });
  }, 120_000);
  afterAll(() => harness?.stop());

  it('follows the toggle and the allowed domains from the very next request, validates as admin creation, and limits sign-ups per address', async () => {
    // 1: registration disabled.
    expect((await setRegistration(true)).status).toBe(200);
    const refused = await signUp('nina');
    expect(refused).toMatchObject({ status: 403, body: { message: 'registration is disabled on this site' } });
    expect((await harness.api('root', 'GET', '/users/nina')).status).toBe(404);

    // 2: enabled again; the new user is signed in by the answer's cookie.
    expect((await setRegistration(false)).status).toBe(200);
    const made = await signUp('nina');
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ user: { login: 'nina', is_admin: false }, session: { current: true }, csrf_token: expect.any(String) });
    const cookie = made.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^platform_session=.*HttpOnly.*SameSite=Strict/);
    const me = await harness.api(undefined, 'GET', '/user', undefined, { cookie: cookie.split(';')[0] });
    expect(me).toMatchObject({ status: 200, body: { login: 'nina', email: 'nina@example.com' } });

    // 3, 4: the validation and conflicts of admin creation.
    expect(await signUp('nina', 'other@example.com')).toMatchObject({ status: 409 });
    const invalid = await signUp('bad name', 'not-an-email', 'short');
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toContain('username');
    expect(invalid.body.message).toContain('password');

    // 5, 6: with allowed domains, only their emails.
    expect((await harness.api('root', 'POST', '/allowed-domains?org=platform-admin', { name: 'corp.example' })).status).toBe(200);
    const outside = await signUp('omar', 'omar@example.com');
    expect(outside).toMatchObject({ status: 403, body: { message: 'sign-up is open to email addresses of corp.example only' } });
    expect((await signUp('omar', 'omar@CORP.example')).status).toBe(201);

    // 7 then 8: the address has made its sign-ups for this window.
    expect((await signUp('pia', 'pia@corp.example')).status).toBe(201);
    const limited = await signUp('quinn', 'quinn@corp.example');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/^too many sign-ups from this address; try again in \d+ s$/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await harness.api('root', 'GET', '/users/quinn')).status).toBe(404);
  }, 60_000);
});
