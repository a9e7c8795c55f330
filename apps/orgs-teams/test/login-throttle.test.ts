import crypto from 'node:crypto';
import { orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

describe('orgs-teams: failed password checks per account', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let client: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  const scrypt = jest.spyOn(crypto, 'scrypt');
  const signIn = (username: string, password: string) => client.authenticateBasic({ username, password });
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
    for (const login of ['alice', 'bob'])
      await client.createUser({
        username: login,
        email: `${login}@example.com`,
        password: `${login}-password`,
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      });
  });
  afterAll(async () => {
    scrypt.mockRestore();
    client?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('refuses an account with too many wrong passwords with 429 and Retry-After, without hashing, even the right password', async () => {
    for (let i = 0; i < 3; i += 1)
      await expect(signIn('alice', 'wrong')).rejects.toMatchObject({ kind: 'unauthenticated', message: 'invalid username or password' });
    const refused = await signIn('alice', 'alice-password').catch((e) => e);
    expect(refused).toMatchObject({ kind: 'too-many-requests', httpStatus: 429 });
    expect(refused.message).toMatch(/^too many failed sign-in attempts for this account; try again in \d+ s$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
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
});
