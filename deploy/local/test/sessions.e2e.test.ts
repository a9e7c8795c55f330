import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

// Short lifetimes, so the test can wait a session out: idle 4 s, at most 9 s after sign-in.
const IDLE_SECONDS = 4;
const MAX_SECONDS = 9;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A browser's view of a session: its cookie and the CSRF token the sign-in answered. */
interface Browser {
  cookie: string;
  csrf: string;
  id: number;
}

describe('console sessions', () => {
  let harness: TestPlatform;

  const signIn = async (login: string, password = `${login}-password`): Promise<{ res: Reply; browser: Browser }> => {
    const res = await harness.api(undefined, 'POST', '/user/session', undefined, {
      authorization: basic(login, password),
      'user-agent': 'SessionsTest/1.0',
    });
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    return { res, browser: { cookie, csrf: res.body?.csrf_token, id: res.body?.session?.id } };
  };
  /** A request as the console makes it: the cookie, and the CSRF token unless told not to send it. */
  const asBrowser = (b: Browser, method: string, path: string, json?: unknown, opts: { csrf?: boolean } = {}) =>
    harness.api(undefined, method, path, json, { cookie: b.cookie, ...(opts.csrf === false ? {} : { 'x-csrf-token': b.csrf }) });

  beforeAll(async () => {
    harness = await bootTestPlatform({ SESSION_IDLE_TIMEOUT: `${IDLE_SECONDS}s`, SESSION_MAX_LIFETIME: String(MAX_SECONDS) });
    for (const login of ['alice', 'bob', 'carol', 'dave']) await harness.signUp(login);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('signs in with the password into an HttpOnly, SameSite=Strict cookie on /api/v1 that page scripts never see', async () => {
    const { res, browser } = await signIn('alice');
    expect(res.status).toBe(201);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^platform_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/api/v1');
    // Served over plain http here: a Secure cookie would not come back.
    expect(setCookie).not.toContain('Secure');
    expect(Number(/Max-Age=(\d+)/.exec(setCookie)?.[1])).toBeGreaterThan(MAX_SECONDS - 3);
    expect(res.body).toMatchObject({ user: { login: 'alice' }, session: { current: true, user_agent: 'SessionsTest/1.0' } });
    // The secret is in the cookie only, never in the body.
    expect(JSON.stringify(res.body)).not.toContain(browser.cookie.split('=')[1]);

    expect(await asBrowser(browser, 'GET', '/user')).toMatchObject({ status: 200, body: { login: 'alice' } });
    const listed = await asBrowser(browser, 'GET', '/user/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ id: browser.id, current: true, user_agent: 'SessionsTest/1.0', address: expect.any(String) })]);
    // After a reload the console asks for its CSRF token again.
    expect(await asBrowser(browser, 'GET', '/user/session')).toMatchObject({ status: 200, body: { csrf_token: browser.csrf } });
  });

  it('a password change ends every other session of the user and keeps the one it was made in; an admin’s new password ends them all', async () => {
    await harness.signUp('frank');
    const { browser: here } = await signIn('frank');
    const { browser: elsewhere } = await signIn('frank');
    const changed = await asBrowser(here, 'POST', '/user/password', { old_password: 'frank-password', new_password: 'frank-new-password' });
    expect(changed.status).toBe(204);
    expect((await asBrowser(here, 'GET', '/user')).status).toBe(200);
    expect((await asBrowser(elsewhere, 'GET', '/user')).status).toBe(401);

    const { browser: again } = await signIn('frank', 'frank-new-password');
    const reset = await harness.api('root', 'PATCH', '/admin/users/frank', { password: 'frank-third-password' });
    expect(reset.status).toBe(200);
    for (const b of [here, again]) expect((await asBrowser(b, 'GET', '/user')).status).toBe(401);
  });

  it('a wrong password is 401 and counted, and no cookie is set', async () => {
    const { res } = await signIn('alice', 'wrong-password');
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a change signed in by the cookie without the CSRF token (403) and takes it with the token', async () => {
    const { browser } = await signIn('bob');
    const refused = await asBrowser(browser, 'PATCH', '/user/settings', { full_name: 'Forged' }, { csrf: false });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('X-CSRF-Token');
    const wrong = await harness.api(undefined, 'PATCH', '/user/settings', { full_name: 'Forged' }, { cookie: browser.cookie, 'x-csrf-token': 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect((await harness.api('bob', 'GET', '/user/settings')).body.full_name).toBe('');
    const taken = await asBrowser(browser, 'PATCH', '/user/settings', { full_name: 'Bob B' });
    expect(taken).toMatchObject({ status: 200, body: { full_name: 'Bob B' } });
    // Tokens are no ambient credential: they need no CSRF token, as before.
    expect((await harness.api('bob', 'PATCH', '/user/settings', { full_name: 'Bob' })).status).toBe(200);
  });

  it('a revoked session is refused on the very next request; signing out ends the session and clears the cookie', async () => {
    const { browser: first } = await signIn('carol');
    const { browser: second } = await signIn('carol');
    const listed = await asBrowser(second, 'GET', '/user/sessions');
    expect(listed.body.map((s: { id: number; current: boolean }) => [s.id, s.current]).sort()).toEqual(
      [
        [first.id, false],
        [second.id, true],
      ].sort(),
    );
    expect((await asBrowser(first, 'GET', '/user')).status).toBe(200);
    expect((await asBrowser(second, 'DELETE', `/user/sessions/${first.id}`)).status).toBe(204);
    expect(await asBrowser(first, 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'invalid session' } });
    expect((await asBrowser(second, 'DELETE', `/user/sessions/${first.id}`)).status).toBe(404);
    // Another user's session is not found either.
    const { browser: bobs } = await signIn('bob');
    expect((await asBrowser(second, 'DELETE', `/user/sessions/${bobs.id}`)).status).toBe(404);
    expect((await asBrowser(bobs, 'GET', '/user')).status).toBe(200);

    const out = await asBrowser(second, 'DELETE', '/user/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^platform_session=; .*Max-Age=0/);
    expect((await asBrowser(second, 'GET', '/user')).status).toBe(401);
    expect(await asBrowser(second, 'GET', '/user/sessions')).toMatchObject({ status: 401 });
    // A public route takes a dead cookie as no caller, so the sign-in screen still loads.
    expect((await asBrowser(second, 'GET', '/branding')).status).toBe(200);
    // A token cannot sign out a session it is not.
    expect((await harness.api('carol', 'DELETE', '/user/session')).status).toBe(404);
  });

  it('a user made inactive loses its sessions at once, and for good', async () => {
    const { browser } = await signIn('dave');
    expect((await asBrowser(browser, 'GET', '/user')).status).toBe(200);
    expect((await harness.api('root', 'PATCH', '/admin/users/dave', { active: false })).status).toBe(200);
    expect(await asBrowser(browser, 'GET', '/user')).toMatchObject({ status: 401 });
    expect((await harness.api('root', 'PATCH', '/admin/users/dave', { active: true })).status).toBe(200);
    expect((await asBrowser(browser, 'GET', '/user')).status).toBe(401);
    expect((await harness.api('dave', 'GET', '/user/sessions')).body).toEqual([]);
  });

  it('a user who must change its password may sign in and change it, and nothing else until then', async () => {
    await harness.api('root', 'POST', '/admin/users', { username: 'erin', email: 'erin@example.com', password: 'erin-password', must_change_password: true });
    const { res, browser } = await signIn('erin');
    expect(res.status).toBe(201);
    expect((await asBrowser(browser, 'GET', '/user/sessions')).status).toBe(403);
    expect((await asBrowser(browser, 'POST', '/user/password', { old_password: 'erin-password', new_password: 'erin-new-password' })).status).toBe(204);
    expect((await asBrowser(browser, 'GET', '/user/sessions')).status).toBe(200);
  });

  it('ends a session left idle, and one past its lifetime however much it is used', async () => {
    const { browser: idle } = await signIn('alice');
    const { browser: busy } = await signIn('alice');
    const started = Date.now();
    // Used every second, the busy one outlives the idle timeout...
    while (Date.now() - started < (IDLE_SECONDS + 1) * 1000) {
      expect((await asBrowser(busy, 'GET', '/user')).status).toBe(200);
      await sleep(1000);
    }
    // ...which the unused one did not.
    expect(await asBrowser(idle, 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'session expired' } });
    while (Date.now() - started < (MAX_SECONDS - 1) * 1000) {
      expect((await asBrowser(busy, 'GET', '/user')).status).toBe(200);
      await sleep(1000);
    }
    await sleep(Math.max(0, MAX_SECONDS * 1000 - (Date.now() - started)) + 1500);
    expect(await asBrowser(busy, 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'session expired' } });
  }, 30_000);
});
