import { basic, bootTestPlatform, type TestPlatform } from './harness';

/**
 * Service accounts over HTTP (docs/service-accounts.md): an organization's owner makes one holding a custom role and
 * mints its token; the token acts as the account — what the role allows and what a member sees, nothing more — until
 * it is revoked; the rows are for owners and site admins only, per organization; a site admin makes a site-wide one.
 */
describe('service accounts over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  const status = async (...args: Parameters<TestPlatform['api']>) => (await api(...args)).status;
  /** Calls as the holder of a service account's token, sent as `Authorization: Bearer`. */
  const as = (token: string, method: string, path: string, json?: unknown) =>
    api(undefined, method, path, json, { authorization: `Bearer ${token}` });
  let roleId: number;
  let rivalRoleId: number;
  let account: { id: number; name: string };
  let token: { id: number; sha1: string };

  beforeAll(async () => {
    harness = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted' });
    for (const name of ['owner', 'dev', 'rival']) await harness.signUp(name);
    expect((await api('owner', 'POST', '/orgs', { username: 'acme', visibility: 'private' })).status).toBe(201);
    expect((await api('rival', 'POST', '/orgs', { username: 'rival-org' })).status).toBe(201);
    const devs = await api('owner', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general' });
    expect(await status('owner', 'PUT', `/teams/${devs.body.id}/members/dev`)).toBe(204);
    const role = await api('owner', 'POST', '/authz/roles?org=acme', {
      name: 'team-maker',
      permissions: [{ namespace: 'team', action: 'create' }],
    });
    expect(role.status).toBe(201);
    roleId = role.body.id;
    const rivalRole = await api('rival', 'POST', '/authz/roles?org=rival-org', {
      name: 'r',
      permissions: [{ namespace: 'team', action: 'create' }],
    });
    rivalRoleId = rivalRole.body.id;
  }, 120_000);
  afterAll(() => harness?.stop());

  it("lets an organization's owner create one holding a custom role, and mint a token shown once", async () => {
    const created = await api('owner', 'POST', '/orgs/acme/service-accounts', {
      name: 'acme-ci',
      description: 'CI pipeline',
      roles: [roleId],
    });
    expect(created).toEqual({
      status: 201,
      body: {
        id: expect.any(Number),
        name: 'acme-ci',
        description: 'CI pipeline',
        org: 'acme',
        roles: [roleId],
        site_admin: false,
        kubernetes_subjects: [],
        active: true,
        created_at: expect.stringMatching(/Z$/),
        created_by: { id: harness.ids.owner, login: 'owner' },
      },
    });
    account = created.body;
    expect((await api('owner', 'GET', '/orgs/acme/service-accounts')).body).toEqual([created.body]);
    expect((await api('owner', 'GET', `/orgs/acme/service-accounts/${account.id}`)).body).toEqual(created.body);

    const minted = await api('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'pipeline' });
    expect(minted).toEqual({
      status: 201,
      body: {
        id: expect.any(Number),
        name: 'pipeline',
        sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
        token_last_eight: expect.any(String),
        created_at: expect.any(String),
      },
    });
    token = minted.body;
    const listed = await api('owner', 'GET', `/orgs/acme/service-accounts/${account.id}/tokens`);
    expect(listed.body).toEqual([
      { id: token.id, name: 'pipeline', token_last_eight: token.sha1.slice(-8), created_at: minted.body.created_at, last_used_at: '0001-01-01T00:00:00Z' },
    ]);
  });

  it('authenticates as the account and allows exactly what its role and a membership allow', async () => {
    const me = await as(token.sha1, 'GET', '/user');
    expect(me.body).toMatchObject({ id: account.id, login: 'acme-ci', type: 2 });
    // `token` works as well as `Bearer`.
    expect(await status(undefined, 'GET', '/user', undefined, { authorization: `token ${token.sha1}` })).toBe(200);
    // What a member sees, in its private organization.
    expect((await as(token.sha1, 'GET', '/orgs/acme')).status).toBe(200);
    // Its own organizations: the one it belongs to.
    const mine = await as(token.sha1, 'GET', '/user/orgs');
    expect([mine.status, mine.body.map((o: { username: string }) => o.username)]).toEqual([200, ['acme']]);
    expect((await as(token.sha1, 'GET', '/orgs/acme/teams')).status).toBe(200);
    // What its role gives.
    expect((await as(token.sha1, 'POST', '/orgs/acme/teams', { name: 'made-by-ci', type: 'general' })).status).toBe(201);
    // Nothing more.
    expect((await as(token.sha1, 'PATCH', '/orgs/acme', { description: 'changed' })).status).toBe(403);
    expect((await as(token.sha1, 'GET', '/orgs/acme/service-accounts')).status).toBe(403);
    expect((await as(token.sha1, 'POST', '/orgs/rival-org/teams', { name: 'x', type: 'general' })).status).toBe(403);
    expect((await as(token.sha1, 'GET', '/admin/audit-events')).status).toBe(403);
    // It is no person: no team of its own organization takes it, no password signs it in, no token of its own making.
    const owners = (await api('owner', 'GET', '/orgs/acme/teams')).body.find((t: { name: string }) => t.name === 'Owners');
    expect(await status('owner', 'PUT', `/teams/${owners.id}/members/acme-ci`)).toBe(400);
    expect(await status(undefined, 'POST', '/users/acme-ci/tokens', { name: 'own' }, { authorization: basic('acme-ci', '') })).toBe(401);
    expect(await status('owner', 'GET', '/orgs/acme/members/acme-ci')).toBe(404);
    // Its use is recorded with the token.
    const [used] = (await api('owner', 'GET', `/orgs/acme/service-accounts/${account.id}/tokens`)).body;
    expect(used.last_used_at).toEqual(expect.stringMatching(/Z$/));
    // The role names it among its principals.
    expect((await api('owner', 'GET', `/authz/roles/${roleId}/principals?org=acme`)).body).toContainEqual({
      type: 'user',
      id: account.id,
      name: 'acme-ci',
      teams: [],
    });
  });

  it('is for owners and site admins: a member gets 403, another organization 404, a stranger to the private one 404', async () => {
    expect(await status('dev', 'GET', '/orgs/acme/service-accounts')).toBe(403);
    expect(await status('dev', 'POST', '/orgs/acme/service-accounts', { name: 'sneaky' })).toBe(403);
    expect(await status('dev', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(403);
    expect(await status('rival', 'GET', `/orgs/rival-org/service-accounts/${account.id}`)).toBe(404);
    expect(await status('rival', 'DELETE', `/orgs/rival-org/service-accounts/${account.id}`)).toBe(404);
    expect(await status('rival', 'POST', `/orgs/rival-org/service-accounts/${account.id}/tokens`, { name: 'steal' })).toBe(404);
    expect(await status('rival', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(404);
    // Site admins hold manage_owners everywhere; the site-wide rows do not show an organization's account.
    expect(await status('root', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(200);
    expect(await status('root', 'GET', `/admin/service-accounts/${account.id}`)).toBe(404);
    expect(await status(undefined, 'GET', '/orgs/acme/service-accounts')).toBe(401);
  });

  it('refuses taken names with 409, and bad bodies with 422 (400 for a role of another organization)', async () => {
    for (const name of ['acme-ci', 'ACME-CI', 'owner', 'rival-org'])
      expect(await status('owner', 'POST', '/orgs/acme/service-accounts', { name })).toBe(409);
    expect(await status('root', 'POST', '/admin/service-accounts', { name: 'acme-ci' })).toBe(409);
    expect(await status('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'pipeline' })).toBe(409);
    const unknownField = await api('owner', 'POST', '/orgs/acme/service-accounts', { name: 'x', site_admin: true });
    expect(unknownField.status).toBe(422);
    for (const body of [
      {},
      { name: 'has space' },
      { name: 'x', roles: ['1'] },
      { name: 'x', extra: 1 },
    ])
      expect(await status('owner', 'POST', '/orgs/acme/service-accounts', body)).toBe(422);
    expect(await status('root', 'POST', '/orgs/acme/service-accounts', { name: 'x', kubernetes_subjects: ['not a subject'] })).toBe(422);
    expect(await status('root', 'POST', '/admin/service-accounts', { name: 'x', roles: [roleId] })).toBe(422);
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { nickname: 'x' })).toBe(422);
    expect(await status('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, {})).toBe(422);
    const foreign = await api('owner', 'POST', '/orgs/acme/service-accounts', { name: 'x', roles: [rivalRoleId] });
    expect(foreign).toMatchObject({ status: 400, body: { message: `roles ${rivalRoleId} are not custom roles of this organization` } });
    expect((await api('owner', 'GET', '/orgs/acme/service-accounts')).body).toHaveLength(1);
  });

  it("binds Kubernetes ServiceAccounts for site admins only: an owner cannot claim another team's", async () => {
    const claim = { kubernetes_subjects: ['team-b/worker'] };
    expect(await api('owner', 'POST', '/orgs/acme/service-accounts', { name: 'squatter', ...claim })).toMatchObject({
      status: 403,
      body: { message: expect.stringContaining('Kubernetes subjects are bound by site admins') },
    });
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, claim)).toBe(403);
    // Clearing takes nothing; a site admin binds one on the organization's account.
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { kubernetes_subjects: [] })).toBe(200);
    expect(await api('root', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, claim)).toMatchObject({ status: 200, body: claim });
    expect(await api('root', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { kubernetes_subjects: [] })).toMatchObject({ status: 200 });
    expect((await api('owner', 'GET', '/orgs/acme/service-accounts')).body).toHaveLength(1);
  });

  it('refuses a revoked token on the very next request, and a deactivated account at once', async () => {
    expect((await as(token.sha1, 'GET', '/user')).status).toBe(200);
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${account.id}/tokens/${token.id}`)).toBe(204);
    expect((await as(token.sha1, 'GET', '/user')).status).toBe(401);
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${account.id}/tokens/${token.id}`)).toBe(404);

    const second = (await api('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'second' })).body;
    expect((await as(second.sha1, 'GET', '/user')).status).toBe(200);
    const paused = await api('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { active: false, roles: [] });
    expect(paused.body).toMatchObject({ active: false, roles: [] });
    expect((await as(second.sha1, 'GET', '/user')).status).toBe(401);
    expect((await api('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { active: true })).body.active).toBe(true);
    expect((await as(second.sha1, 'GET', '/user')).status).toBe(200);
    // Its role was taken with the edit.
    expect((await as(second.sha1, 'POST', '/orgs/acme/teams', { name: 'no-longer', type: 'general' })).status).toBe(403);
  });

  it('records every change in the audit trail', async () => {
    const trail = await api('root', 'GET', '/admin/audit-events?target=/orgs/acme/service-accounts');
    const actions = trail.body.map((e: { action: string }) => e.action);
    for (const action of [
      'orgCreateServiceAccount',
      'orgCreateServiceAccountToken',
      'orgDeleteServiceAccountToken',
      'orgEditServiceAccount',
    ])
      expect(actions).toContain(action);
    expect(trail.body.find((e: { action: string }) => e.action === 'orgCreateServiceAccount').actor).toEqual({
      id: harness.ids.owner,
      login: 'owner',
    });
  });

  it('deletes the account with its tokens', async () => {
    const last = (await api('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'last' })).body;
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${account.id}`)).toBe(204);
    expect((await as(last.sha1, 'GET', '/user')).status).toBe(401);
    expect(await status('owner', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(404);
    expect((await api('owner', 'GET', '/orgs/acme/service-accounts')).body).toEqual([]);
    // Its name is free again.
    const again = await api('owner', 'POST', '/orgs/acme/service-accounts', { name: 'acme-ci' });
    expect(again.status).toBe(201);
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${again.body.id}`)).toBe(204);
  });

  it('goes with its organization', async () => {
    expect((await api('owner', 'POST', '/orgs', { username: 'short-lived' })).status).toBe(201);
    const made = (await api('owner', 'POST', '/orgs/short-lived/service-accounts', { name: 'short-lived-ci' })).body;
    const { sha1 } = (await api('owner', 'POST', `/orgs/short-lived/service-accounts/${made.id}/tokens`, { name: 'ci' })).body;
    expect((await as(sha1, 'GET', '/user')).status).toBe(200);
    expect(await status('owner', 'DELETE', '/orgs/short-lived')).toBe(204);
    expect((await as(sha1, 'GET', '/user')).status).toBe(401);
  });

  it('lets a site admin keep site-wide ones, site admins among them; nobody else', async () => {
    expect(await status('owner', 'GET', '/admin/service-accounts')).toBe(403);
    expect(await status('owner', 'POST', '/admin/service-accounts', { name: 'site-ops' })).toBe(403);
    const created = await api('root', 'POST', '/admin/service-accounts', {
      name: 'site-ops',
      site_admin: true,
      kubernetes_subjects: ['ops/auditor'],
    });
    expect(created).toMatchObject({
      status: 201,
      body: { name: 'site-ops', org: null, roles: [], site_admin: true, kubernetes_subjects: ['ops/auditor'], active: true },
    });
    expect((await api('root', 'GET', '/admin/service-accounts')).body.map((a: { name: string }) => a.name)).toEqual(['site-ops']);
    expect(await status('root', 'GET', `/orgs/acme/service-accounts/${created.body.id}`)).toBe(404);
    const { sha1, id: tokenId } = (await api('root', 'POST', `/admin/service-accounts/${created.body.id}/tokens`, { name: 'ops' })).body;
    expect((await as(sha1, 'GET', '/admin/audit-events')).status).toBe(200);
    expect((await as(sha1, 'GET', '/orgs/acme')).status).toBe(200);

    const demoted = await api('root', 'PATCH', `/admin/service-accounts/${created.body.id}`, { site_admin: false });
    expect(demoted.body.site_admin).toBe(false);
    expect((await as(sha1, 'GET', '/admin/audit-events')).status).toBe(403);
    expect((await api('root', 'GET', `/admin/service-accounts/${created.body.id}/tokens`)).body).toEqual([
      expect.objectContaining({ id: tokenId, name: 'ops', last_used_at: expect.any(String) }),
    ]);
    expect(await status('root', 'DELETE', `/admin/service-accounts/${created.body.id}/tokens/${tokenId}`)).toBe(204);
    expect((await as(sha1, 'GET', '/user')).status).toBe(401);
    expect(await status('root', 'DELETE', `/admin/service-accounts/${created.body.id}`)).toBe(204);
    expect((await api('root', 'GET', '/admin/service-accounts')).body).toEqual([]);
  });
});
