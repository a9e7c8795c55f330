import { Secret, TOTP } from 'otpauth';
import { orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { PASSWORD_THREADS, PASSWORD_VERIFIER } from '../src/identity/passwords';
import { startAuthzStub, type AuthzStub } from './authz-stub';

/** The code an authenticator app shows `steps` 30-second steps from now (the check takes one step either side). */
const codeOf = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

/**
 * Retry-After is what is left of the 60 s window, which opened with the first failure, no earlier than `started`:
 * at most 60 s, and at least 60 s less the time this machine took since, however busy it is.
 */
function expectWaitLeft(refused: { headers: Record<string, string> }, started: number): void {
  const retryAfter = Number(refused.headers['retry-after']);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(retryAfter).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - started) / 1000));
}

describe('orgs-teams: failed password checks per account', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let client: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  // Every scrypt derivation of the process goes through its password threads.
  const realScrypt = PASSWORD_THREADS.derive.bind(PASSWORD_THREADS);
  const scrypt = jest.spyOn(PASSWORD_THREADS, 'derive');
  const ids: Record<string, number> = {};
  const signIn = (username: string, password: string, otp?: string) => client.authenticateBasic({ username, password, otp });
  /** Signs in and counts the scrypt derivations it took. */
  const hashesOf = async (attempt: Promise<unknown>) => {
    const before = scrypt.mock.calls.length;
    await attempt.catch(() => undefined);
    return scrypt.mock.calls.length - before;
  };

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_FAILURE_WINDOW_SECONDS: '60',
    });
    client = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    for (const login of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina'])
      ids[login] = (
        await client.createUser({
          username: login,
          email: `${login}@example.com`,
          password: `${login}-password`,
          fullName: '',
          mustChangePassword: false,
          isAdmin: false,
        })
      ).id;
  });
  afterAll(async () => {
    scrypt.mockRestore();
    client?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('refuses an account with too many wrong passwords with 429 and Retry-After, without hashing, even the right password', async () => {
    const started = Date.now();
    for (let i = 0; i < 3; i += 1)
      await expect(signIn('alice', 'wrong')).rejects.toMatchObject({ kind: 'unauthenticated', message: 'invalid username or password' });
    const refused = await signIn('alice', 'alice-password').catch((e) => e);
    expect(refused).toMatchObject({ kind: 'too-many-requests', httpStatus: 429 });
    expect(refused.message).toMatch(/^too many failed sign-in attempts for this account; try again in \d+ s$/);
    expectWaitLeft(refused, started);
    expect(await hashesOf(signIn('alice', 'alice-password'))).toBe(0);
    // Login and email name the same account.
    await expect(signIn('ALICE@example.com', 'alice-password')).rejects.toMatchObject({ kind: 'too-many-requests' });
    // Other accounts are not affected.
    expect((await signIn('root', 'correct horse battery')).user!.login).toBe('root');
  });

  it('refuses an unknown login the same way, so the limit does not tell which logins exist', async () => {
    for (let i = 0; i < 3; i += 1) await expect(signIn('nobody', 'wrong')).rejects.toMatchObject({ kind: 'unauthenticated' });
    const refused = await signIn('nobody', 'wrong').catch((e) => e);
    expect(refused.kind).toBe('too-many-requests');
    expect(refused.message).toMatch(/^too many failed sign-in attempts for this account/);
  });

  it('forgets the failures of an account when its right password is given', async () => {
    for (let i = 0; i < 2; i += 1) await expect(signIn('bob', 'wrong')).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(await hashesOf(signIn('bob', 'bob-password'))).toBe(1);
    for (let i = 0; i < 2; i += 1) await expect(signIn('bob', 'wrong')).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await signIn('bob', 'bob-password')).user!.login).toBe('bob');
  });

  /**
   * Fires `attempts` at once with every password check held at the gate until each attempt is either answered or
   * checking, so the whole burst is in flight together; answers the outcome of each (a User's login, or the error kind)
   * and how many derivations it took.
   */
  async function burst(attempts: (() => Promise<unknown>)[]): Promise<{ outcomes: string[]; hashed: number }> {
    const waiting: (() => void)[] = [];
    let holding = true;
    let answered = 0;
    let allIn!: () => void;
    const burstIn = new Promise<void>((resolve) => (allIn = resolve));
    const tally = () => {
      if (answered + waiting.length === attempts.length) allIn();
    };
    const hashedBefore = scrypt.mock.calls.length;
    const gate = PASSWORD_VERIFIER.gate;
    const realRun = gate.run.bind(gate);
    const run = jest.spyOn(gate, 'run').mockImplementation(((check: () => Promise<unknown>, opts?: { priority?: boolean }) => {
      if (!holding) return realRun(check, opts);
      return new Promise<unknown>((resolve, reject) => {
        waiting.push(() => void realRun(check, opts).then(resolve, reject));
        tally();
      });
    }) as typeof gate.run);
    try {
      const outcomes = attempts.map((attempt) =>
        attempt()
          .then((r) => (r as orgsTeamsV1.AuthenticateResponse).user?.login ?? 'ok')
          .catch((err: { kind?: string }) => err.kind ?? String(err))
          .finally(() => {
            answered += 1;
            tally();
          }),
      );
      await burstIn;
      holding = false;
      for (const go of waiting.splice(0)) go();
      const answers = await Promise.all(outcomes);
      return { outcomes: answers, hashed: scrypt.mock.calls.length - hashedBefore };
    } finally {
      run.mockRestore();
    }
  }

  it('checks no more than the limit of 40 concurrent wrong passwords; the rest are refused at once; then even the right one is 429', async () => {
    const started = Date.now();
    const { outcomes, hashed } = await burst(Array.from({ length: 40 }, (_, i) => () => signIn('carol', `wrong ${i}`)));
    expect(hashed).toBe(3);
    expect(outcomes.filter((o) => o === 'unauthenticated')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'too-many-requests')).toHaveLength(37);
    const refused = await signIn('carol', 'carol-password').catch((e) => e);
    expect(refused).toMatchObject({ kind: 'too-many-requests' });
    expect(refused.message).toMatch(/^too many failed sign-in attempts for this account; try again in \d+ s$/);
    expectWaitLeft(refused, started);
    expect(await hashesOf(signIn('carol', 'carol-password'))).toBe(0);
  });

  it('checks no more than the limit of 100 concurrent attempts with the right password among them, which signs in or is 429', async () => {
    const RIGHT = 50;
    const { outcomes, hashed } = await burst(
      Array.from({ length: 100 }, (_, i) => () => signIn('dave', i === RIGHT ? 'dave-password' : `wrong ${i}`)),
    );
    expect(hashed).toBe(3);
    expect(outcomes.filter((o) => !['unauthenticated', 'too-many-requests', 'dave'].includes(o))).toEqual([]);
    expect(['dave', 'too-many-requests']).toContain(outcomes[RIGHT]);
    expect(outcomes.filter((o) => o === 'unauthenticated')).toHaveLength(outcomes[RIGHT] === 'dave' ? 2 : 3);
    expect(outcomes.filter((o) => o === 'too-many-requests')).toHaveLength(97);
  });

  it("signs in one account's right password sent on 20 requests at once, over a limit of 3 in flight, with one derivation; then with none", async () => {
    const verified = jest.spyOn(PASSWORD_VERIFIER, 'verify');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    scrypt.mockImplementationOnce(async (...args) => {
      await held;
      return realScrypt(...args);
    });
    try {
      const before = scrypt.mock.calls.length;
      const answers = Array.from({ length: 20 }, () => signIn('gina', 'gina-password').then((r) => r.user!.login, (e: { kind: string }) => e.kind));
      // Every request has reached the password check before the one derivation may end.
      await eventually(async () => verified.mock.calls.length === 20);
      release();
      expect(await Promise.all(answers)).toEqual(Array(20).fill('gina'));
      expect(scrypt.mock.calls.length - before).toBe(1);
    } finally {
      verified.mockRestore();
    }
    // Verified a moment ago: the next sign-in with it costs no derivation.
    expect(await hashesOf(signIn('gina', 'gina-password'))).toBe(0);
    // A wrong password is still checked in full.
    expect(await hashesOf(signIn('gina', 'gina-wrong'))).toBe(1);
  });

  describe('second-factor codes', () => {
    /** Enrols `login`; answers its secret and recovery codes. */
    const enrol = async (login: string) => {
      const { secret } = await client.beginTwoFactorEnrolment({ userId: ids[login] });
      const { codes } = await client.confirmTwoFactor({ userId: ids[login], code: codeOf(secret), password: '' });
      return { secret, codes };
    };

    it('wrong codes and passwords given to turn it off, renew codes or sign in count against one limit; over it nothing is checked', async () => {
      const { secret } = await enrol('erin');
      const userId = ids.erin;
      const farCode = codeOf(secret, 10);
      // A wrong code with the right password, a wrong password, a wrong code at sign-in: three failed sign-ins.
      await expect(client.disableTwoFactor({ userId, password: 'erin-password', code: farCode })).rejects.toMatchObject({
        kind: 'validation',
      });
      await expect(client.regenerateRecoveryCodes({ userId, password: 'wrong', code: codeOf(secret, 1) })).rejects.toMatchObject({
        kind: 'not-allowed',
        message: 'the password is wrong',
      });
      await expect(signIn('erin', 'erin-password', farCode)).rejects.toMatchObject({ kind: 'unauthenticated' });
      // Locked: the right password and a right code are refused, without a password being hashed, on every door.
      const refused = await client.disableTwoFactor({ userId, password: 'erin-password', code: codeOf(secret, 1) }).catch((e) => e);
      expect(refused).toMatchObject({ kind: 'too-many-requests' });
      expect(refused.message).toMatch(/^too many failed sign-in attempts for this account; try again in \d+ s$/);
      expect(await hashesOf(client.regenerateRecoveryCodes({ userId, password: 'erin-password', code: codeOf(secret, 1) }))).toBe(0);
      await expect(signIn('erin', 'erin-password', codeOf(secret, 1))).rejects.toMatchObject({ kind: 'too-many-requests' });
      expect(await client.getTwoFactor({ userId })).toMatchObject({ enabled: true });
    });

    it('a token alone is not enough: renewing codes and turning it off take the password and a code, and success forgets earlier failures', async () => {
      const { secret } = await enrol('frank');
      const userId = ids.frank;
      const next = codeOf(secret, 1);
      await expect(client.disableTwoFactor({ userId, password: '', code: next })).rejects.toMatchObject({ kind: 'input' });
      for (let i = 0; i < 2; i += 1)
        await expect(client.disableTwoFactor({ userId, password: 'wrong', code: next })).rejects.toMatchObject({ kind: 'not-allowed' });
      // A wrong password spends no code: the code given with it still works.
      const renewed = await client.regenerateRecoveryCodes({ userId, password: 'frank-password', code: next });
      expect(renewed.codes).toHaveLength(10);
      // The success forgot the two failures: two more wrong passwords leave the account open.
      for (let i = 0; i < 2; i += 1)
        await expect(client.disableTwoFactor({ userId, password: 'wrong', code: renewed.codes[0] })).rejects.toMatchObject({
          kind: 'not-allowed',
        });
      await client.disableTwoFactor({ userId, password: 'frank-password', code: renewed.codes[0] });
      expect(await client.getTwoFactor({ userId })).toMatchObject({ enabled: false });
      await expect(client.disableTwoFactor({ userId, password: 'frank-password', code: codeOf(secret, 1) })).rejects.toMatchObject({
        kind: 'not-found',
      });
    });
  });
});
