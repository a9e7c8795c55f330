import { Secret, TOTP } from 'otpauth';
import { basic, bootTestPlatform, type TestPlatform } from './harness';

/** The code an authenticator app shows `steps` 30-second steps from now (the check takes one step either side). */
const codeOf = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

describe('TOTP second factor for local accounts', () => {
  let harness: TestPlatform;

  /** Enrols `login` through the API with its token; answers the secret and the recovery codes. */
  const enrol = async (login: string) => {
    const begun = await harness.api(login, 'POST', '/user/two-factor/enrolment');
    expect(begun.status).toBe(201);
    const confirmed = await harness.api(login, 'POST', '/user/two-factor', { code: codeOf(begun.body.secret) });
    expect(confirmed.status).toBe(201);
    return { secret: begun.body.secret as string, recovery: confirmed.body.recovery_codes as string[] };
  };
  const makeToken = (login: string, otp?: string, name = `t-${Math.random()}`) =>
    harness.api(undefined, 'POST', `/users/${login}/tokens`, { name }, {
      authorization: basic(login, `${login}-password`),
      ...(otp === undefined ? {} : { 'x-gitea-otp': otp }),
    });
  const signIn = (login: string, otp?: string) =>
    harness.api(undefined, 'POST', '/user/session', undefined, {
      authorization: basic(login, `${login}-password`),
      ...(otp === undefined ? {} : { 'x-gitea-otp': otp }),
    });

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const login of ['alice', 'bob', 'carol', 'dave']) await harness.signUp(login);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('enrols with a QR code of the otpauth URI, confirmed by a first code, and answers ten recovery codes', async () => {
    expect(await harness.api('alice', 'GET', '/user/two-factor')).toMatchObject({
      status: 200,
      body: { enabled: false, recovery_codes_left: 0, required: false },
    });
    const begun = await harness.api('alice', 'POST', '/user/two-factor/enrolment');
    expect(begun.status).toBe(201);
    expect(begun.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/.*alice\?/);
    expect(begun.body.otpauth_uri).toContain(`secret=${begun.body.secret}`);
    expect(begun.body.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    // Not on before a code of it was seen: Basic still needs no code.
    expect((await makeToken('alice')).status).toBe(201);

    const wrong = await harness.api('alice', 'POST', '/user/two-factor', { code: codeOf(begun.body.secret, 5) });
    expect(wrong.status).toBe(422);
    const confirmed = await harness.api('alice', 'POST', '/user/two-factor', { code: codeOf(begun.body.secret) });
    expect(confirmed.status).toBe(201);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);
    expect(await harness.api('alice', 'GET', '/user/two-factor')).toMatchObject({ body: { enabled: true, recovery_codes_left: 10 } });
    // Enrolling again while it is on is refused rather than silently replacing the secret.
    expect((await harness.api('alice', 'POST', '/user/two-factor/enrolment')).status).toBe(409);
  });

  it('Basic credentials of a TOTP user need X-Gitea-OTP: 401 saying so without it, a code taken once, a recovery code once', async () => {
    const { secret, recovery } = await enrol('bob');
    const missing = await makeToken('bob');
    expect(missing.status).toBe(401);
    expect(missing.body.message).toMatch(/two-factor authentication code is required.*X-Gitea-OTP/);
    const wrongCode = codeOf(secret, -10);
    expect(await makeToken('bob', wrongCode)).toMatchObject({ status: 401, body: { message: 'invalid two-factor authentication code' } });

    // The enrolment spent this step's code: the next step's (inside the window) signs in, once.
    const next = codeOf(secret, 1);
    expect((await makeToken('bob', next)).status).toBe(201);
    expect((await makeToken('bob', next)).status).toBe(401);

    // A recovery code stands in for a code, typed in any case, once.
    expect((await makeToken('bob', recovery[0].toLowerCase())).status).toBe(201);
    expect((await makeToken('bob', recovery[0])).status).toBe(401);
    expect(await harness.api('bob', 'GET', '/user/two-factor')).toMatchObject({ body: { recovery_codes_left: 9 } });

    // Tokens are not a password sign-in: bob's existing token keeps working without a code.
    expect((await harness.api('bob', 'GET', '/user')).status).toBe(200);
  });

  it("the console's session sign-in asks for the code and takes it in the same header", async () => {
    const { secret } = await enrol('carol');
    const asked = await signIn('carol');
    expect(asked.status).toBe(401);
    expect(asked.body.message).toContain('X-Gitea-OTP');
    expect(asked.headers.get('set-cookie')).toBeNull();
    const signedIn = await signIn('carol', codeOf(secret, 1));
    expect(signedIn.status).toBe(201);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^platform_session=/);
  });

  it('new recovery codes replace the old; turning it off takes the password and a code or a recovery code', async () => {
    const { secret, recovery } = await enrol('dave');
    const password = 'dave-password';
    // A token alone is not enough: without the password the body is refused, with a wrong one it is 403.
    expect((await harness.api('dave', 'POST', '/user/two-factor/recovery-codes', { code: codeOf(secret, 1) })).status).toBe(422);
    expect((await harness.api('dave', 'POST', '/user/two-factor/disable', { code: recovery[0] })).status).toBe(422);
    expect(await harness.api('dave', 'POST', '/user/two-factor/disable', { password: 'not-it', code: recovery[0] })).toMatchObject({
      status: 403,
      body: { message: 'the password is wrong' },
    });
    expect((await harness.api('dave', 'POST', '/user/two-factor/recovery-codes', { password, code: codeOf(secret, -10) })).status).toBe(422);
    const fresh = await harness.api('dave', 'POST', '/user/two-factor/recovery-codes', { password, code: codeOf(secret, 1) });
    expect(fresh.status).toBe(201);
    expect((await makeToken('dave', recovery[1])).status).toBe(401);
    const off = await harness.api('dave', 'POST', '/user/two-factor/disable', { password, code: fresh.body.recovery_codes[0] });
    expect(off.status).toBe(204);
    expect((await makeToken('dave')).status).toBe(201);
    expect((await harness.api('dave', 'POST', '/user/two-factor/disable', { password, code: '123456' })).status).toBe(404);
  });

  it('wrong codes given to turn it off or renew codes lock the account as wrong passwords do; then nothing is checked', async () => {
    await harness.signUp('ivan');
    const { secret } = await enrol('ivan');
    const password = 'ivan-password';
    const wrong = codeOf(secret, -10);
    // The account's limit is ten failed sign-ins (the default): wrong codes at both doors and a wrong password reach it.
    for (let i = 0; i < 5; i += 1)
      expect((await harness.api('ivan', 'POST', '/user/two-factor/disable', { password, code: wrong })).status).toBe(422);
    for (let i = 0; i < 4; i += 1)
      expect((await harness.api('ivan', 'POST', '/user/two-factor/recovery-codes', { password, code: wrong })).status).toBe(422);
    expect((await harness.api('ivan', 'POST', '/user/two-factor/disable', { password: 'not-it', code: wrong })).status).toBe(403);
    // Locked: the right password with a right code is refused at every door a code is taken, sign-in included.
    const refused = await harness.api('ivan', 'POST', '/user/two-factor/disable', { password, code: codeOf(secret, 1) });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/^too many failed sign-in attempts for this account; try again in \d+ s$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await harness.api('ivan', 'POST', '/user/two-factor/recovery-codes', { password, code: codeOf(secret, 1) })).status).toBe(429);
    expect((await makeToken('ivan', codeOf(secret, 1))).status).toBe(429);
    expect((await signIn('ivan', codeOf(secret, 1))).status).toBe(429);
    expect(await harness.api('ivan', 'GET', '/user/two-factor')).toMatchObject({ body: { enabled: true, recovery_codes_left: 10 } });
  });

  it("a site admin resets a user's second factor; nobody else may", async () => {
    await harness.signUp('erin');
    await enrol('erin');
    expect((await makeToken('erin')).status).toBe(401);
    expect((await harness.api('alice', 'DELETE', '/admin/users/erin/two-factor')).status).toBe(403);
    expect((await harness.api('root', 'DELETE', '/admin/users/nobody-here/two-factor')).status).toBe(404);
    expect((await harness.api('root', 'DELETE', '/admin/users/erin/two-factor')).status).toBe(204);
    expect((await makeToken('erin')).status).toBe(201);
    expect(await harness.api('erin', 'GET', '/user/two-factor')).toMatchObject({ body: { enabled: false, recovery_codes_left: 0 } });
  });

  it('a required second factor: a password sign-in without one may only enrol; "admins" covers site admins only', async () => {
    await harness.signUp('frank');
    expect((await harness.api('alice', 'PUT', '/admin/two-factor', { requirement: 'all' })).status).toBe(403);
    expect((await harness.api('root', 'PUT', '/admin/two-factor', { requirement: 'sometimes' })).status).toBe(422);
    expect(await harness.api('root', 'PUT', '/admin/two-factor', { requirement: 'all' })).toMatchObject({ status: 200, body: { requirement: 'all' } });
    expect(await harness.api('root', 'GET', '/admin/two-factor')).toMatchObject({ body: { requirement: 'all' } });
    try {
      // Basic: no token until enrolled.
      const refused = await makeToken('frank');
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/requires two-factor authentication/);
      // The console's session signs in, and may enrol and nothing else.
      const session = await signIn('frank');
      expect(session.status).toBe(201);
      const cookie = session.headers.get('set-cookie')!.split(';')[0];
      const browser = (method: string, path: string, json?: unknown) =>
        harness.api(undefined, method, path, json, { cookie, 'x-csrf-token': session.body.csrf_token });
      expect(await browser('GET', '/user/two-factor')).toMatchObject({ status: 200, body: { enabled: false, required: true } });
      expect((await browser('GET', '/user/orgs')).status).toBe(403);
      const begun = await browser('POST', '/user/two-factor/enrolment');
      expect(begun.status).toBe(201);
      expect((await browser('POST', '/user/two-factor', { code: codeOf(begun.body.secret) })).status).toBe(201);
      expect((await browser('GET', '/user/orgs')).status).toBe(200);

      // "admins": a site admin without a second factor is held to enrolment, other users are not.
      expect((await harness.api('root', 'PUT', '/admin/two-factor', { requirement: 'admins' })).status).toBe(200);
      await harness.signUp('gina');
      expect((await makeToken('gina')).status).toBe(201);
      const rootBasic = await harness.api(undefined, 'POST', '/users/root/tokens', { name: 'held' }, { authorization: basic('root', 'root-password') });
      expect(rootBasic.status).toBe(403);
    } finally {
      expect((await harness.api('root', 'PUT', '/admin/two-factor', { requirement: 'off' })).status).toBe(200);
    }
  });

  it("a site admin revokes every token and session of a user in one action; each is refused on its next request", async () => {
    await harness.signUp('hank');
    const second = await harness.tokenFor('hank', 'hank-password', 'second');
    const session = await signIn('hank');
    const cookie = session.headers.get('set-cookie')!.split(';')[0];
    expect((await harness.api(undefined, 'GET', '/user', undefined, { cookie })).status).toBe(200);

    expect((await harness.api('alice', 'DELETE', '/admin/users/hank/credentials')).status).toBe(403);
    expect((await harness.api('root', 'DELETE', '/admin/users/nobody-here/credentials')).status).toBe(404);
    expect(await harness.api('root', 'DELETE', '/admin/users/hank/credentials')).toMatchObject({ status: 200, body: { tokens: 2, sessions: 1 } });
    expect((await harness.api('hank', 'GET', '/user')).status).toBe(401);
    expect((await harness.api(undefined, 'GET', '/user', undefined, { authorization: `token ${second}` })).status).toBe(401);
    expect((await harness.api(undefined, 'GET', '/user', undefined, { cookie })).status).toBe(401);
    // The account stays: its password still signs in.
    expect((await makeToken('hank')).status).toBe(201);
    const trail = await harness.api('root', 'GET', '/admin/audit-events?limit=50');
    expect(trail.status).toBe(200);
    expect(JSON.stringify(trail.body)).toContain('hank/credentials');
  });
});
