import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { startPlatform, type LocalPlatform } from '../src/platform';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('identity over HTTP: users, tokens and authentication (spec section 5)', () => {
  let platform: LocalPlatform;
  let drop: () => Promise<void>;
  let api: (path: string, init?: RequestInit & { json?: unknown }) => Promise<{ status: number; body: any }>;
  let adminToken: string;

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    platform = await startPlatform({
      DATABASE_URL: db.url,
      NATS_URL: await testNatsUrl(),
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: 'root-password',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
    });
    api = async (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.json !== undefined) headers.set('content-type', 'application/json');
      const res = await fetch(`${platform.url}api/v1${path}`, {
        ...init,
        headers,
        body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const created = await api('/users/root/tokens', {
      method: 'POST',
      headers: { authorization: basic('root', 'root-password') },
      json: { name: 'admin' },
    });
    adminToken = created.body.sha1;
  });
  afterAll(async () => {
    await platform?.stop();
    await drop?.();
  });

  it('creates a token with Basic auth and returns its secret once', async () => {
    const res = await api('/users/root/tokens', {
      method: 'POST',
      headers: { authorization: basic('root', 'root-password') },
      json: { name: 'laptop' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'laptop',
      sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
      token_last_eight: res.body.sha1.slice(-8),
    });
    const list = await api('/users/root/tokens', { headers: { authorization: basic('root', 'root-password') } });
    expect(list.body).toEqual(
      expect.arrayContaining([{ id: res.body.id, name: 'laptop', sha1: '', token_last_eight: res.body.token_last_eight }]),
    );
  });

  it('authenticates with the header, ?token= and ?access_token=', async () => {
    const viaHeader = await api('/user', { headers: { authorization: `token ${adminToken}` } });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body).toMatchObject({
      login: 'root',
      username: 'root',
      email: 'root@example.com',
      is_admin: true,
      active: true,
      type: 0,
    });
    expect((await api(`/user?token=${adminToken}`)).body.login).toBe('root');
    expect((await api(`/user?access_token=${adminToken}`)).body.login).toBe('root');
  });

  it('answers 401 {message, url} without a token, with a bad token and with a wrong password', async () => {
    const none = await api('/user');
    expect(none).toEqual({ status: 401, body: { message: 'token is required', url: expect.stringMatching(/\/api\/v1\/openapi\.json$/) } });
    expect((await api('/user', { headers: { authorization: 'token 0000000000000000000000000000000000000000' } })).status).toBe(401);
    const wrong = await api('/users/root/tokens', {
      method: 'POST',
      headers: { authorization: basic('root', 'nope') },
      json: { name: 'x' },
    });
    expect(wrong).toEqual({ status: 401, body: { message: 'invalid username or password', url: expect.any(String) } });
  });

  it('lets the site admin create users: 201, 409 on a taken name or email, 422 on a bad body', async () => {
    const auth = { authorization: `token ${adminToken}` };
    const created = await api('/admin/users', {
      method: 'POST',
      headers: auth,
      json: { username: 'bob', email: 'bob@example.com', password: 'bob-password', full_name: 'Bob' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ login: 'bob', full_name: 'Bob', is_admin: false });
    expect(
      (
        await api('/admin/users', {
          method: 'POST',
          headers: auth,
          json: { username: 'BOB', email: 'other@example.com', password: 'bob-password' },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await api('/admin/users', {
          method: 'POST',
          headers: auth,
          json: { username: 'bobby', email: 'bob@example.com', password: 'bob-password' },
        })
      ).status,
    ).toBe(409);
    const bad = await api('/admin/users', { method: 'POST', headers: auth, json: { username: 'carol' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.email', 'body.password']);
    const malformed = await fetch(`${platform.url}api/v1/admin/users`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{',
    });
    expect(malformed.status).toBe(422);
  });

  it('refuses non-admins with 403 {message, url}, and other users’ tokens', async () => {
    const bobToken = (
      await api('/users/bob/tokens', { method: 'POST', headers: { authorization: basic('bob', 'bob-password') }, json: { name: 'cli' } })
    ).body;
    const denied = await api('/admin/users', {
      method: 'POST',
      headers: { authorization: `token ${bobToken.sha1}` },
      json: { username: 'eve', email: 'eve@example.com', password: 'eve-password' },
    });
    expect(denied).toEqual({ status: 403, body: { message: 'you do not have the admin:site permission', url: expect.any(String) } });
    expect((await api('/users/root/tokens', { headers: { authorization: basic('bob', 'bob-password') } })).status).toBe(403);
  });

  it('refuses a deleted token with 401', async () => {
    const t = (
      await api('/users/bob/tokens', {
        method: 'POST',
        headers: { authorization: basic('bob', 'bob-password') },
        json: { name: 'temporary' },
      })
    ).body;
    expect((await api('/user', { headers: { authorization: `token ${t.sha1}` } })).status).toBe(200);
    expect(
      (await api(`/users/bob/tokens/${t.id}`, { method: 'DELETE', headers: { authorization: basic('bob', 'bob-password') } })).status,
    ).toBe(204);
    expect((await api('/user', { headers: { authorization: `token ${t.sha1}` } })).status).toBe(401);
    expect(
      (await api(`/users/bob/tokens/${t.id}`, { method: 'DELETE', headers: { authorization: basic('bob', 'bob-password') } })).status,
    ).toBe(404);
  });
});
