import { orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Gitea's token scopes as orgs-teams keeps them (docs/authentication.md, "Token scopes"): stored with the token,
// answered when it authenticates and in its owner's list, none meaning all; scopes outside the vocabulary are refused
// with 400 naming them, and no token is made. The gateway enforces them (apps/gateway/test/token-scopes.test.ts).

describe('token scopes in orgs-teams', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let alice: number;
  const create = (name: string, accessScopes: string[]) =>
    identity.createToken({ userId: alice, name, scope: '', scopeAccountId: 0, accessScopes });

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
    });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    alice = (
      await identity.createUser({
        username: 'alice',
        email: 'alice@example.com',
        password: 'alice-password',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      })
    ).id;
  });
  afterAll(async () => {
    identity?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('keeps the scopes a token is made with and answers them when it authenticates; none is all', async () => {
    const reader = await create('reader', ['read:user']);
    expect(reader.accessScopes).toEqual(['read:user']);
    expect(await identity.authenticate({ token: reader.sha1 })).toMatchObject({ user: { login: 'alice' }, accessScopes: ['read:user'] });

    // Write covers read: the read of the same kind is not kept beside it.
    const writer = await create('writer', ['read:user', 'write:user', 'write:organization']);
    expect((await identity.authenticate({ token: writer.sha1 })).accessScopes.sort()).toEqual(['write:organization', 'write:user']);

    const plain = await create('plain', []);
    expect(plain.accessScopes).toEqual(['all']);
    expect((await identity.authenticate({ token: plain.sha1 })).accessScopes).toEqual(['all']);
  });

  it('refuses scopes outside the vocabulary with 400 naming them, and makes no token', async () => {
    await expect(create('repo', ['write:repository', 'read:user'])).rejects.toMatchObject({
      httpStatus: 400,
      message: expect.stringContaining('write:repository'),
    });
    const { tokens } = await identity.listTokens({ userId: alice });
    expect(tokens.map((t) => t.name)).not.toContain('repo');
  });

  it("lists each of the owner's tokens with its scopes", async () => {
    const { tokens } = await identity.listTokens({ userId: alice });
    expect(Object.fromEntries(tokens.map((t) => [t.name, [...t.accessScopes].sort()]))).toEqual({
      reader: ['read:user'],
      writer: ['write:organization', 'write:user'],
      plain: ['all'],
    });
  });
});
