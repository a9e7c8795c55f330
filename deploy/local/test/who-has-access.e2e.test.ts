import { bootTestPlatform, formOf, type TestPlatform } from './harness';

// "Who has access" over HTTP: an org owner or a site admin sees every user holding each permission of the
// organization with the grant that gives it; nobody else may look, and another organization's objects are not found.

describe('GET /authz/objects/{objectType}/{objID}/access', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let acme: number;
  let globex: number;
  let devs: number;
  let editors: number;

  // acme (owner olivia): team devs (mia) carries the custom role Editors (edit:org); nora is a plain member.
  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const name of ['olivia', 'mia', 'nora', 'otto']) await harness.signUp(name);
    acme = (await api('olivia', 'POST', '/orgs', { username: 'acme' })).body.id;
    globex = (await api('otto', 'POST', '/orgs', { username: 'globex' })).body.id;
    const team = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general', permission: 'read' });
    devs = team.body.id;
    expect((await api('olivia', 'PUT', `/teams/${devs}/members/mia`)).status).toBe(204);
    const plain = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'readers', type: 'general', permission: 'read' });
    expect((await api('olivia', 'PUT', `/teams/${plain.body.id}/members/nora`)).status).toBe(204);
    const role = await api('olivia', 'POST', '/authz/roles?org=acme', {
      name: 'Editors',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIDs: [devs],
    });
    expect(role.status).toBe(201);
    editors = role.body.id;
  }, 120_000);
  afterAll(() => harness?.stop());

  const path = (type: string, id: string | number) => `/authz/objects/${type}/${id}/access?org=acme`;

  it('shows an owner every holder of each permission, with the owner, team, role and site-admin paths and names', async () => {
    const res = await api('olivia', 'GET', path('organization', acme));
    expect(res.status).toBe(200);
    expect(res.body.object).toBe(`organization:${acme}`);
    const edit = res.body.permissions.find((p: { permission: string }) => p.permission === 'edit:org');
    const byLogin = Object.fromEntries(edit.users.map((u: { login: string; paths: unknown[] }) => [u.login, u.paths]));
    expect(byLogin.olivia).toEqual([{ kind: 'owner', team_id: expect.any(Number), team_name: 'Owners' }]);
    expect(byLogin.mia).toEqual([{ kind: 'role', role_id: editors, role_name: 'Editors', team_id: devs, team_name: 'devs' }]);
    expect(byLogin.root).toEqual([{ kind: 'site_admin' }]);
    expect(byLogin.nora).toBeUndefined();
    // Membership grants the read permissions, and says so.
    const viewTeam = res.body.permissions.find((p: { relation: string }) => p.relation === 'view_team');
    const nora = viewTeam.users.find((u: { login: string }) => u.login === 'nora');
    expect(nora.paths).toEqual([expect.objectContaining({ kind: 'relation', relation: 'member' })]);
  });

  it('shows a renamed team, a renamed role and a new holder on the very next request', async () => {
    const holdersOfEdit = async () => {
      const res = await api('olivia', 'GET', path('organization', acme));
      expect(res.status).toBe(200);
      const edit = res.body.permissions.find((p: { permission: string }) => p.permission === 'edit:org');
      return Object.fromEntries(edit.users.map((u: { login: string; paths: unknown[] }) => [u.login, u.paths]));
    };
    expect((await holdersOfEdit()).mia).toEqual([expect.objectContaining({ team_name: 'devs', role_name: 'Editors' })]);
    expect((await api('olivia', 'PATCH', `/teams/${devs}`, { name: 'builders' })).status).toBe(200);
    expect((await holdersOfEdit()).mia).toEqual([expect.objectContaining({ team_name: 'builders', role_name: 'Editors' })]);
    expect((await api('olivia', 'PUT', `/authz/roles/${editors}?org=acme`, { name: 'Writers' })).status).toBe(200);
    expect((await holdersOfEdit()).mia).toEqual([expect.objectContaining({ team_name: 'builders', role_name: 'Writers' })]);
    expect((await holdersOfEdit()).otto).toBeUndefined();
    expect((await api('olivia', 'PUT', `/teams/${devs}/members/otto`)).status).toBe(204);
    expect((await holdersOfEdit()).otto).toEqual([expect.objectContaining({ kind: 'role', role_name: 'Writers' })]);
    // Put back as the other tests expect it.
    expect((await api('olivia', 'DELETE', `/teams/${devs}/members/otto`)).status).toBe(204);
    expect((await holdersOfEdit()).otto).toBeUndefined();
    expect((await api('olivia', 'PATCH', `/teams/${devs}`, { name: 'devs' })).status).toBe(200);
    expect((await api('olivia', 'PUT', `/authz/roles/${editors}?org=acme`, { name: 'Editors' })).status).toBe(200);
  });

  it('answers a site admin too', async () => {
    expect((await api('root', 'GET', path('organization', acme))).status).toBe(200);
  });

  it('refuses members who are not owners, even one whose role lets them edit the organization', async () => {
    for (const who of ['mia', 'nora']) {
      const res = await api(who, 'GET', path('organization', acme));
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/owner or site admin/);
    }
    expect((await api('otto', 'GET', path('organization', acme))).status).toBe(403);
  });

  it("shows who holds each permission of one of the organization's contracts, whose owner authz is told, not kept", async () => {
    const end = String(Math.floor(Date.now() / 1000) + 365 * 24 * 3600);
    const contract = async (org: string) => {
      const created = await harness.send('root', 'POST', `/contracts?org=${org}`, formOf({ products: 'productdb', end }));
      expect(created.status).toBe(201);
      return created.body[0].id as number;
    };
    const ours = await contract('acme');
    const theirs = await contract('globex');
    const res = await api('olivia', 'GET', path('contract', ours));
    expect(res.status).toBe(200);
    expect(res.body.object).toBe(`contract:${ours}`);
    const holders = (relation: string) =>
      Object.fromEntries(
        res.body.permissions
          .find((p: { relation: string }) => p.relation === relation)
          .users.map((u: { login: string; paths: { kind: string }[] }) => [u.login, u.paths.map((p) => p.kind)]),
      );
    // Every member of acme sees its contract; its owners, through the Owners team, issue its licenses.
    expect(Object.keys(holders('view')).sort()).toEqual(expect.arrayContaining(['mia', 'nora', 'olivia']));
    expect(holders('issue_license').olivia).toEqual(['owner']);
    expect(holders('issue_license').nora).toBeUndefined();
    // Another organization's contract, and one that does not exist, are not found here.
    expect((await api('olivia', 'GET', path('contract', theirs))).status).toBe(404);
    expect((await api('olivia', 'GET', path('contract', 987_654))).status).toBe(404);
  });

  it('answers 404 for another organization, or a contract or cluster the organization does not own; 400 for another kind', async () => {
    expect((await api('olivia', 'GET', path('organization', globex))).status).toBe(404);
    expect((await api('olivia', 'GET', path('contract', 'c-none'))).status).toBe(404);
    expect((await api('olivia', 'GET', path('cluster', '8d3b1f0e-0000-4000-8000-000000000000'))).status).toBe(404);
    expect((await api('olivia', 'GET', path('team', devs))).status).toBe(400);
  });
});
