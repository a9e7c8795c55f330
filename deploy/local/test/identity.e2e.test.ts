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
    });
    const list = await api(undefined, 'GET', '/users/root/tokens', undefined, rootBasic);
    expect(list.body).toEqual(
      expect.arrayContaining([{ id: res.body.id, name: 'laptop', sha1: '', token_last_eight: res.body.token_last_eight }]),
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

  it('lets the site admin create users: 201, 409 on a taken name or email, 422 on a bad body', async () => {
    const created = await api('root', 'POST', '/admin/users', {
      username: 'bob',
      email: 'bob@example.com',
      password: 'bob-password',
      full_name: 'Bob',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ login: 'bob', full_name: 'Bob', is_admin: false });
    expect(
      (await api('root', 'POST', '/admin/users', { username: 'BOB', email: 'other@example.com', password: 'bob-password' })).status,
    ).toBe(409);
    expect(
      (await api('root', 'POST', '/admin/users', { username: 'bobby', email: 'bob@example.com', password: 'bob-password' })).status,
    ).toBe(409);
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
