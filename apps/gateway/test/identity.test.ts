import { ConflictError, NotAllowedError, NotAuthenticatedError, NotFoundError, ValidationError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Users, tokens and one's own account at the edge (docs/authentication.md), against a stand-in orgs-teams: a token
// from the header, `?token=` or `?access_token=`; tokens made and listed with Basic credentials, the secret shown
// once; 401 and 403 bodies with their messages; the site admin's user rows (a taken name 422 as Gitea answers it, a
// bad body 422 naming its fields, 403 to anyone else) and their audit events; a user who must change its password
// kept to signing in, itself, the change and signing out; the password change and settings passed on. orgs-teams'
// own rules: apps/orgs-teams/test/user-admin.int.test.ts, orgs-teams.int.test.ts; refused on the very next request:
// deploy/local/test/org-lists.int.test.ts.

const SECRET = 'e'.repeat(40);
const user = (id: number, login: string, extra: Partial<orgsTeamsV1.User> = {}) =>
  orgsTeamsV1.User.fromPartial({ id, login, email: `${login}@example.com`, active: true, allowCreateOrganization: true, ...extra });
const USERS: Record<string, orgsTeamsV1.User> = {
  root: user(1, 'root', { isAdmin: true }),
  bob: user(5, 'bob'),
  fay: user(6, 'fay', { mustChangePassword: true }),
  gus: user(7, 'gus', { allowCreateOrganization: false }),
};
/** Tokens by their secret: each user's login is its token, SECRET is bob's second one. */
const TOKEN_IDS: Record<string, number> = { root: 1, bob: 2, fay: 3, gus: 4, [SECRET]: 9 };
const ownerOf = (token: string) => (token === SECRET ? USERS.bob : USERS[token]);

describe('users, tokens and one’s own account at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  const audited: orgsTeamsV1.AuditEvent[] = [];

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => {
            if (!ownerOf(token)) throw new NotAuthenticatedError('invalid token');
            return { user: ownerOf(token), tokenId: TOKEN_IDS[token], scope: '', scopeAccountId: 0, accessScopes: ['all'] };
          },
          authenticateBasic: async ({ username, password }) => {
            if (!USERS[username] || password !== `${username}-password`) throw new NotAuthenticatedError('invalid username or password');
            return orgsTeamsV1.AuthenticateResponse.fromPartial({ user: USERS[username] });
          },
          createToken: async ({ name }) => ({ id: 9, name, sha1: SECRET, tokenLastEight: SECRET.slice(-8), accessScopes: ['all'] }),
          listTokens: async () => ({
            tokens: [orgsTeamsV1.TokenInfo.fromPartial({ id: 9, name: 'laptop', tokenLastEight: SECRET.slice(-8), accessScopes: ['all'] })],
          }),
          deleteToken: async ({ id }) => {
            if (![2, 3, 9].includes(id)) throw new NotFoundError(`access token ${id} does not exist`);
            return {};
          },
          getUser: async ({ id, login }) => {
            const found = Object.values(USERS).find((u) => u.id === id || u.login === login);
            if (!found) throw new NotFoundError(`user ${login} does not exist`);
            return found;
          },
          createUser: async ({ username, email }) => {
            if (username.toLowerCase() === 'bob') throw new ConflictError(`user ${username} already exists`);
            if (email === 'bob@example.com') throw new ConflictError(`email ${email} is already used`);
            return user(8, username, { email });
          },
          editUser: async ({ login, active }) => ({ ...USERS[login], active: active ?? true }),
          deleteUser: async ({ login, purge }) => {
            if (!purge)
              throw new ValidationError(
                `user ${login} is the last owner of cat-co: give each another owner or delete it first, or delete the user with purge`,
              );
            return { deletedOrgIds: [30] };
          },
          clearSignInLockout: async () => ({}),
          searchUsers: async () => ({ users: [{ ...USERS.gus, signInLockedUntilUnix: 1_900_000_000 }], total: 1 }),
          changePassword: async ({ userId, oldPassword }) => {
            const login = Object.values(USERS).find((u) => u.id === userId)?.login;
            if (oldPassword !== `${login}-password`) throw new NotAllowedError('the old password is wrong');
            return {};
          },
          editUserSettings: async ({ fullName, theme, diffViewStyle, hideEmail }) => ({
            ...USERS.bob,
            fullName: fullName ?? '',
            theme: theme ?? '',
            diffViewStyle: diffViewStyle ?? '',
            hideEmail: hideEmail ?? false,
          }),
        },
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
        // Only root holds anything on the site.
        authz: { checkPermission: async ({ userId }) => ({ allowed: userId === USERS.root.id, dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const basic = (login: string, password = `${login}-password`) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
  /** Calls as `who`: a login (its token), `basic:<login>` (its password), or nobody. */
  const call = async (who: string | undefined, method: string, path: string, body?: unknown, raw?: string) => {
    const authorization = who?.startsWith('basic:') ? basic(who.slice(6)) : who ? `token ${who}` : undefined;
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(authorization ? { authorization } : {}), ...(body || raw ? { 'content-type': 'application/json' } : {}) },
      body: raw ?? (body ? JSON.stringify(body) : undefined),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  it('makes a token with Basic credentials, its secret shown once, and lists it without the secret', async () => {
    expect(await call('basic:bob', 'POST', '/users/bob/tokens', { name: 'laptop' })).toEqual({
      status: 201,
      body: { id: 9, name: 'laptop', sha1: SECRET, token_last_eight: SECRET.slice(-8), scopes: ['all'] },
    });
    expect(backends.orgsTeams.callsTo('identity', 'createToken').at(-1)).toMatchObject({ userId: USERS.bob.id, name: 'laptop' });
    expect((await call('basic:bob', 'GET', '/users/bob/tokens')).body).toEqual([
      {
        id: 9,
        name: 'laptop',
        sha1: '',
        token_last_eight: SECRET.slice(-8),
        scopes: ['all'],
        created_at: '0001-01-01T00:00:00Z',
        // Never used: Gitea's zero time, a date-time a Gitea client can read.
        last_used_at: '0001-01-01T00:00:00Z',
      },
    ]);
    // Another user's tokens are not one's own, whatever the row.
    backends.orgsTeams.reset();
    expect(await call('basic:bob', 'GET', '/users/root/tokens')).toMatchObject({ status: 403 });
    expect(await call('basic:bob', 'POST', '/users/root/tokens', { name: 'theirs' })).toMatchObject({ status: 403 });
    expect(await call('basic:bob', 'DELETE', '/users/root/tokens/1')).toMatchObject({ status: 403 });
    expect(backends.orgsTeams.callsTo('identity', 'createToken')).toEqual([]);
    expect(backends.orgsTeams.callsTo('identity', 'deleteToken')).toEqual([]);
    expect(await call('basic:bob', 'DELETE', '/users/bob/tokens/9')).toEqual({ status: 204, body: undefined });
    expect(backends.orgsTeams.callsTo('identity', 'deleteToken').at(-1)).toEqual({ userId: USERS.bob.id, id: 9 });
    expect((await call('basic:bob', 'DELETE', '/users/bob/tokens/8')).status).toBe(404);
  });

  it('takes the token from the header, ?token= and ?access_token=, and answers the user', async () => {
    const viaHeader = await call('root', 'GET', '/user');
    expect(viaHeader).toMatchObject({
      status: 200,
      body: { login: 'root', username: 'root', email: 'root@example.com', is_admin: true, active: true, type: 0 },
    });
    expect((await call(undefined, 'GET', '/user?token=root')).body.login).toBe('root');
    expect((await call(undefined, 'GET', '/user?access_token=root')).body.login).toBe('root');
  });

  it('answers 401 {message, url} without a token, with a bad token and with a wrong password', async () => {
    expect(await call(undefined, 'GET', '/user')).toEqual({
      status: 401,
      body: { message: 'token is required', url: expect.stringMatching(/\/api\/v1\/openapi\.json$/) },
    });
    expect((await call('0'.repeat(40), 'GET', '/user')).status).toBe(401);
    const wrong = await fetch(`${base}/api/v1/users/root/tokens`, {
      method: 'POST',
      headers: { authorization: basic('root', 'nope'), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect([wrong.status, await wrong.json()]).toEqual([401, { message: 'invalid username or password', url: expect.any(String) }]);
  });

  it('signs out: DELETE /user/token deletes the token presented, and Basic credentials have none to end', async () => {
    expect((await call(SECRET, 'DELETE', '/user/token')).status).toBe(204);
    expect(backends.orgsTeams.callsTo('identity', 'deleteToken').at(-1)).toEqual({ userId: USERS.bob.id, id: 9 });
    expect((await call('basic:bob', 'DELETE', '/user/token')).status).toBe(401);
  });

  it('lets a site admin create users: 201, a taken name or email 422 as Gitea answers, a bad body 422 naming its fields', async () => {
    const created = await call('root', 'POST', '/admin/users', {
      username: 'carol',
      email: 'carol@example.com',
      password: 'carol-password',
    });
    expect(created).toMatchObject({ status: 201, body: { login: 'carol', is_admin: false } });
    expect(
      await call('root', 'POST', '/admin/users', { username: 'BOB', email: 'other@example.com', password: 'bob-password' }),
    ).toMatchObject({
      status: 422,
      body: { message: 'user BOB already exists' },
    });
    expect(
      await call('root', 'POST', '/admin/users', { username: 'bobby', email: 'bob@example.com', password: 'bob-password' }),
    ).toMatchObject({
      status: 422,
      body: { message: 'email bob@example.com is already used' },
    });
    backends.orgsTeams.reset();
    const bad = await call('root', 'POST', '/admin/users', { username: 'carol' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.email', 'body.password']);
    expect((await call('root', 'POST', '/admin/users', undefined, '{')).status).toBe(422);
    expect(backends.orgsTeams.callsTo('identity', 'createUser')).toEqual([]);
  });

  it('refuses the site admin rows to anyone else with 403 {message, url}, asking orgs-teams nothing', async () => {
    backends.orgsTeams.reset();
    expect(await call('bob', 'POST', '/admin/users', { username: 'eve', email: 'eve@example.com', password: 'eve-password' })).toEqual({
      status: 403,
      body: { message: 'you do not have the admin:site permission', url: expect.any(String) },
    });
    expect((await call('bob', 'GET', '/admin/users')).status).toBe(403);
    expect((await call('bob', 'PATCH', '/admin/users/gus', { active: false })).status).toBe(403);
    expect((await call('bob', 'DELETE', '/admin/users/gus')).status).toBe(403);
    expect((await call('bob', 'DELETE', '/admin/users/gus/lockout')).status).toBe(403);
    expect(backends.orgsTeams.callsTo('identity', 'editUser')).toEqual([]);
    expect(backends.orgsTeams.callsTo('identity', 'deleteUser')).toEqual([]);
    expect(backends.orgsTeams.callsTo('identity', 'clearSignInLockout')).toEqual([]);
  });

  it("passes a site admin's edits, deletions (purge) and lockout lifts on, shows the lockout, and records each", async () => {
    expect(await call('root', 'PATCH', '/admin/users/gus', { active: false })).toMatchObject({ status: 200, body: { active: false } });
    expect(backends.orgsTeams.callsTo('identity', 'editUser').at(-1)).toMatchObject({
      login: 'gus',
      active: false,
      editorId: USERS.root.id,
    });
    expect(await call('root', 'DELETE', '/admin/users/gus')).toMatchObject({
      status: 422,
      body: { message: expect.stringMatching(/last owner of cat-co/) },
    });
    expect((await call('root', 'DELETE', '/admin/users/gus?purge=true')).status).toBe(204);
    expect(backends.orgsTeams.callsTo('identity', 'deleteUser').at(-1)).toEqual({ login: 'gus', purge: true, deleterId: USERS.root.id });
    const listed = (await call('root', 'GET', '/admin/users?q=gus')).body;
    expect(listed).toHaveLength(1);
    expect(Date.parse(listed[0].sign_in_locked_until)).toBe(1_900_000_000_000);
    expect(backends.orgsTeams.callsTo('identity', 'searchUsers').at(-1)).toMatchObject({ q: 'gus', withLockout: true });
    expect((await call('root', 'DELETE', '/admin/users/gus/lockout')).status).toBe(204);
    expect(backends.orgsTeams.callsTo('identity', 'clearSignInLockout').at(-1)).toEqual({ login: 'gus' });
    const actions = ['adminEditUser', 'adminDeleteUser', 'adminClearSignInLockout'];
    await eventually(async () => actions.every((a) => audited.some((e) => e.action === a && e.actorLogin === 'root')), 5_000);
  });

  it('refuses a user who may not create organizations with 403 before orgs-teams is asked', async () => {
    backends.orgsTeams.reset();
    expect(await call('gus', 'POST', '/orgs', { username: 'gus-co' })).toMatchObject({
      status: 403,
      body: { message: 'you are not allowed to create organizations' },
    });
    expect(backends.orgsTeams.callsTo('organizations', 'createOrg')).toEqual([]);
  });

  it('keeps a user who must change its password to signing in, itself, the change and signing out', async () => {
    expect((await call('fay', 'GET', '/user')).body.login).toBe('fay');
    expect(await call('fay', 'GET', '/user/orgs')).toMatchObject({
      status: 403,
      body: { message: expect.stringMatching(/^you must change your password/) },
    });
    expect((await call('fay', 'GET', '/user/settings')).status).toBe(403);
    expect((await call('basic:fay', 'POST', '/users/fay/tokens', { name: 'after-reset' })).status).toBe(201);
    expect((await call('fay', 'POST', '/user/password', { old_password: 'fay-password', new_password: 'fay-own-password' })).status).toBe(
      204,
    );
    expect((await call('fay', 'DELETE', '/user/token')).status).toBe(204);
  });

  it('passes the password change on, and its refusal of a wrong old password (403)', async () => {
    expect(await call('bob', 'POST', '/user/password', { old_password: 'nope-nope', new_password: 'bob-new-password' })).toMatchObject({
      status: 403,
      body: { message: 'the old password is wrong' },
    });
    expect((await call('bob', 'POST', '/user/password', { old_password: 'bob-password', new_password: 'bob-new-password' })).status).toBe(
      204,
    );
    expect(backends.orgsTeams.callsTo('identity', 'changePassword').at(-1)).toMatchObject({
      userId: USERS.bob.id,
      newPassword: 'bob-new-password',
    });
  });

  it('edits one’s own settings, an unknown diff view style 422 before orgs-teams is asked', async () => {
    const edited = await call('bob', 'PATCH', '/user/settings', {
      full_name: 'Bob B.',
      theme: 'dark',
      diff_view_style: 'split',
      hide_email: true,
    });
    expect(edited).toMatchObject({
      status: 200,
      body: { full_name: 'Bob B.', theme: 'dark', diff_view_style: 'split', hide_email: true, hide_activity: false },
    });
    expect(backends.orgsTeams.callsTo('identity', 'editUserSettings').at(-1)).toMatchObject({ userId: USERS.bob.id, hideEmail: true });
    backends.orgsTeams.reset();
    expect((await call('bob', 'PATCH', '/user/settings', { diff_view_style: 'sideways' })).status).toBe(422);
    expect(backends.orgsTeams.callsTo('identity', 'editUserSettings')).toEqual([]);
  });
});
