import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, startApp, type PromiseClient } from '@platform/service-kit';
import { describeServiceContract, startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

describe('orgs-teams', () => {
  // Each app below starts on a fresh database (so its first user is id 1): each gets its own authz stub.
  let contractAuthz: AuthzStub;
  beforeAll(async () => {
    contractAuthz = await startAuthzStub();
  });
  afterAll(() => contractAuthz.server.shutdown(100));

  describeServiceContract({
    app: orgsTeamsApp,
    schema: 'identity',
    grpcService: 'platformadmin.orgsteams.v1.OrgsTeamsService',
    definition: orgsTeamsV1.OrgsTeamsServiceService,
    env: () => ({ AUTHZ_GRPC_ADDR: contractAuthz.address }),
  });

  describe('identity', () => {
    let authz: AuthzStub;
    let app: AppUnderTest;
    let client: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
    beforeAll(async () => {
      authz = await startAuthzStub();
      app = await startAppForTest(orgsTeamsApp, {
        AUTHZ_GRPC_ADDR: authz.address,
        PLATFORM_ADMIN_USERNAME: 'root',
        PLATFORM_ADMIN_EMAIL: 'root@example.com',
        PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      });
      client = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    });
    afterAll(async () => {
      client?.close();
      await app?.stop();
      await authz?.server.shutdown(100);
    });

    it('creates the site admin on first start and grants it the site admin relation', async () => {
      const { user } = await client.authenticateBasic({ username: 'root', password: 'correct horse battery' });
      expect(user).toMatchObject({ login: 'root', isAdmin: true, active: true });
      expect(authz.tuples.has(`user:${user!.id} admin site:platform`)).toBe(true);
    });

    it('keeps the first site admin across restarts', async () => {
      const written = authz.tuples.size;
      const again = await startApp(orgsTeamsApp, { ...app.env, PLATFORM_ADMIN_USERNAME: 'other' });
      await again.stop();
      expect(authz.tuples.size).toBe(written);
      await expect(client.getUser({ id: 0, login: 'other' })).rejects.toMatchObject({ kind: 'not-found' });
    });

    it('refuses a taken login (any case) or email with 409, and a bad username with 422', async () => {
      await client.createUser({
        username: 'Alice',
        email: 'alice@example.com',
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      });
      await expect(
        client.createUser({
          username: 'alice',
          email: 'x@example.com',
          password: 'password1',
          fullName: '',
          mustChangePassword: false,
          isAdmin: false,
        }),
      ).rejects.toMatchObject({ kind: 'conflict' });
      await expect(
        client.createUser({
          username: 'alice2',
          email: 'ALICE@example.com',
          password: 'password1',
          fullName: '',
          mustChangePassword: false,
          isAdmin: false,
        }),
      ).rejects.toMatchObject({ kind: 'conflict', message: 'email ALICE@example.com is already used' });
      await expect(
        client.createUser({
          username: 'bad name',
          email: 'b@example.com',
          password: 'short',
          fullName: '',
          mustChangePassword: false,
          isAdmin: false,
        }),
      ).rejects.toMatchObject({
        kind: 'validation',
        fieldViolations: [expect.objectContaining({ field: 'username' }), expect.objectContaining({ field: 'password' })],
      });
    });

    it('undoes an admin creation when the relationship cannot be written', async () => {
      authz.state.failWrites = true;
      try {
        await expect(
          client.createUser({
            username: 'admin2',
            email: 'admin2@example.com',
            password: 'password1',
            fullName: '',
            mustChangePassword: false,
            isAdmin: true,
          }),
        ).rejects.toMatchObject({ kind: 'unavailable' });
      } finally {
        authz.state.failWrites = false;
      }
      await expect(client.getUser({ id: 0, login: 'admin2' })).rejects.toMatchObject({ kind: 'not-found' });
    });

    it('deletes a user nobody used (taking back a creation), and refuses one that was used (400)', async () => {
      const made = (login: string) =>
        client.createUser({
          username: login,
          email: `${login}@example.com`,
          password: 'password1',
          fullName: '',
          mustChangePassword: true,
          isAdmin: false,
        });
      const unused = await made('never-used');
      await client.deleteUnusedUser({ id: unused.id });
      await expect(client.getUser({ id: unused.id, login: '' })).rejects.toMatchObject({ kind: 'not-found' });
      await expect(client.deleteUnusedUser({ id: unused.id })).rejects.toMatchObject({ kind: 'not-found' });
      const used = await made('has-a-token');
      await client.createToken({ userId: used.id, name: 'ci', scope: '', scopeAccountId: 0, accessScopes: [] });
      await expect(client.deleteUnusedUser({ id: used.id })).rejects.toMatchObject({ kind: 'input' });
      expect((await client.getUser({ id: used.id, login: '' })).login).toBe('has-a-token');
    });

    it('issues tokens shown once, authenticates with them, lists them without secrets and revokes them', async () => {
      const { user } = await client.authenticateBasic({ username: 'alice@example.com', password: 'password1' });
      const token = await client.createToken({ userId: user!.id, name: 'ci', scope: '', scopeAccountId: 0, accessScopes: [] });
      expect(token.sha1).toMatch(/^[0-9a-f]{40}$/);
      expect(token.tokenLastEight).toBe(token.sha1.slice(-8));
      expect((await client.authenticate({ token: token.sha1 })).user!.login).toBe('Alice');

      await expect(
        client.createToken({ userId: user!.id, name: 'ci', scope: '', scopeAccountId: 0, accessScopes: [] }),
      ).rejects.toMatchObject({
        kind: 'conflict',
      });
      const { tokens } = await client.listTokens({ userId: user!.id });
      expect(tokens).toEqual([expect.objectContaining({ id: token.id, name: 'ci', tokenLastEight: token.tokenLastEight })]);
      expect(JSON.stringify(tokens)).not.toContain(token.sha1);

      await client.deleteToken({ userId: user!.id, id: token.id });
      await expect(client.authenticate({ token: token.sha1 })).rejects.toMatchObject({ kind: 'unauthenticated' });
    });

    it('issues scoped tokens that say their scope and the account they act for', async () => {
      const { user } = await client.authenticateBasic({ username: 'Alice', password: 'password1' });
      const token = await client.createToken({
        userId: user!.id,
        name: 'proxy',
        scope: 'license-proxy',
        scopeAccountId: user!.id,
        accessScopes: [],
      });
      expect(await client.authenticate({ token: token.sha1 })).toMatchObject({ scope: 'license-proxy', scopeAccountId: user!.id });
      const { tokens } = await client.listTokens({ userId: user!.id });
      expect(tokens.find((t) => t.name === 'proxy')).toMatchObject({ scope: 'license-proxy', scopeAccountId: user!.id });
      await expect(
        client.createToken({ userId: user!.id, name: 'bad', scope: 'everything', scopeAccountId: user!.id, accessScopes: [] }),
      ).rejects.toMatchObject({
        kind: 'input',
      });
      await expect(
        client.createToken({ userId: user!.id, name: 'bad', scope: 'license-proxy', scopeAccountId: 0, accessScopes: [] }),
      ).rejects.toMatchObject({
        kind: 'input',
      });
      await client.deleteToken({ userId: user!.id, id: token.id });
    });

    it('refuses a wrong password and an unknown user alike', async () => {
      await expect(client.authenticateBasic({ username: 'Alice', password: 'wrong' })).rejects.toMatchObject({
        kind: 'unauthenticated',
        message: 'invalid username or password',
      });
      await expect(client.authenticateBasic({ username: 'nobody', password: 'wrong' })).rejects.toMatchObject({
        kind: 'unauthenticated',
        message: 'invalid username or password',
      });
    });

    it('refuses inactive and login-prohibited users even with a valid token', async () => {
      const { user } = await client.authenticateBasic({ username: 'Alice', password: 'password1' });
      const token = await client.createToken({ userId: user!.id, name: 'soon inactive', scope: '', scopeAccountId: 0, accessScopes: [] });
      const db = app.running.ctx.db!;
      await db.table('accounts').where({ id: user!.id }).update({ active: false });
      await expect(client.authenticate({ token: token.sha1 })).rejects.toMatchObject({
        kind: 'unauthenticated',
        message: 'user is not active',
      });
      await db.table('accounts').where({ id: user!.id }).update({ active: true, prohibit_login: true });
      // Prohibited from logging in is Gitea's 403: the credential is right, the account may not use it.
      await expect(client.authenticate({ token: token.sha1 })).rejects.toMatchObject({
        kind: 'not-allowed',
        message: 'user is prohibited from logging in',
      });
      await expect(client.authenticateBasic({ username: 'Alice', password: 'password1' })).rejects.toMatchObject({ kind: 'not-allowed' });
      await db.table('accounts').where({ id: user!.id }).update({ prohibit_login: false });
    });

    it('looks up many users at once, leaving out ids of no user', async () => {
      const { user: root } = await client.authenticateBasic({ username: 'root', password: 'correct horse battery' });
      const { user: alice } = await client.authenticateBasic({ username: 'Alice', password: 'password1' });
      const { users } = await client.getUsers({ ids: [alice!.id, 999999, root!.id] });
      expect(users.map((u) => u.login)).toEqual(['root', 'Alice']);
    });

    it('looks up accounts of both types at once, and pages through the user accounts only, in id order', async () => {
      const { user: root } = await client.authenticateBasic({ username: 'root', password: 'correct horse battery' });
      const orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
      const org = await orgs
        .createOrg(orgRequest(root!.id, 'paging-org'))
        .finally(() => orgs.close());
      for (const login of ['pager1', 'pager2', 'pager3'])
        await client.createUser({
          username: login,
          email: `${login}@example.com`,
          password: 'password1',
          fullName: '',
          mustChangePassword: false,
          isAdmin: false,
        });

      const accounts = await client.getAccounts({ ids: [org.id, 999999, root!.id] });
      expect(accounts.users.map((u) => [u.login, u.type])).toEqual([
        ['root', 0],
        ['paging-org', 1],
      ]);

      const logins: string[] = [];
      let afterId = 0;
      let pages = 0;
      do {
        const page = await client.listUserAccounts({ afterId, limit: 2 });
        expect(page.users.length).toBeLessThanOrEqual(2);
        logins.push(...page.users.map((u) => u.login));
        afterId = page.nextAfterId;
        pages++;
      } while (afterId !== 0);
      const all = await client.listUserAccounts({ afterId: 0, limit: 0 });
      expect(all.nextAfterId).toBe(0);
      expect(logins).toEqual(all.users.map((u) => u.login));
      expect(logins).toEqual(expect.arrayContaining(['root', 'pager1', 'pager2', 'pager3']));
      expect(logins).not.toContain('paging-org');
      expect(pages).toBe(Math.ceil(logins.length / 2));
      await expect(client.listUserAccounts({ afterId: 0, limit: 1001 })).rejects.toMatchObject({ kind: 'input' });
    });

    it('stores only a hash of each token and of each password', async () => {
      const db = app.running.ctx.db!;
      const { user } = await client.authenticateBasic({ username: 'Alice', password: 'password1' });
      const token = await client.createToken({ userId: user!.id, name: 'hash check', scope: '', scopeAccountId: 0, accessScopes: [] });
      const row = await db.table('access_tokens').where({ id: token.id }).first();
      expect(JSON.stringify(row)).not.toContain(token.sha1);
      const account = await db.table('accounts').where({ id: user!.id }).first();
      expect(account.password_hash).toMatch(/^scrypt\$/);
      expect(account.password_hash).not.toContain('password1');
    });
  });
});
