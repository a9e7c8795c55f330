import { basic, bootTestPlatform, ROOT_PASSWORD, type TestPlatform } from './harness';

describe('identity over HTTP: users, tokens and authentication', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  const rootBasic = { authorization: basic('root', ROOT_PASSWORD) };
  const bobBasic = { authorization: basic('bob', 'bob-password') };

  beforeAll(async () => {
    harness = await bootTestPlatform();
  }, 120_000);
  afterAll(() => harness?.stop());

  it('creates a token with Basic auth and returns its secret once', async () => {
    const res = await api(undefined, 'POST', '/users/root/tokens', { name: 'laptop' }, rootBasic);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'laptop',
      sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
      token_last_eight: res.body.sha1.slice(-8),
      scopes: ['all'],
    });
    const list = await api(undefined, 'GET', '/users/root/tokens', undefined, rootBasic);
    expect(list.body).toEqual(
      expect.arrayContaining([
        {
          id: res.body.id,
          name: 'laptop',
          sha1: '',
          token_last_eight: res.body.token_last_eight,
          scopes: ['all'],
          created_at: expect.any(String),
          // Never used: Gitea's zero time, a date-time a Gitea client can read.
          last_used_at: '0001-01-01T00:00:00Z',
        },
      ]),
    );
  });

  it('authenticates with the header, ?token= and ?access_token=', async () => {
    const viaHeader = await api('root', 'GET', '/user');
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body).toMatchObject({
      login: 'root',
      username: 'root',
      email: 'root@example.com',
      is_admin: true,
      active: true,
      type: 0,
    });
    expect((await api(undefined, 'GET', `/user?token=${harness.tokens.root}`)).body.login).toBe('root');
    expect((await api(undefined, 'GET', `/user?access_token=${harness.tokens.root}`)).body.login).toBe('root');
  });

  it('answers 401 {message, url} without a token, with a bad token and with a wrong password', async () => {
    const none = await api(undefined, 'GET', '/user');
    expect(none).toEqual({ status: 401, body: { message: 'token is required', url: expect.stringMatching(/\/api\/v1\/openapi\.json$/) } });
    expect(
      (await api(undefined, 'GET', '/user', undefined, { authorization: 'token 0000000000000000000000000000000000000000' })).status,
    ).toBe(401);
    const wrong = await api(undefined, 'POST', '/users/root/tokens', { name: 'x' }, { authorization: basic('root', 'nope') });
    expect(wrong).toEqual({ status: 401, body: { message: 'invalid username or password', url: expect.any(String) } });
  });

  it('lets the site admin create users: 201, 422 on a taken name or email (as Gitea), 422 on a bad body', async () => {
    const created = await api('root', 'POST', '/admin/users', {
      username: 'bob',
      email: 'bob@example.com',
      password: 'bob-password',
      full_name: 'Bob',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ login: 'bob', full_name: 'Bob', is_admin: false });
    expect(await api('root', 'POST', '/admin/users', { username: 'BOB', email: 'other@example.com', password: 'bob-password' })).toMatchObject({
      status: 422,
      body: { message: 'user BOB already exists' },
    });
    expect(await api('root', 'POST', '/admin/users', { username: 'bobby', email: 'bob@example.com', password: 'bob-password' })).toMatchObject({
      status: 422,
      body: { message: 'email bob@example.com is already used' },
    });
    const bad = await api('root', 'POST', '/admin/users', { username: 'carol' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.email', 'body.password']);
    const malformed = await harness.send('root', 'POST', '/admin/users', '{', { 'content-type': 'application/json' });
    expect(malformed.status).toBe(422);
  });

  it('refuses non-admins with 403 {message, url}, and other users’ tokens', async () => {
    harness.tokens.bob = await harness.tokenFor('bob', 'bob-password');
    const denied = await api('bob', 'POST', '/admin/users', { username: 'eve', email: 'eve@example.com', password: 'eve-password' });
    expect(denied).toEqual({ status: 403, body: { message: 'you do not have the admin:site permission', url: expect.any(String) } });
    expect((await api(undefined, 'GET', '/users/root/tokens', undefined, bobBasic)).status).toBe(403);
  });

  it('refuses a deleted token with 401', async () => {
    const t = (await api(undefined, 'POST', '/users/bob/tokens', { name: 'temporary' }, bobBasic)).body;
    const withT = { authorization: `token ${t.sha1}` };
    expect((await api(undefined, 'GET', '/user', undefined, withT)).status).toBe(200);
    expect((await api(undefined, 'DELETE', `/users/bob/tokens/${t.id}`, undefined, bobBasic)).status).toBe(204);
    expect((await api(undefined, 'GET', '/user', undefined, withT)).status).toBe(401);
    expect((await api(undefined, 'DELETE', `/users/bob/tokens/${t.id}`, undefined, bobBasic)).status).toBe(404);
  });

  it('signs out: DELETE /user/token deletes the token presented, and only that one', async () => {
    const mint = async (name: string) => (await api(undefined, 'POST', '/users/bob/tokens', { name }, bobBasic)).body;
    const [session, other] = [await mint('console session'), await mint('kept')];
    const as = (t: { sha1: string }) => ({ authorization: `token ${t.sha1}` });
    expect((await api(undefined, 'DELETE', '/user/token', undefined, as(session))).status).toBe(204);
    expect((await api(undefined, 'GET', '/user', undefined, as(session))).status).toBe(401);
    expect((await api(undefined, 'DELETE', '/user/token', undefined, as(session))).status).toBe(401);
    // Another token of the same user stays, and Basic credentials cannot sign out (there is no token to end).
    expect((await api(undefined, 'GET', '/user', undefined, as(other))).status).toBe(200);
    expect((await api(undefined, 'DELETE', '/user/token', undefined, bobBasic)).status).toBe(401);
    const names = (await api(undefined, 'GET', '/users/bob/tokens', undefined, bobBasic)).body.map((t: { name: string }) => t.name);
    expect(names).toContain('kept');
    expect(names).not.toContain('console session');
  });
});

