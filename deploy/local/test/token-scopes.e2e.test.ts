import { giteaApi } from 'gitea-js';
import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

// Gitea's token scopes on the whole platform (docs/authentication.md, "Token scopes"): made with the token, returned
// in lists, enforced on every route, refused with 403 naming the scope the route needs.

describe('token scopes', () => {
  let harness: TestPlatform;
  const create = (body: unknown): Promise<Reply> =>
    harness.api(undefined, 'POST', '/users/alice/tokens', body, { authorization: basic('alice', 'alice-password') });
  const as = (token: string, method: string, path: string, json?: unknown) =>
    harness.api(undefined, method, path, json, { authorization: `token ${token}` });

  beforeAll(async () => {
    harness = await bootTestPlatform();
    await harness.signUp('alice');
  }, 120_000);
  afterAll(() => harness?.stop());

  it('limits a read:user token to reading the user: creating an organization is 403 naming write:organization', async () => {
    const made = await create({ name: 'reader', scopes: ['read:user'] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'reader', scopes: ['read:user'] });
    const token = made.body.sha1 as string;

    expect((await as(token, 'GET', '/user')).body.login).toBe('alice');
    const refused = await as(token, 'POST', '/orgs', { username: 'scoped-co' });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('required scope(s): [write:organization]');
    expect((await harness.api('root', 'GET', '/orgs/scoped-co')).status).toBe(404);
    // Reading organizations is outside read:user too, and so is a public row when the token is presented.
    expect((await as(token, 'GET', '/user/orgs')).status).toBe(403);
    expect((await as(token, 'GET', '/version')).body.message).toContain('[read:misc]');
  });

  it('lets write cover read and keeps an unscoped token able to do everything', async () => {
    const writer = (await create({ name: 'org-writer', scopes: ['write:organization'] })).body.sha1 as string;
    expect((await as(writer, 'POST', '/orgs', { username: 'writer-co' })).status).toBe(201);
    expect((await as(writer, 'GET', '/orgs/writer-co/teams')).status).toBe(200);
    expect((await as(writer, 'GET', '/user')).status).toBe(403);

    const plain = await create({ name: 'plain' });
    expect(plain.body.scopes).toEqual(['all']);
    expect((await as(plain.body.sha1, 'GET', '/user')).status).toBe(200);
  });

  it('refuses scopes outside the vocabulary with 400 naming them, and makes nothing', async () => {
    const bad = await create({ name: 'repo', scopes: ['write:repository', 'read:user'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('write:repository');
    const listed = await harness.api(undefined, 'GET', '/users/alice/tokens', undefined, { authorization: basic('alice', 'alice-password') });
    expect(listed.body.map((t: { name: string }) => t.name)).not.toContain('repo');
  });

  it('returns each token with its scopes in the list, as gitea-js reads them', async () => {
    const gitea = giteaApi(harness.platform.url.replace(/\/$/, ''), {
      customFetch: (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', basic('alice', 'alice-password'));
        return fetch(input, { ...init, headers });
      },
    });
    const made = await gitea.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['read:organization', 'read:misc'] });
    expect(made.data.scopes).toEqual(['read:organization', 'read:misc']);
    const { data } = await gitea.users.userGetTokens('alice');
    const byName = Object.fromEntries(data.map((t) => [t.name, t.scopes]));
    expect(byName).toMatchObject({ reader: ['read:user'], 'org-writer': ['write:organization'], plain: ['all'] });
    expect(byName['from-gitea-js']).toEqual(['read:organization', 'read:misc']);
  });
});
