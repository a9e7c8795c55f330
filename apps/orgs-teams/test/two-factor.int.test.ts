import { Secret, TOTP } from 'otpauth';
import { orgsTeamsV1 } from '@platform/proto';
import type { PromiseClient } from '@platform/service-kit';
import { startOrgsTeams, type OrgsTeamsUnderTest } from './orgs-teams-under-test';

// A TOTP second factor for local accounts in orgs-teams (docs/authentication.md, "Second factor (TOTP)"): enrolment
// confirmed by a first code, a password sign-in then needing a code (each taken once) or a recovery code (once),
// recovery codes renewed and the factor turned off only with the password and a code, wrong ones counted against the
// account's limit of failed sign-ins, a site admin's reset, and the site's requirement. Codes are made here from the
// enrolled secret, as an authenticator app makes them. The rows over HTTP: apps/gateway/test/two-factor.test.ts.

/** The code an authenticator app shows `steps` 30-second steps from now (the check takes one step either side). */
const codeOf = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

describe('TOTP second factor for local accounts', () => {
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  const ids: Record<string, number> = {};
  let started: OrgsTeamsUnderTest;

  beforeAll(async () => {
    started = await startOrgsTeams({ users: ['alice', 'bob', 'dave', 'erin', 'frank', 'gina', 'ivan'] });
    ({ identity } = started);
    Object.assign(ids, started.ids);
  });
  afterAll(() => started?.stop());

  /** A password sign-in (Basic credentials), with the code given as X-Gitea-OTP; answers the user or the refusal. */
  const signIn = (login: string, otp = '') =>
    identity.authenticateBasic({ username: login, password: `${login}-password`, otp }).then(
      (a) => a.user!,
      (err: { kind: string; message: string }) => `${err.kind}: ${err.message}`,
    );
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => 'done',
      (err: { kind: string; message: string }) => `${err.kind}: ${err.message}`,
    );
  /** Enrols the user; answers the secret and the recovery codes. */
  const enrol = async (login: string) => {
    const { secret } = await identity.beginTwoFactorEnrolment({ userId: ids[login] });
    const { codes } = await identity.confirmTwoFactor({ userId: ids[login], code: codeOf(secret), password: '' });
    return { secret, recovery: codes };
  };
  const status = (login: string) => identity.getTwoFactor({ userId: ids[login] });

  it('enrols with an otpauth URI of a new secret, on only once a first code of it is confirmed, with ten recovery codes', async () => {
    expect(await status('alice')).toEqual({ enabled: false, recoveryCodesLeft: 0, required: false });
    const begun = await identity.beginTwoFactorEnrolment({ userId: ids.alice });
    expect(begun.otpauthUri).toMatch(/^otpauth:\/\/totp\/.*alice\?/);
    expect(begun.otpauthUri).toContain(`secret=${begun.secret}`);
    // Not on before a code of it was seen: a password alone still signs in.
    expect(await signIn('alice')).toMatchObject({ login: 'alice' });

    expect(await failure(identity.confirmTwoFactor({ userId: ids.alice, code: codeOf(begun.secret, 5), password: '' }))).toMatch(
      /^validation: /,
    );
    const { codes } = await identity.confirmTwoFactor({ userId: ids.alice, code: codeOf(begun.secret), password: '' });
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect(await status('alice')).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });
    // Enrolling again while it is on is refused rather than silently replacing the secret.
    expect(await failure(identity.beginTwoFactorEnrolment({ userId: ids.alice }))).toMatch(/^conflict: /);
  });

  it('asks a password sign-in for a code, takes each code once and a recovery code once, in any case; tokens need none', async () => {
    const token = await identity.createToken({ userId: ids.bob, name: 'before', scope: '', scopeAccountId: 0, accessScopes: [] });
    const { secret, recovery } = await enrol('bob');
    expect(await signIn('bob')).toBe('unauthenticated: a two-factor authentication code is required: send it in the X-Gitea-OTP header');
    expect(await signIn('bob', codeOf(secret, -10))).toBe('unauthenticated: invalid two-factor authentication code');
    // The enrolment spent this step's code: the next step's (inside the window) signs in, once.
    const next = codeOf(secret, 1);
    expect(await signIn('bob', next)).toMatchObject({ login: 'bob' });
    expect(await signIn('bob', next)).toBe('unauthenticated: invalid two-factor authentication code');
    expect(await signIn('bob', recovery[0].toLowerCase())).toMatchObject({ login: 'bob' });
    expect(await signIn('bob', recovery[0])).toBe('unauthenticated: invalid two-factor authentication code');
    expect(await status('bob')).toMatchObject({ recoveryCodesLeft: 9 });
    expect((await identity.authenticate({ token: token.sha1 })).user).toMatchObject({ login: 'bob' });
  });

  it('renews recovery codes and turns the factor off only with the password and a code; the old codes stop working', async () => {
    const { secret, recovery } = await enrol('dave');
    const password = 'dave-password';
    expect(await failure(identity.regenerateRecoveryCodes({ userId: ids.dave, code: codeOf(secret, 1), password: '' }))).toBe(
      'input: password: required',
    );
    expect(await failure(identity.disableTwoFactor({ userId: ids.dave, code: recovery[0], password: 'not-it' }))).toBe(
      'not-allowed: the password is wrong',
    );
    expect(await failure(identity.regenerateRecoveryCodes({ userId: ids.dave, code: codeOf(secret, -10), password }))).toMatch(
      /^validation: /,
    );
    const fresh = await identity.regenerateRecoveryCodes({ userId: ids.dave, code: codeOf(secret, 1), password });
    expect(fresh.codes).toHaveLength(10);
    expect(await signIn('dave', recovery[1])).toBe('unauthenticated: invalid two-factor authentication code');
    await identity.disableTwoFactor({ userId: ids.dave, code: fresh.codes[0], password });
    expect(await signIn('dave')).toMatchObject({ login: 'dave' });
    expect(await failure(identity.disableTwoFactor({ userId: ids.dave, code: '123456', password }))).toMatch(/^not-found: /);
  });

  it('counts wrong codes and passwords given to turn it off or renew codes as failed sign-ins; locked, nothing is checked', async () => {
    const { secret } = await enrol('ivan');
    const password = 'ivan-password';
    const wrong = codeOf(secret, -10);
    // The account's limit is ten failed sign-ins (the default): wrong codes at both doors and a wrong password reach it.
    for (let i = 0; i < 5; i += 1)
      expect(await failure(identity.disableTwoFactor({ userId: ids.ivan, code: wrong, password }))).toMatch(/^validation: /);
    for (let i = 0; i < 4; i += 1)
      expect(await failure(identity.regenerateRecoveryCodes({ userId: ids.ivan, code: wrong, password }))).toMatch(/^validation: /);
    expect(await failure(identity.disableTwoFactor({ userId: ids.ivan, code: wrong, password: 'not-it' }))).toBe(
      'not-allowed: the password is wrong',
    );
    // Locked: the right password with a right code is refused at every door a code is taken, sign-in included.
    const locked = /^too-many-requests: too many failed sign-in attempts for this account; try again in \d+ s$/;
    const right = codeOf(secret, 1);
    expect(await failure(identity.disableTwoFactor({ userId: ids.ivan, code: right, password }))).toMatch(locked);
    await expect(identity.disableTwoFactor({ userId: ids.ivan, code: right, password })).rejects.toMatchObject({
      retryAfterSeconds: expect.any(Number),
    });
    expect(await failure(identity.regenerateRecoveryCodes({ userId: ids.ivan, code: right, password }))).toMatch(locked);
    expect(await signIn('ivan', right)).toMatch(/^too-many-requests: /);
    expect(await status('ivan')).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });
  });

  it("resets a user's second factor for a site admin; an unknown user is not found", async () => {
    await enrol('erin');
    expect(await signIn('erin')).toMatch(/^unauthenticated: /);
    await identity.resetTwoFactor({ login: 'erin' });
    expect(await signIn('erin')).toMatchObject({ login: 'erin' });
    expect(await status('erin')).toEqual({ enabled: false, recoveryCodesLeft: 0, required: false });
    expect(await failure(identity.resetTwoFactor({ login: 'nobody-here' }))).toMatch(/^not-found: /);
  });

  it('requires enrolment of every account without a second factor, or of site admins only, as the site says', async () => {
    expect(await failure(identity.setTwoFactorRequirement({ requirement: 'sometimes' }))).toMatch(/^validation: requirement: /);
    try {
      expect(await identity.setTwoFactorRequirement({ requirement: 'all' })).toEqual({ requirement: 'all' });
      expect(await identity.getTwoFactorRequirement({ requirement: '' })).toEqual({ requirement: 'all' });
      expect(await signIn('frank')).toMatchObject({ login: 'frank', mustEnrollTwoFactor: true });
      expect(await status('frank')).toMatchObject({ enabled: false, required: true });
      // A session of the password sign-in says so too, until the factor is on.
      const session = await identity.createSession({ userId: ids.frank, userAgent: '', address: '' });
      expect((await identity.authenticateSession({ secret: session.secret })).user).toMatchObject({ mustEnrollTwoFactor: true });
      await enrol('frank');
      expect((await identity.authenticateSession({ secret: session.secret })).user).toMatchObject({ mustEnrollTwoFactor: false });

      // "admins": a site admin without a second factor is held to enrolment, other users are not.
      await identity.setTwoFactorRequirement({ requirement: 'admins' });
      expect(await signIn('gina')).toMatchObject({ login: 'gina', mustEnrollTwoFactor: false });
      expect(await signIn('root')).toMatchObject({ login: 'root', mustEnrollTwoFactor: true });
    } finally {
      await identity.setTwoFactorRequirement({ requirement: 'off' });
    }
  });
});
