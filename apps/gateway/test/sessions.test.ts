import { randomBytes } from 'node:crypto';
import { NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { orgsTeamsSettingsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The console's sessions at the edge (docs/authentication.md, "Console sessions"): a password sign-in answered with an
// HttpOnly, SameSite=Strict cookie on /api/v1 (never Secure over plain http) that page scripts never see, the secret in
// the cookie only; the cookie signs requests in, and one that changes something also needs the session's
// X-CSRF-Token; sessions listed with the current one marked, ended by id or by signing out (the cookie cleared); a dead
// cookie on a public route is no caller. Against a stand-in orgs-teams keeping sessions in memory; orgs-teams' own
// rules (which changes end which sessions, idle and absolute ends): apps/orgs-teams/test/sessions.int.test.ts.

const MAX_SECONDS = 9;
const USERS: Record<string, orgsTeamsV1.User> = {
  alice: orgsTeamsV1.User.fromPartial({ id: 1, login: 'alice', active: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 2, login: 'bob', active: true }),
  erin: orgsTeamsV1.User.fromPartial({ id: 3, login: 'erin', active: true, mustChangePassword: true }),
};

describe('console sessions at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** The sessions the stand-in keeps, by secret. */
  const sessions = new Map<string, { id: number; user: orgsTeamsV1.User; userAgent: string }>();
  let nextId = 1;
  const info = (s: { id: number; userAgent: string }) =>
    orgsTeamsV1.SessionInfo.fromPartial({
      id: s.id,
      userAgent: s.userAgent,
      address: '127.0.0.1',
      createdUnix: Math.floor(Date.now() / 1000),
      lastUsedUnix: Math.floor(Date.now() / 1000),
      expiresUnix: Math.floor(Date.now() / 1000) + 4,
      maxExpiresUnix: Math.floor(Date.now() / 1000) + MAX_SECONDS,
    });

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
          authenticateBasic: async ({ username, password }) => {
            if (!USERS[username] || password !== `${username}-password`) throw new NotAuthenticatedError('wrong username or password');
            return { user: USERS[username], tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
          },
          createSession: async ({ userId, userAgent }) => {
            const user = Object.values(USERS).find((u) => u.id === userId)!;
            const secret = randomBytes(32).toString('base64url');
            const kept = { id: nextId++, user, userAgent };
            sessions.set(secret, kept);
            return { secret, session: info(kept), user };
          },
          authenticateSession: async ({ secret }) => {
            const kept = sessions.get(secret);
            if (!kept) throw new NotAuthenticatedError('invalid session');
            return { user: kept.user, session: info(kept) };
          },
          listSessions: async ({ userId }) => ({ sessions: [...sessions.values()].filter((s) => s.user.id === userId).map(info) }),
          deleteSession: async ({ userId, id }) => {
            const entry = [...sessions.entries()].find(([, s]) => s.id === id && s.user.id === userId);
            if (!entry) throw new NotFoundError(`session ${id} does not exist`);
            sessions.delete(entry[0]);
            return {};
          },
          editUserSettings: async ({ userId, fullName }) => ({
            ...Object.values(USERS).find((u) => u.id === userId)!,
            fullName: fullName ?? '',
          }),
          changePassword: async () => ({}),
        },
        siteSettings: { getBranding: async () => orgsTeamsSettingsV1.Branding.fromPartial({ appName: 'Platform', etag: '"b"' }) },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  type Browser = { cookie: string; csrf: string; id: number };
  const request = async (method: string, path: string, headers: Record<string, string>, json?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const signIn = async (login: string, password = `${login}-password`) => {
    const res = await request('POST', '/user/session', {
      authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`,
      'user-agent': 'SessionsTest/1.0',
    });
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    return { res, browser: { cookie, csrf: res.body?.csrf_token, id: res.body?.session?.id } as Browser };
  };
  /** A request as the console makes it: the cookie, and the CSRF token unless told not to send it. */
  const asBrowser = (b: Browser, method: string, path: string, json?: unknown, opts: { csrf?: boolean } = {}) =>
    request(method, path, { cookie: b.cookie, ...(opts.csrf === false ? {} : { 'x-csrf-token': b.csrf }) }, json);
  const asToken = (login: string, method: string, path: string, json?: unknown) =>
    request(method, path, { authorization: `token ${login}` }, json);

  it('signs in with the password into an HttpOnly, SameSite=Strict cookie on /api/v1, the secret never in the body', async () => {
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
    expect(JSON.stringify(res.body)).not.toContain(browser.cookie.split('=')[1]);
    expect(backends.orgsTeams.callsTo('identity', 'createSession').at(-1)).toMatchObject({
      userId: USERS.alice.id,
      userAgent: 'SessionsTest/1.0',
    });

    expect(await asBrowser(browser, 'GET', '/user')).toMatchObject({ status: 200, body: { login: 'alice' } });
    const listed = await asBrowser(browser, 'GET', '/user/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ id: browser.id, current: true, user_agent: 'SessionsTest/1.0', address: expect.any(String) }),
    ]);
    // After a reload the console asks for its CSRF token again.
    expect(await asBrowser(browser, 'GET', '/user/session')).toMatchObject({ status: 200, body: { csrf_token: browser.csrf } });
  });

  it('answers a wrong password 401 without a cookie', async () => {
    const { res } = await signIn('alice', 'wrong-password');
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a change signed in by the cookie without the CSRF token or with a wrong one (403), and takes it with the token', async () => {
    const { browser } = await signIn('bob');
    backends.orgsTeams.reset();
    const refused = await asBrowser(browser, 'PATCH', '/user/settings', { full_name: 'Forged' }, { csrf: false });
    expect([refused.status, refused.body.message]).toEqual([403, expect.stringContaining('X-CSRF-Token')]);
    const wrong = await request(
      'PATCH',
      '/user/settings',
      { cookie: browser.cookie, 'x-csrf-token': 'x'.repeat(43) },
      { full_name: 'Forged' },
    );
    expect(wrong.status).toBe(403);
    expect(backends.orgsTeams.callsTo('identity', 'editUserSettings')).toEqual([]);
    expect(await asBrowser(browser, 'PATCH', '/user/settings', { full_name: 'Bob B' })).toMatchObject({
      status: 200,
      body: { full_name: 'Bob B' },
    });
    // Tokens are no ambient credential: they need no CSRF token.
    expect((await asToken('bob', 'PATCH', '/user/settings', { full_name: 'Bob' })).status).toBe(200);
  });

  it('keeps the session a password change is made in, and tells orgs-teams so', async () => {
    const { browser } = await signIn('alice');
    expect(
      (await asBrowser(browser, 'POST', '/user/password', { old_password: 'a-password', new_password: 'a-new-password' })).status,
    ).toBe(204);
    expect(backends.orgsTeams.callsTo('identity', 'changePassword').at(-1)).toMatchObject({
      userId: USERS.alice.id,
      keepSessionId: browser.id,
    });
  });

  it('ends a session by id on its next request; signing out ends this one and clears the cookie', async () => {
    sessions.clear();
    const { browser: first } = await signIn('alice');
    const { browser: second } = await signIn('alice');
    const listed = await asBrowser(second, 'GET', '/user/sessions');
    expect(listed.body.map((s: { id: number; current: boolean }) => [s.id, s.current]).sort()).toEqual(
      [
        [first.id, false],
        [second.id, true],
      ].sort(),
    );
    expect((await asBrowser(second, 'DELETE', `/user/sessions/${first.id}`)).status).toBe(204);
    expect(await asBrowser(first, 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'invalid session' } });
    expect((await asBrowser(second, 'DELETE', `/user/sessions/${first.id}`)).status).toBe(404);

    const out = await asBrowser(second, 'DELETE', '/user/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^platform_session=; .*Max-Age=0/);
    expect((await asBrowser(second, 'GET', '/user')).status).toBe(401);
    expect((await asBrowser(second, 'GET', '/user/sessions')).status).toBe(401);
    // A public route takes a dead cookie as no caller, so the sign-in screen still loads.
    expect((await asBrowser(second, 'GET', '/branding')).status).toBe(200);
    // A token cannot sign out a session it is not.
    expect((await asToken('alice', 'DELETE', '/user/session')).status).toBe(404);
  });

  it('lets a user who must change its password sign in and change it, and nothing else until then', async () => {
    const { res, browser } = await signIn('erin');
    expect(res.status).toBe(201);
    expect((await asBrowser(browser, 'GET', '/user/sessions')).status).toBe(403);
    expect(
      (await asBrowser(browser, 'POST', '/user/password', { old_password: 'erin-password', new_password: 'erin-new-password' })).status,
    ).toBe(204);
  });
});