describe('user administration and one’s own account', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);

  beforeAll(async () => {
    // A low account limit, so a lockout is reached in a few tries.
    harness = await bootTestPlatform({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' });
    for (const login of ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus']) await harness.signUp(login);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('deactivating or prohibiting a user refuses its token and its password on the very next request', async () => {
    expect((await api('ann', 'GET', '/user')).status).toBe(200); // cached in the gateway now
    expect((await api('root', 'PATCH', '/admin/users/ann', { active: false })).body.active).toBe(false);
    expect(await api('ann', 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'user is not active' } });
    const basicAnn = { authorization: basic('ann', 'ann-password') };
    expect((await api(undefined, 'POST', '/users/ann/tokens', { name: 'x' }, basicAnn)).status).toBe(401);
    await api('root', 'PATCH', '/admin/users/ann', { active: true, prohibit_login: true });
    // Prohibited from logging in is 403, as Gitea answers it: the token and the password are right, the account may not use them.
    expect(await api('ann', 'GET', '/user')).toMatchObject({ status: 403, body: { message: 'user is prohibited from logging in' } });
    expect(await api(undefined, 'POST', '/users/ann/tokens', { name: 'x' }, basicAnn)).toMatchObject({ status: 403, body: { message: 'user is prohibited from logging in' } });
    expect((await api(undefined, 'POST', '/users/ann/tokens', { name: 'x' }, { authorization: basic('ann', 'wrong-password') })).status).toBe(401);
    await api('root', 'PATCH', '/admin/users/ann', { prohibit_login: false });
    expect((await api('ann', 'GET', '/user')).status).toBe(200);
  });

  it('a demoted site admin loses site rights on the very next request; one cannot demote oneself', async () => {
    expect((await api('root', 'PATCH', '/admin/users/ben', { admin: true })).body.is_admin).toBe(true);
    expect((await api('ben', 'GET', '/admin/users')).status).toBe(200);
    await api('root', 'PATCH', '/admin/users/ben', { admin: false });
    expect((await api('ben', 'GET', '/admin/users')).status).toBe(403);
    expect((await api('ben', 'GET', '/user')).body.is_admin).toBe(false);
    expect((await api('root', 'PATCH', '/admin/users/root', { admin: false })).status).toBe(422);
    expect((await api('ben', 'PATCH', '/admin/users/cat', { active: false })).status).toBe(403);
  });

  it('refuses to delete the last owner of an organization, and purge deletes the organization with the user', async () => {
    expect((await api('cat', 'POST', '/orgs', { username: 'cat-co' })).status).toBe(201);
    const refused = await api('root', 'DELETE', '/admin/users/cat');
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/last owner of cat-co/);
    expect((await api('cat', 'GET', '/user')).status).toBe(200);
    expect((await api('root', 'DELETE', '/admin/users/cat?purge=true')).status).toBe(204);
    expect((await api('cat', 'GET', '/user')).status).toBe(401);
    expect((await api('root', 'GET', '/orgs/cat-co')).status).toBe(404);
    expect((await api('root', 'GET', '/users/cat')).status).toBe(404);
    expect((await api('root', 'DELETE', '/admin/users/cat')).status).toBe(404);
  });

  it('deleting a member removes its memberships; the organization keeps its other owner', async () => {
    expect((await api('dan', 'POST', '/orgs', { username: 'dan-co' })).status).toBe(201);
    const owners = (await api('dan', 'GET', '/orgs/dan-co/teams')).body.find((t: { name: string }) => t.name === 'Owners');
    expect((await api('dan', 'PUT', `/teams/${owners.id}/members/eve`)).status).toBe(204);
    expect((await api('root', 'DELETE', '/admin/users/dan')).status).toBe(204);
    expect((await api('eve', 'GET', '/orgs/dan-co/members')).body.map((u: { login: string }) => u.login)).toEqual(['eve']);
  });

  it('allow_create_organization: false makes POST /orgs 403', async () => {
    await api('root', 'PATCH', '/admin/users/fay', { allow_create_organization: false });
    expect(await api('fay', 'POST', '/orgs', { username: 'fay-co' })).toMatchObject({
      status: 403,
      body: { message: 'you are not allowed to create organizations' },
    });
    await api('root', 'PATCH', '/admin/users/fay', { allow_create_organization: true });
    expect((await api('fay', 'POST', '/orgs', { username: 'fay-co' })).status).toBe(201);
  });

  it('a site admin lifts a sign-in lockout and sees it in the user object', async () => {
    const wrong = { authorization: basic('gus', 'not-the-password') };
    for (let i = 0; i < 3; i++) expect((await api(undefined, 'GET', '/users/gus/tokens', undefined, wrong)).status).toBe(401);
    const right = { authorization: basic('gus', 'gus-password') };
    expect((await api(undefined, 'GET', '/users/gus/tokens', undefined, right)).status).toBe(429);
    const listed = (await api('root', 'GET', '/admin/users?q=gus')).body;
    expect(listed).toHaveLength(1);
    expect(Date.parse(listed[0].sign_in_locked_until)).toBeGreaterThan(Date.now());
    expect((await api('root', 'DELETE', '/admin/users/gus/lockout')).status).toBe(204);
    expect((await api(undefined, 'GET', '/users/gus/tokens', undefined, right)).status).toBe(200);
    expect((await api('root', 'GET', '/admin/users?q=gus')).body[0].sign_in_locked_until).toBeUndefined();
  });

  it('changes the password with the old one; a wrong old one is 403 and counted', async () => {
    expect((await api('eve', 'POST', '/user/password', { old_password: 'nope-nope', new_password: 'eve-new-password' })).status).toBe(403);
    expect((await api('eve', 'POST', '/user/password', { old_password: 'eve-password', new_password: 'short' })).status).toBe(422);
    expect((await api('eve', 'POST', '/user/password', { old_password: 'eve-password', new_password: 'eve-new-password' })).status).toBe(204);
    expect((await api(undefined, 'GET', '/users/eve/tokens', undefined, { authorization: basic('eve', 'eve-password') })).status).toBe(401);
    expect((await api(undefined, 'GET', '/users/eve/tokens', undefined, { authorization: basic('eve', 'eve-new-password') })).status).toBe(200);
  });

  it('must_change_password: only sign-in, GET /user, the password change and sign-out work until it is changed', async () => {
    await api('root', 'PATCH', '/admin/users/fay', { must_change_password: true, password: 'fay-reset-password' });
    const token = await harness.tokenFor('fay', 'fay-reset-password', 'after-reset');
    const as = (method: string, path: string, body?: unknown) =>
      api(undefined, method, path, body, { authorization: `token ${token}` });
    expect((await as('GET', '/user')).body.login).toBe('fay');
    expect(await as('GET', '/user/orgs')).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^you must change your password/) } });
    expect((await as('POST', '/user/password', { old_password: 'fay-reset-password', new_password: 'fay-own-password' })).status).toBe(204);
    expect((await as('GET', '/user/orgs')).status).toBe(200);
  });

  it('reads and edits one’s own settings; others see a user without its email', async () => {
    const edited = await api('eve', 'PATCH', '/user/settings', { full_name: 'Eve E.', theme: 'dark', diff_view_style: 'split', hide_email: true });
    expect(edited.body).toMatchObject({ full_name: 'Eve E.', theme: 'dark', diff_view_style: 'split', hide_email: true, hide_activity: false });
    expect((await api('eve', 'GET', '/user/settings')).body).toEqual(edited.body);
    expect((await api('eve', 'GET', '/user')).body.full_name).toBe('Eve E.');
    expect((await api('eve', 'PATCH', '/user/settings', { diff_view_style: 'sideways' })).status).toBe(422);
    expect((await api('ann', 'GET', '/users/eve')).body).toMatchObject({ login: 'eve', email: '', full_name: 'Eve E.' });
    expect((await api('root', 'GET', '/users/eve')).body.email).toBe('eve@example.com');
    const found = await api('ann', 'GET', '/users/search?q=eve@');
    expect(found.body).toEqual({ ok: true, data: [] });
    expect((await api('ann', 'GET', '/users/nobody-here')).status).toBe(404);
  });

  it('admin changes are in the audit trail', async () => {
    const events = (await api('root', 'GET', '/admin/audit-events?limit=50')).body;
    const actions = new Set((Array.isArray(events) ? events : events.events ?? events.data ?? []).map((e: { action: string }) => e.action));
    for (const action of ['adminEditUser', 'adminDeleteUser', 'adminClearSignInLockout']) expect(actions).toContain(action);
  });
});
