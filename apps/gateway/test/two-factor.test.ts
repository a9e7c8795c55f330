import {
  ConflictError,
  NotAllowedError,
  NotAuthenticatedError,
  NotFoundError,
  TooManyRequestsError,
  ValidationError,
} from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The second factor at the edge (docs/authentication.md, "Second factor (TOTP)"): enrolment answered with the
// otpauth URI as a QR code, X-Gitea-OTP handed to orgs-teams with Basic credentials (a token or the console's sign-in),
// the password asked again (422 without it, before orgs-teams) to renew codes or turn the factor off, orgs-teams'
// refusals passed on (401, 403, 404, 409, 422, 429 with Retry-After), a site admin's reset, revocation of every
// credential and the site's requirement for site admins only, and a password sign-in that must enrol kept to enrolment.
// Against a stand-in orgs-teams; the codes, their single use, the lockout and the requirement:
// apps/orgs-teams/test/two-factor.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  alice: orgsTeamsV1.User.fromPartial({ id: 2, login: 'alice', active: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 3, login: 'bob', active: true }),
  frank: orgsTeamsV1.User.fromPartial({ id: 4, login: 'frank', active: true }),
};
const OTPAUTH = 'otpauth://totp/Platform:alice?issuer=Platform&secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30';

describe('the second factor at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  const audited: orgsTeamsV1.AuditEvent[] = [];
  /** frank must enrol until he confirms a code. */
  let frankEnrolled = false;
  const withFlags = (user: orgsTeamsV1.User) => ({ ...user, mustEnrollTwoFactor: user.login === 'frank' && !frankEnrolled });

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
          // bob has a second factor: his code is 123456.
          authenticateBasic: async ({ username, password, otp }) => {
            if (!USERS[username] || password !== `${username}-password`) throw new NotAuthenticatedError('wrong username or password');
            if (username === 'bob' && !otp)
              throw new NotAuthenticatedError('a two-factor authentication code is required: send it in the X-Gitea-OTP header');
            if (username === 'bob' && otp !== '123456') throw new NotAuthenticatedError('invalid two-factor authentication code');
            return { user: withFlags(USERS[username]), tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
          },
          createSession: async ({ userId }) => {
            const user = Object.values(USERS).find((u) => u.id === userId)!;
            const session = orgsTeamsV1.SessionInfo.fromPartial({ id: userId, maxExpiresUnix: Math.floor(Date.now() / 1000) + 3600 });
            return { secret: `${user.login.padEnd(43, 'x')}`, session, user: withFlags(user) };
          },
          authenticateSession: async ({ secret }) => {
            const user = USERS[secret.replace(/x+$/, '')];
            if (!user) throw new NotAuthenticatedError('invalid session');
            return { user: withFlags(user), session: orgsTeamsV1.SessionInfo.fromPartial({ id: user.id }) };
          },
          createToken: async ({ name }) => ({ id: 9, name, sha1: 'f'.repeat(40), tokenLastEight: 'ffffffff', accessScopes: ['all'] }),
          getTwoFactor: async ({ userId }) => ({
            enabled: userId === USERS.bob.id,
            recoveryCodesLeft: 9,
            required: userId === USERS.frank.id,
          }),
          beginTwoFactorEnrolment: async ({ userId }) => {
            if (userId === USERS.bob.id)
              throw new ConflictError('two-factor authentication is already on; turn it off first to enrol again');
            return { secret: 'JBSWY3DPEHPK3PXP', otpauthUri: OTPAUTH };
          },
          confirmTwoFactor: async ({ userId, code }) => {
            if (code !== '123456')
              throw new ValidationError('code: not a current code of the new secret', [{ field: 'code', description: 'wrong code' }]);
            if (userId === USERS.frank.id) frankEnrolled = true;
            return { codes: Array.from({ length: 10 }, (_, i) => `AAAA-BBBB-CCCC-DDD${i}`) };
          },
          regenerateRecoveryCodes: async ({ password }) => {
            if (password === 'locked')
              throw new TooManyRequestsError('too many failed sign-in attempts for this account; try again in 30 s', 30);
            return { codes: ['EEEE-FFFF-GGGG-HHHH'] };
          },
          disableTwoFactor: async ({ userId, password }) => {
            if (password !== 'bob-password') throw new NotAllowedError('the password is wrong');
            if (userId !== USERS.bob.id) throw new NotFoundError('two-factor authentication is not on');
            return {};
          },
          resetTwoFactor: async ({ login }) => {
            if (!USERS[login]) throw new NotFoundError(`user ${login} does not exist`);
            return {};
          },
          revokeUserCredentials: async ({ login }) => {
            if (!USERS[login]) throw new NotFoundError(`user ${login} does not exist`);
            return { tokens: 2, sessions: 1 };
          },
          getTwoFactorRequirement: async () => ({ requirement: 'all' }),
          setTwoFactorRequirement: async (req) => req,
        },
        organizations: { listUserOrgs: async () => ({ orgs: [], total: 0 }) },
        audit: {
          recordAuditEvent: async (event) => {
            audited.push(event);
            return {};
          },
          recordAuditEvents: async ({ events }) => {
            audited.push(...events);
            return {};
          },
        },
      },
      authz: {
        authz: { checkPermission: async ({ userId }) => ({ allowed: userId === USERS.root.id, dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  beforeEach(() => backends.reset());
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const request = async (method: string, path: string, headers: Record<string, string>, json?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const api = (who: string, method: string, path: string, json?: unknown) => request(method, path, { authorization: `token ${who}` }, json);
  const basic = (login: string, otp?: string) => ({
    authorization: `Basic ${Buffer.from(`${login}:${login}-password`).toString('base64')}`,
    ...(otp === undefined ? {} : { 'x-gitea-otp': otp }),
  });
  const makeToken = (login: string, otp?: string) => request('POST', `/users/${login}/tokens`, basic(login, otp), { name: 'cli' });
  const signIn = (login: string, otp?: string) => request('POST', '/user/session', basic(login, otp));
  const otpAsked = () => backends.orgsTeams.callsTo('identity', 'authenticateBasic').map((r) => r.otp);

  it('enrols: the otpauth URI with a QR code of it, then a first code answered with the recovery codes; 409 and 422 passed on', async () => {
    expect(await api('alice', 'GET', '/user/two-factor')).toMatchObject({
      status: 200,
      body: { enabled: false, recovery_codes_left: 9, required: false },
    });
    const begun = await api('alice', 'POST', '/user/two-factor/enrolment');
    expect(begun).toMatchObject({ status: 201, body: { secret: 'JBSWY3DPEHPK3PXP', otpauth_uri: OTPAUTH } });
    expect(begun.body.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect((await api('alice', 'POST', '/user/two-factor', { code: '000000' })).status).toBe(422);
    const confirmed = await api('alice', 'POST', '/user/two-factor', { code: '123456' });
    expect(confirmed.status).toBe(201);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect((await api('bob', 'POST', '/user/two-factor/enrolment')).status).toBe(409);
  });

  it('hands X-Gitea-OTP to orgs-teams with Basic credentials, making a token or a session; its 401 passed on without a cookie', async () => {
    const missing = await makeToken('bob');
    expect([missing.status, missing.body.message]).toEqual([
      401,
      expect.stringMatching(/two-factor authentication code is required.*X-Gitea-OTP/),
    ]);
    expect(await makeToken('bob', '654321')).toMatchObject({ status: 401, body: { message: 'invalid two-factor authentication code' } });
    expect((await makeToken('bob', '123456')).status).toBe(201);
    const asked = await signIn('bob');
    expect([asked.status, asked.headers.get('set-cookie')]).toEqual([401, null]);
    expect(asked.body.message).toContain('X-Gitea-OTP');
    const signedIn = await signIn('bob', '123456');
    expect(signedIn.status).toBe(201);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^platform_session=/);
    expect(otpAsked()).toEqual(['', '654321', '123456', '', '123456']);
    // Tokens are not a password sign-in: they need no code.
    expect((await api('bob', 'GET', '/user')).status).toBe(200);
  });

  it('asks for the password again to renew codes or turn the factor off (422 without it, before orgs-teams); passes 403, 404 and 429 on', async () => {
    expect((await api('bob', 'POST', '/user/two-factor/recovery-codes', { code: '123456' })).status).toBe(422);
    expect((await api('bob', 'POST', '/user/two-factor/disable', { code: 'AAAA-BBBB' })).status).toBe(422);
    expect(backends.orgsTeams.callsTo('identity', 'regenerateRecoveryCodes')).toEqual([]);
    expect(backends.orgsTeams.callsTo('identity', 'disableTwoFactor')).toEqual([]);
    expect(await api('bob', 'POST', '/user/two-factor/disable', { password: 'not-it', code: 'AAAA-BBBB' })).toMatchObject({
      status: 403,
      body: { message: 'the password is wrong' },
    });
    expect(await api('bob', 'POST', '/user/two-factor/recovery-codes', { password: 'bob-password', code: '123456' })).toMatchObject({
      status: 201,
      body: { recovery_codes: ['EEEE-FFFF-GGGG-HHHH'] },
    });
    expect(backends.orgsTeams.callsTo('identity', 'regenerateRecoveryCodes')).toEqual([
      { userId: USERS.bob.id, password: 'bob-password', code: '123456' },
    ]);
    const locked = await api('bob', 'POST', '/user/two-factor/recovery-codes', { password: 'locked', code: '123456' });
    expect([locked.status, locked.body.message]).toEqual([429, 'too many failed sign-in attempts for this account; try again in 30 s']);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api('bob', 'POST', '/user/two-factor/disable', { password: 'bob-password', code: 'AAAA-BBBB' })).status).toBe(204);
    expect((await api('alice', 'POST', '/user/two-factor/disable', { password: 'bob-password', code: '123456' })).status).toBe(404);
  });

  it("lets only a site admin reset a user's second factor and revoke every credential of it, which the audit trail records", async () => {
    for (const path of ['/admin/users/bob/two-factor', '/admin/users/bob/credentials']) {
      expect((await api('alice', 'DELETE', path)).status).toBe(403);
      expect((await api('root', 'DELETE', path.replace('bob', 'nobody-here'))).status).toBe(404);
    }
    expect(backends.orgsTeams.callsTo('identity', 'resetTwoFactor')).toEqual([{ login: 'nobody-here' }]);
    expect((await api('root', 'DELETE', '/admin/users/bob/two-factor')).status).toBe(204);
    expect(await api('root', 'DELETE', '/admin/users/bob/credentials')).toMatchObject({ status: 200, body: { tokens: 2, sessions: 1 } });
    await eventually(async () => audited.some((e) => e.target.includes('bob/credentials') && e.actorLogin === 'root'), 5_000);
  });

  it("sets the site's requirement for site admins only: 403 to others, 422 for another value", async () => {
    expect((await api('alice', 'PUT', '/admin/two-factor', { requirement: 'all' })).status).toBe(403);
    expect((await api('root', 'PUT', '/admin/two-factor', { requirement: 'sometimes' })).status).toBe(422);
    expect(backends.orgsTeams.callsTo('identity', 'setTwoFactorRequirement')).toEqual([]);
    expect(await api('root', 'PUT', '/admin/two-factor', { requirement: 'all' })).toMatchObject({
      status: 200,
      body: { requirement: 'all' },
    });
    expect(await api('root', 'GET', '/admin/two-factor')).toMatchObject({ status: 200, body: { requirement: 'all' } });
  });

  it('keeps a password sign-in that must enrol to its session and enrolment: no token by Basic credentials', async () => {
    const refused = await makeToken('frank');
    expect([refused.status, refused.body.message]).toEqual([403, expect.stringMatching(/requires two-factor authentication/)]);
    const session = await signIn('frank');
    expect(session.status).toBe(201);
    const cookie = session.headers.get('set-cookie')!.split(';')[0];
    const browser = (method: string, path: string, json?: unknown) =>
      request(method, path, { cookie, 'x-csrf-token': session.body.csrf_token }, json);
    expect(await browser('GET', '/user/two-factor')).toMatchObject({ status: 200, body: { enabled: false, required: true } });
    expect((await browser('GET', '/user/orgs')).status).toBe(403);
    expect((await browser('POST', '/user/two-factor/enrolment')).status).toBe(201);
    expect((await browser('POST', '/user/two-factor', { code: '123456' })).status).toBe(201);
    expect((await browser('GET', '/user/orgs')).status).toBe(200);
  });
});
