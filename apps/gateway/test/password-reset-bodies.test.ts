import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The forgotten-password rows are the platform's own bodies (no Gitea client sends them): a field they do not know is
// refused with 422 naming it, and orgs-teams is asked nothing; the bodies the console sends are taken.

describe('forgotten-password bodies at the edge', () => {
  let base: string;
  let close: () => void;
  let backends: FakeBackends;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: { identity: { checkPasswordReset: async () => ({ login: 'omar', expiresUnix: 1_900_000_000 }) } },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });
  beforeEach(() => backends.reset());

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : ((await res.json()) as { message?: string }) };
  };

  it.each([
    ['/user/password-reset', { login: 'omar', email: 'omar@example.com' }, 'email'],
    ['/user/password-reset/check', { code: 'a.b', login: 'omar' }, 'login'],
    ['/user/password-reset/new-password', { code: 'a.b', new_password: 'long-enough', confirm: 'long-enough' }, 'confirm'],
  ])('refuses an unknown field of %s with 422 naming it, asking orgs-teams nothing', async (path, body, field) => {
    const refused = await post(path, body);
    expect(refused.status).toBe(422);
    expect(refused.body?.message).toContain(field);
    expect(backends.orgsTeams.calls).toEqual([]);
  });

  it('takes the bodies the console sends', async () => {
    expect((await post('/user/password-reset', { login: 'omar' })).status).toBe(204);
    expect((await post('/user/password-reset/check', { code: 'a.b' })).status).toBe(200);
    expect((await post('/user/password-reset/new-password', { code: 'a.b', new_password: 'long-enough' })).status).toBe(204);
    expect(backends.orgsTeams.calls.map((c) => c.method)).toEqual([
      'identity.requestPasswordReset',
      'identity.checkPasswordReset',
      'identity.resetPassword',
    ]);
  });
});
