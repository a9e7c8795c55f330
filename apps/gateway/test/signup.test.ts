import { ConflictError, NotAllowedError, NotAuthenticatedError, NotFoundError, TooManyRequestsError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Sign-up and verified addresses over HTTP (docs/authentication.md): the sign-up row answers the new account and,
// when orgs-teams started a session, signs it in with the session cookie; orgs-teams' refusals reach the client as
// they were made; the ways to ask for a new mail, and the page a mailed link opens. A stand-in orgs-teams answers; its
// own rules: apps/orgs-teams/test/signup.int.test.ts and external-identities.int.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({
  id: 1,
  login: 'root',
  active: true,
  isAdmin: true,
  email: 'root@example.com',
  emailVerified: true,
});
const NINA = orgsTeamsV1.User.fromPartial({ id: 7, login: 'nina', active: true, email: 'nina@example.com', emailVerified: false });
const OMAR = orgsTeamsV1.User.fromPartial({ id: 8, login: 'omar', active: true, email: 'omar@CORP.example', emailVerified: false });
const USERS = [ROOT, NINA, OMAR];
const SECRET = 's'.repeat(43);

describe('sign-up and verified addresses at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    const session = orgsTeamsV1.SessionInfo.fromPartial({ id: 3, maxExpiresUnix: Math.floor(Date.now() / 1000) + 3600 });
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
          authenticateSession: async ({ secret }) => {
            if (secret !== SECRET) throw new NotAuthenticatedError('invalid session');
            return { user: NINA, session };
          },
          authenticateBasic: async ({ username }) => {
            throw new NotAllowedError(
              `your e-mail address ${username}@CORP.example is not verified yet: open the link mailed to it, or ask for a new mail`,
            );
          },
          signUp: async ({ username, email }) => {
            if (username === 'nina') return { user: NINA, session: { secret: SECRET, session, user: NINA } };
            if (username === 'omar') return { user: OMAR };
            if (username === 'taken') throw new ConflictError('user taken already exists');
            if (username === 'quinn') throw new TooManyRequestsError('too many sign-ups from this address; try again in 590 s', 590);
            throw new NotAllowedError(`sign-up is open to email addresses of corp.example only (not ${email})`);
          },
          getUser: async ({ login }) => {
            const user = USERS.find((u) => u.login === login);
            if (!user) throw new NotFoundError(`user ${login} does not exist`);
            return user;
          },
          searchUsers: async () => ({ users: [NINA], total: 1 }),
          sendVerificationMail: async ({ userId }) => {
            if (userId === ROOT.id) throw new ConflictError('your e-mail address is verified already');
            return {};
          },
          verifyEmail: async ({ token }) => {
            if (token !== 'good') throw new NotAllowedError('this verification link is not valid any more: ask for a new mail');
            return OMAR;
          },
        },
      },
      authz: {
        authz: { checkPermission: async ({ userId }) => ({ allowed: userId === ROOT.id, dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  };
  const signUp = (username: string, email = `${username}@example.com`) =>
    call('POST', '/user/signup', { username, email, password: 'signup-password' }, { 'x-forwarded-for': '203.0.113.7' });

  it('signs the new account in by the session cookie, and sends orgs-teams what it was given', async () => {
    const made = await signUp('nina');
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      user: { login: 'nina', is_admin: false },
      session: { current: true },
      csrf_token: expect.any(String),
    });
    const cookie = made.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^platform_session=.*HttpOnly.*SameSite=Strict/);
    expect(backends.orgsTeams.callsTo('identity', 'signUp').at(-1)).toMatchObject({
      username: 'nina',
      email: 'nina@example.com',
      password: 'signup-password',
      address: expect.any(String),
    });
    const me = await call('GET', '/user', undefined, { cookie: cookie.split(';')[0] });
    expect(me).toMatchObject({ status: 200, body: { login: 'nina', email: 'nina@example.com', email_verified: false } });
  });

  it('answers no session and sets no cookie when orgs-teams started none (an allowed domain, until the address is verified)', async () => {
    const made = await signUp('omar', 'omar@CORP.example');
    expect(made).toMatchObject({ status: 201, body: { user: { login: 'omar' }, session: null, csrf_token: null } });
    expect(made.headers.get('set-cookie')).toBeNull();
    // Its password does not sign it in meanwhile: orgs-teams' 403 is the answer, on a Basic row too.
    const refused = await call(
      'POST',
      '/users/omar/tokens',
      { name: 'cli' },
      { authorization: `Basic ${Buffer.from('omar:signup-password').toString('base64')}` },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(
      /^your e-mail address omar@CORP\.example is not verified yet: open the link mailed to it, or ask for a new mail/,
    );
  });

  it("answers orgs-teams' refusals as they were made: 403 outside the domains, 409 taken, 429 with Retry-After", async () => {
    expect(await signUp('outsider')).toMatchObject({
      status: 403,
      body: { message: expect.stringMatching(/^sign-up is open to email addresses of corp\.example only/) },
    });
    expect((await signUp('taken')).status).toBe(409);
    const limited = await signUp('quinn');
    expect(limited).toMatchObject({ status: 429, body: { message: 'too many sign-ups from this address; try again in 590 s' } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('asks for a new mail anonymously by login, signed in for the caller, and as a site admin for a user by name', async () => {
    const asked = () => backends.orgsTeams.callsTo('identity', 'sendVerificationMail').map((r) => [r.userId, r.login]);
    backends.orgsTeams.reset();
    expect((await call('POST', '/user/verification-mail', { login: 'nobody-at-all' })).status).toBe(204);
    expect((await call('POST', '/user/verification-mail', {}, { authorization: 'token root' })).status).toBe(409);
    expect((await call('POST', '/admin/users/nina/verification-mail', undefined, { authorization: 'token root' })).status).toBe(204);
    expect((await call('POST', '/admin/users/nobody-at-all/verification-mail', undefined, { authorization: 'token root' })).status).toBe(
      404,
    );
    expect((await call('POST', '/admin/users/nina/verification-mail', undefined, { authorization: 'token nina' })).status).toBe(403);
    expect(asked()).toEqual(
      expect.arrayContaining([
        [0, 'nobody-at-all'],
        [ROOT.id, ''],
        [NINA.id, ''],
      ]),
    );
    expect(asked().filter(([userId]) => userId === NINA.id)).toHaveLength(1);
  });

  it('opens a page saying the address is verified, or why the link is not valid any more', async () => {
    const followed = await call('GET', '/user/email-verification?code=good');
    expect(followed.status).toBe(200);
    expect(followed.text).toContain('omar@CORP.example is verified');
    const stale = await call('GET', '/user/email-verification?code=replaced');
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('not valid any more');
  });

  it('shows a site admin whether an address is verified', async () => {
    const listed = await call('GET', '/admin/users?q=nina', undefined, { authorization: 'token root' });
    expect(listed.body).toEqual([expect.objectContaining({ login: 'nina', email_verified: false })]);
  });
});
