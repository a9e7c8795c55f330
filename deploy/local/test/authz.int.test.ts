import { authzV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { bootTestPlatform, type TestPlatform } from './harness';

// Authorization under `/authz` (custom roles, the permission catalog, allowed permissions) over HTTP, as a client
// would use it: every row, with the 401/403/404/400/422 paths, and the effect of every role change on the very next
// request.

describe('authorization and custom roles over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let ids: TestPlatform['ids'];
  let acme: number;
  let devs: number;
  let ops: number;
  let globexTeam: number;

  async function team(org: string, name: string, as: string, members: string[]): Promise<number> {
    const created = await api(as, 'POST', `/orgs/${org}/teams`, { name, type: 'general', permission: 'read' });
    expect(created.status).toBe(201);
    for (const m of members) expect((await api(as, 'PUT', `/teams/${created.body.id}/members/${m}`)).status).toBe(204);
    return created.body.id;
  }

  // acme (owner olivia): team devs with mia, team ops with nora. globex (owner otto): team g.
  beforeAll(async () => {
    harness = await bootTestPlatform({ MAX_ROLES_PER_TEAM: '2' }, { apps: ['authz', 'orgs-teams'] });
    ids = harness.ids;
    for (const name of ['olivia', 'mia', 'nora', 'otto']) await harness.signUp(name);
    const org = await api('olivia', 'POST', '/orgs', { username: 'acme' });
    expect(org.status).toBe(201);
    acme = org.body.id;
    expect((await api('otto', 'POST', '/orgs', { username: 'globex' })).status).toBe(201);
    devs = await team('acme', 'devs', 'olivia', ['mia']);
    ops = await team('acme', 'ops', 'olivia', ['nora']);
    globexTeam = await team('globex', 'g', 'otto', []);
  }, 120_000);
  afterAll(() => harness?.stop());

  const ROWS: [string, string][] = [
    ['GET', '/authz/objects/organization/1/allowed-permissions'],
    ['POST', '/authz/objects/allowed-permissions'],
    ['GET', '/authz/roles/available_permissions'],
    ['GET', '/authz/roles'],
    ['POST', '/authz/roles'],
    ['GET', '/authz/roles/1'],
    ['PUT', '/authz/roles/1'],
    ['DELETE', '/authz/roles/1'],
    ['GET', '/authz/roles/1/principals'],
  ];
  const bodyFor = (method: string, path: string) =>
    method === 'POST' && path.includes('objects')
      ? [{ objectType: 'organization', objectID: 1 }]
      : method === 'GET' || method === 'DELETE'
        ? undefined
        : { name: 'x', permissions: [] };

  describe('authentication and the org context', () => {
    it.each(ROWS)('%s %s answers 401 {message, url} without a token', async (method, path) => {
      const res = await api(undefined, method, `${path}?org=acme`, bodyFor(method, path));
      expect(res).toEqual({ status: 401, body: { message: expect.any(String), url: expect.stringMatching(/openapi\.json$/) } });
    });

    it.each(ROWS)('%s %s answers 400 without ?org=, 403 for an unknown org (404 to a site admin)', async (method, path) => {
      expect((await api('olivia', method, path, bodyFor(method, path))).status).toBe(400);
      expect(await api('olivia', method, `${path}?org=nosuchorg`, bodyFor(method, path))).toEqual({
        status: 403,
        body: { message: 'you cannot act for organization "nosuchorg"', url: expect.stringMatching(/openapi\.json$/) },
      });
      expect((await api('root', method, `${path}?org=nosuchorg`, bodyFor(method, path))).status).toBe(404);
    });

    it.each(ROWS)('%s %s answers 403 {message, url} to a signed-in non-member', async (method, path) => {
      const res = await api('otto', method, `${path}?org=acme`, bodyFor(method, path));
      expect(res).toEqual({
        status: 403,
        body: { message: expect.stringMatching(/member/), url: expect.stringMatching(/openapi\.json$/) },
      });
    });

    it('answers 403 for a private organization the caller is not in, as for an unknown one; its path stays 404', async () => {
      expect((await api('mia', 'POST', '/orgs', { username: 'hidden', visibility: 'private' })).status).toBe(201);
      expect((await api('otto', 'GET', '/authz/roles?org=hidden')).body.message).toBe('you cannot act for organization "hidden"');
      expect((await api('otto', 'GET', '/authz/roles?org=hidden')).status).toBe(403);
      expect((await api('otto', 'GET', '/orgs/hidden')).status).toBe(404);
      expect((await api('mia', 'GET', '/authz/roles?org=hidden')).status).toBe(200);
    });

    it('lets a site admin who is not a member through the membership gate (docs/decisions.md D15)', async () => {
      expect((await api('root', 'GET', '/authz/roles?org=acme')).status).toBe(200);
    });
  });

  describe('GET /authz/roles/available_permissions', () => {
    it('answers the catalog to any member: exactly the assignable permissions, with their associations', async () => {
      const res = await api('mia', 'GET', '/authz/roles/available_permissions?org=acme');
      expect(res.status).toBe(200);
      const entries: any[] = res.body.permissions;
      expect(entries).toContainEqual({ namespace: 'org', action: 'edit', description: 'Edit the organization' });
      expect(entries).toContainEqual({
        namespace: 'role',
        action: 'edit',
        description: 'Edit custom roles',
        associated: [{ namespace: 'role', action: 'view', required: true }],
      });
      const pairs = entries.map((e) => `${e.action}:${e.namespace}`);
      for (const notAssignable of ['delete:org', 'member:org', 'join:team', 'view_contracts:site_admin'])
        expect(pairs).not.toContain(notAssignable);
      expect(new Set(pairs).size).toBe(pairs.length);
    });
  });

  describe('role CRUD', () => {
    let role: any;

    it('lists no roles at first', async () => {
      expect(await api('mia', 'GET', '/authz/roles?org=acme')).toEqual({ status: 200, body: [] });
    });

    it('POST: 403 for a member without create_role:org', async () => {
      const res = await api('mia', 'POST', '/authz/roles?org=acme', { name: 'R', permissions: [] });
      expect(res.status).toBe(403);
      expect((await api('mia', 'GET', '/authz/roles?org=acme')).body).toEqual([]);
    });

    it('POST: 422 for a malformed body', async () => {
      const post = (json: unknown) => api('olivia', 'POST', '/authz/roles?org=acme', json);
      expect((await post({ permissions: [] })).status).toBe(422);
      expect((await post({ name: 'R' })).status).toBe(422);
      expect((await post({ name: 'R', permissions: 'org:edit' })).status).toBe(422);
      expect((await post({ name: 'R', permissions: [{ namespace: 'org' }] })).status).toBe(422);
      expect((await post({ name: 'R', permissions: [], teamIDs: ['1'] })).status).toBe(422);
      expect((await post({ name: 7, permissions: [] })).status).toBe(422);
      const raw = await harness.send('olivia', 'POST', '/authz/roles?org=acme', '{"name": ', { 'content-type': 'application/json' });
      expect(raw.status).toBe(422);
    });

    it('POST: 400 for unknown or unassignable permissions, teams of another org, duplicate names', async () => {
      const post = (json: unknown) => api('olivia', 'POST', '/authz/roles?org=acme', json);
      const bad = await post({ name: 'R', permissions: [{ namespace: 'org', action: 'fly' }] });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('fly:org');
      expect((await post({ name: 'R', permissions: [{ namespace: 'org', action: 'delete' }] })).status).toBe(400);
      expect((await post({ name: 'R', permissions: [], teamIDs: [globexTeam] })).status).toBe(400);
      expect((await post({ name: 'R', permissions: [], teamIDs: [999999] })).status).toBe(400);
      expect((await api('olivia', 'GET', '/authz/roles?org=acme')).body).toEqual([]);
    });

    it('POST: 201 RoleResponse with server-assigned id, owner_id and timestamps; the grant works on the next request', async () => {
      // Before: nora (team ops) may not create roles.
      expect((await api('nora', 'POST', '/authz/roles?org=acme', { name: 'N', permissions: [] })).status).toBe(403);
      const res = await api('olivia', 'POST', '/authz/roles?org=acme', {
        name: 'Role makers',
        description: 'may create roles',
        permissions: [
          { namespace: 'org', action: 'create_role' },
          { namespace: 'role', action: 'view' },
        ],
        teamIDs: [ops],
      });
      expect(res.status).toBe(201);
      role = res.body;
      expect(role).toEqual({
        id: expect.any(Number),
        name: 'Role makers',
        owner_id: acme,
        description: 'may create roles',
        permissions: [
          { namespace: 'org', action: 'create_role' },
          { namespace: 'role', action: 'view' },
        ],
        team_ids: [ops],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      });
      expect(role).not.toHaveProperty('teamIDs');
      expect(Math.abs(Date.parse(role.created_at) - Date.now())).toBeLessThan(60_000);
      // After: nora may, mia (team devs) still may not.
      const byNora = await api('nora', 'POST', '/authz/roles?org=acme', { name: 'Nora made', permissions: [] });
      expect(byNora.status).toBe(201);
      expect((await api('mia', 'POST', '/authz/roles?org=acme', { name: 'Mia made', permissions: [] })).status).toBe(403);
      expect((await api('olivia', 'POST', '/authz/roles?org=acme', { name: 'role MAKERS', permissions: [] })).status).toBe(400);
      expect((await api('olivia', 'DELETE', `/authz/roles/${byNora.body.id}?org=acme`)).status).toBe(204);
    });

    it('GET list: every role of the org, to any member', async () => {
      const res = await api('mia', 'GET', '/authz/roles?org=acme');
      expect(res).toEqual({ status: 200, body: [role] });
      // globex has none of acme's roles.
      expect(await api('otto', 'GET', '/authz/roles?org=globex')).toEqual({ status: 200, body: [] });
    });

    it('GET one: 200 to a member (view:role), 404 unknown or of another org, 400 for a bad id', async () => {
      expect(await api('mia', 'GET', `/authz/roles/${role.id}?org=acme`)).toEqual({ status: 200, body: role });
      expect((await api('mia', 'GET', '/authz/roles/999999?org=acme')).status).toBe(404);
      expect((await api('otto', 'GET', `/authz/roles/${role.id}?org=globex`)).status).toBe(404);
      expect((await api('mia', 'GET', '/authz/roles/abc?org=acme')).status).toBe(400);
    });

    it('PUT: 403 without edit:role; 404 unknown; 422 malformed; 400 bad permission or foreign team; nothing changes', async () => {
      const put = (as: string, json: unknown, id = role.id) => api(as, 'PUT', `/authz/roles/${id}?org=acme`, json);
      expect((await put('mia', { name: 'Mine' })).status).toBe(403);
      expect((await put('nora', { name: 'Mine' })).status).toBe(403);
      expect((await put('olivia', { name: 'x' }, 999999)).status).toBe(404);
      expect((await put('olivia', { permissions: { namespace: 'org', action: 'edit' } })).status).toBe(422);
      expect((await put('olivia', { teamIDs: 'all' })).status).toBe(422);
      expect((await put('olivia', { name: '' })).status).toBe(422);
      expect((await put('olivia', { permissions: [{ namespace: 'site_admin', action: 'view_contracts' }] })).status).toBe(400);
      expect((await put('olivia', { teamIDs: [globexTeam] })).status).toBe(400);
      expect((await api('olivia', 'GET', `/authz/roles/${role.id}?org=acme`)).body).toEqual(role);
    });

    it('PUT: replaces supplied fields wholesale; the grants move with the teams on the next request', async () => {
      const put = (json: unknown) => api('olivia', 'PUT', `/authz/roles/${role.id}?org=acme`, json);
      const renamed = await put({ name: 'Role keepers' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ ...role, name: 'Role keepers', updated_at: expect.any(String) });

      const moved = await put({
        permissions: [
          { namespace: 'role', action: 'viewer' },
          { namespace: 'role', action: 'edit' },
        ],
        teamIDs: [devs],
        description: null,
      });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({
        name: 'Role keepers',
        description: 'may create roles',
        permissions: [
          { namespace: 'role', action: 'viewer' },
          { namespace: 'role', action: 'edit' },
        ],
        team_ids: [devs],
      });
      // nora lost create_role with her team; mia (devs) gained edit:role and viewer:role.
      expect((await api('nora', 'POST', '/authz/roles?org=acme', { name: 'Again', permissions: [] })).status).toBe(403);
      expect((await api('mia', 'GET', `/authz/roles/${role.id}/principals?org=acme`)).status).toBe(200);
      const byMia = await api('mia', 'PUT', `/authz/roles/${role.id}?org=acme`, { description: 'kept by devs' });
      expect(byMia.status).toBe(200);
      expect(byMia.body.description).toBe('kept by devs');
      role = byMia.body;
    });

    it('GET principals: the assigned teams and their members, with names; 403 without viewer:role', async () => {
      const res = await api('olivia', 'GET', `/authz/roles/${role.id}/principals?org=acme`);
      expect(res).toEqual({
        status: 200,
        body: [
          { type: 'team', id: devs, name: 'devs' },
          { type: 'user', id: ids.mia, name: 'mia', teams: [devs] },
        ],
      });
      expect((await api('nora', 'GET', `/authz/roles/${role.id}/principals?org=acme`)).status).toBe(403);
      expect((await api('olivia', 'GET', '/authz/roles/999999/principals?org=acme')).status).toBe(404);
      // A new member of an assigned team is a principal at once.
      expect((await api('olivia', 'PUT', `/teams/${devs}/members/nora`)).status).toBe(204);
      const after = await api('olivia', 'GET', `/authz/roles/${role.id}/principals?org=acme`);
      expect(after.body).toContainEqual({ type: 'user', id: ids.nora, name: 'nora', teams: [devs] });
      expect((await api('olivia', 'DELETE', `/teams/${devs}/members/nora`)).status).toBe(204);
    });

    it('GET principals keeps a member whose account no longer exists, without a name', async () => {
      const authz = createClient(authzV1.AuthzServiceService, harness.grpcAddress('authz'), { name: 'authz' });
      const ghost = { user: 'user:987654', relation: 'member', object: `team:${devs}` };
      try {
        await authz.writeTuples({ writes: [ghost], deletes: [] });
        const res = await api('olivia', 'GET', `/authz/roles/${role.id}/principals?org=acme`);
        expect(res.status).toBe(200);
        expect(res.body).toContainEqual({ type: 'user', id: 987654, teams: [devs] });
        expect(res.body).toContainEqual({ type: 'user', id: ids.mia, name: 'mia', teams: [devs] });
      } finally {
        await authz.writeTuples({ writes: [], deletes: [ghost] });
        authz.close();
      }
    });

    it('teams created with assignedRoleIDs show in team_ids; more than MAX_ROLES_PER_TEAM is 400', async () => {
      const other = await api('olivia', 'POST', '/authz/roles?org=acme', { name: 'Other', permissions: [] });
      const third = await api('olivia', 'POST', '/authz/roles?org=acme', { name: 'Third', permissions: [] });
      const qa = await api('olivia', 'POST', '/orgs/acme/teams', {
        name: 'qa',
        type: 'general',
        assignedRoleIDs: [role.id, other.body.id],
      });
      expect(qa.status).toBe(201);
      expect((await api('olivia', 'GET', `/authz/roles/${role.id}?org=acme`)).body.team_ids).toEqual(
        [devs, qa.body.id].sort((a, b) => a - b),
      );
      // qa holds two roles, the maximum here: a third one is refused, by role update and by role creation.
      const full = await api('olivia', 'PUT', `/authz/roles/${third.body.id}?org=acme`, { teamIDs: [qa.body.id] });
      expect(full.status).toBe(400);
      expect(full.body.message).toMatch(/maximum of 2/);
      expect(
        (await api('olivia', 'POST', '/authz/roles?org=acme', { name: 'Fourth', permissions: [], teamIDs: [qa.body.id] })).status,
      ).toBe(400);
      for (const r of [other.body.id, third.body.id])
        expect((await api('olivia', 'DELETE', `/authz/roles/${r}?org=acme`)).status).toBe(204);
      role = (await api('olivia', 'GET', `/authz/roles/${role.id}?org=acme`)).body;
    });

    it('DELETE: 403 without delete:role, 404 unknown; 204 removes every grant it carried on the next request', async () => {
      expect((await api('mia', 'DELETE', `/authz/roles/${role.id}?org=acme`)).status).toBe(403);
      expect((await api('olivia', 'DELETE', '/authz/roles/999999?org=acme')).status).toBe(404);
      // Before: mia edits the role through it.
      expect((await api('mia', 'PUT', `/authz/roles/${role.id}?org=acme`, {})).status).toBe(200);
      expect(await api('olivia', 'DELETE', `/authz/roles/${role.id}?org=acme`)).toEqual({ status: 204, body: undefined });
      expect((await api('olivia', 'GET', `/authz/roles/${role.id}?org=acme`)).status).toBe(404);
      expect((await api('olivia', 'DELETE', `/authz/roles/${role.id}?org=acme`)).status).toBe(404);
      expect((await api('mia', 'GET', '/authz/roles?org=acme')).body).toEqual([]);
      const held = await api('mia', 'GET', `/authz/objects/organization/${acme}/allowed-permissions?org=acme`);
      expect(held.body.allowedPermissions).not.toContain('edit_role');
      expect(held.body.allowedPermissions).not.toContain('view_role_principals');
    });
  });

  describe('allowed-permissions', () => {
    const one = (as: string, type: string, id: number | string) =>
      api(as, 'GET', `/authz/objects/${type}/${id}/allowed-permissions?org=acme`);

    it('GET answers the relations held on the organization — owner and member alike (never 500)', async () => {
      const owner = await one('olivia', 'organization', acme);
      expect(owner.status).toBe(200);
      expect(owner.body).toEqual({
        objectType: 'organization',
        objectID: acme,
        allowedPermissions: expect.arrayContaining(['owner', 'member', 'delete', 'create_role']),
      });
      const member = await one('mia', 'organization', acme);
      expect(member.body.allowedPermissions).toContain('member');
      expect(member.body.allowedPermissions).toContain('view_role');
      expect(member.body.allowedPermissions).not.toContain('owner');
      expect(member.body.allowedPermissions).not.toContain('create_role');
    });

    it('GET answers every other object type: user (own id only), team, cluster, contract, robot_ac, token', async () => {
      expect(await one('mia', 'user', ids.mia)).toEqual({
        status: 200,
        body: { objectType: 'user', objectID: ids.mia, allowedPermissions: [] },
      });
      const team = await one('olivia', 'team', devs);
      expect(team.body.allowedPermissions).toEqual(expect.arrayContaining(['view', 'edit', 'delete', 'add_member']));
      const asMember = await one('mia', 'team', devs);
      expect(asMember.body.allowedPermissions).toEqual(expect.arrayContaining(['member', 'view', 'leave']));
      expect(asMember.body.allowedPermissions).not.toContain('delete');
      for (const type of ['cluster', 'contract', 'robot_ac', 'token']) {
        expect(await one('mia', type, 424242)).toEqual({
          status: 200,
          body: { objectType: type, objectID: 424242, allowedPermissions: [] },
        });
      }
    });

    it('GET answers 400 for a bad type, a bad id, or another user', async () => {
      expect((await one('mia', 'role', 1)).status).toBe(400);
      expect((await one('mia', 'spaceship', 1)).status).toBe(400);
      expect((await one('mia', 'team', 'abc')).status).toBe(400);
      expect((await one('mia', 'team', 0)).status).toBe(400);
      expect((await one('mia', 'team', -3)).status).toBe(400);
      expect((await one('mia', 'user', ids.nora)).status).toBe(400);
    });

    it('POST answers each identifier in request order', async () => {
      const res = await api('olivia', 'POST', '/authz/objects/allowed-permissions?org=acme', [
        { objectType: 'team', objectID: ops },
        { objectType: 'organization', objectID: acme },
        { objectType: 'user', objectID: ids.olivia },
        { objectType: 'team', objectID: globexTeam },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.map((o: any) => [o.objectType, o.objectID])).toEqual([
        ['team', ops],
        ['organization', acme],
        ['user', ids.olivia],
        ['team', globexTeam],
      ]);
      expect(res.body[0].allowedPermissions).toContain('edit');
      expect(res.body[1].allowedPermissions).toContain('owner');
      expect(res.body[2].allowedPermissions).toEqual([]);
      expect(res.body[3].allowedPermissions).toEqual([]);
      expect(await api('mia', 'POST', '/authz/objects/allowed-permissions?org=acme', [])).toEqual({
        status: 200,
        body: [],
      });
    });

    it('POST answers 400 when any element has a bad type or id, 422 for a malformed body', async () => {
      const post = (json: unknown) => api('mia', 'POST', '/authz/objects/allowed-permissions?org=acme', json);
      expect(
        (
          await post([
            { objectType: 'team', objectID: devs },
            { objectType: 'role', objectID: 1 },
          ])
        ).status,
      ).toBe(400);
      expect((await post([{ objectType: 'team', objectID: 0 }])).status).toBe(400);
      expect((await post([{ objectType: 'user', objectID: ids.olivia }])).status).toBe(400);
      expect((await post({ objectType: 'team', objectID: devs })).status).toBe(422);
      expect((await post([{ objectType: 'team' }])).status).toBe(422);
      expect((await post([{ objectType: 'team', objectID: 'one' }])).status).toBe(422);
      expect((await post([{ objectType: 'team', objectID: 1.5 }])).status).toBe(422);
      expect((await post(['team:1'])).status).toBe(422);
      const raw = await harness.send('mia', 'POST', '/authz/objects/allowed-permissions?org=acme', '[{"objectType": "team",', {
        'content-type': 'application/json',
      });
      expect(raw.status).toBe(422);
    });
  });

  describe('no one gives more than they hold: role writes', () => {
    // rita makes and edits roles through role `makers` on team makers; sam's role `leads` (team leads) carries
    // edit:org and list:bus-token besides; `big` carries those two and is on no team; team spare has no roles.
    // A role may carry, and be given to teams, only by whoever holds all it carries (docs/authorization.md).
    const MAKING = [
      { namespace: 'org', action: 'create_role' },
      { namespace: 'role', action: 'edit' },
    ];
    const BIG = [
      { namespace: 'org', action: 'edit' },
      { namespace: 'bus-token', action: 'list' },
    ];
    let makers: number;
    let spare: number;
    let makerRole: number;
    let big: number;
    const post = (as: string, json: unknown) => api(as, 'POST', '/authz/roles?org=acme', json);
    const put = (as: string, id: number, json: unknown) => api(as, 'PUT', `/authz/roles/${id}?org=acme`, json);
    const get = async (id: number) => (await api('olivia', 'GET', `/authz/roles/${id}?org=acme`)).body;
    const roleNames = async () => (await api('olivia', 'GET', '/authz/roles?org=acme')).body.map((r: { name: string }) => r.name);

    beforeAll(async () => {
      for (const login of ['rita', 'sam']) await harness.signUp(login);
      makers = await team('acme', 'makers', 'olivia', ['rita']);
      const leads = await team('acme', 'leads', 'olivia', ['sam']);
      spare = await team('acme', 'spare', 'olivia', []);
      makerRole = (await post('olivia', { name: 'makers', permissions: MAKING, teamIDs: [makers] })).body.id;
      expect((await post('olivia', { name: 'leads', permissions: [...MAKING, ...BIG], teamIDs: [leads] })).status).toBe(201);
      big = (await post('olivia', { name: 'big', permissions: BIG })).body.id;
    });

    it('POST with permissions beyond the caller: 403 naming them, and no role', async () => {
      const refused = await post('rita', { name: 'escalate', permissions: [...MAKING, ...BIG] });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain('edit:org');
      expect(refused.body.message).toContain('list:bus-token');
      expect(refused.body.message).not.toContain('create_role:org');
      expect((await post('rita', { name: 'escalate', permissions: BIG, teamIDs: [makers] })).status).toBe(403);
      expect(await roleNames()).not.toContain('escalate');
      expect((await api('rita', 'PATCH', '/orgs/acme', { description: 'mine' })).status).toBe(403);
      // What she holds she may give, to her own team too (every member views roles).
      const held = await post('rita', {
        name: 'more makers',
        permissions: [...MAKING, { namespace: 'role', action: 'view' }],
        teamIDs: [makers],
      });
      expect(held.status).toBe(201);
      expect((await api('olivia', 'DELETE', `/authz/roles/${held.body.id}?org=acme`)).status).toBe(204);
    });

    it('PUT with permissions beyond the caller, or teamIDs for a role beyond the caller: 403, and nothing changes', async () => {
      const mine = await get(makerRole);
      const bigBefore = await get(big);
      const more = await put('rita', makerRole, { permissions: [...MAKING, ...BIG] });
      expect(more.status).toBe(403);
      expect(more.body.message).toContain('edit:org');
      const assign = await put('rita', big, { name: 'mine now', teamIDs: [makers] });
      expect(assign.status).toBe(403);
      expect(assign.body.message).toContain('list:bus-token');
      expect((await put('rita', big, { teamIDs: [spare] })).status).toBe(403);
      expect(await get(makerRole)).toEqual(mine);
      expect(await get(big)).toEqual(bigBefore);
      expect((await api('rita', 'PATCH', '/orgs/acme', { description: 'mine' })).status).toBe(403);
      expect((await api('rita', 'GET', '/orgs/acme/tokens/bus-tokens')).status).toBe(403);
      // Changes that give nothing she does not hold: a description, taking teams away, permissions she holds.
      expect((await put('rita', big, { description: 'seen by rita', teamIDs: [] })).status).toBe(200);
      expect((await put('rita', makerRole, { permissions: MAKING, teamIDs: [makers] })).status).toBe(200);
    });

    it('owners, site admins and holders of every permission a role carries may give it', async () => {
      expect((await put('sam', big, { teamIDs: [spare] })).status).toBe(200);
      const bySam = await post('sam', { name: 'by sam', permissions: BIG, teamIDs: [spare] });
      expect(bySam.status).toBe(201);
      expect((await put('olivia', big, { teamIDs: [makers] })).status).toBe(200);
      expect((await api('rita', 'PATCH', '/orgs/acme', { description: 'by rita' })).status).toBe(200);
      expect((await put('olivia', big, { teamIDs: [] })).status).toBe(200);
      expect((await api('rita', 'PATCH', '/orgs/acme', { description: 'by rita' })).status).toBe(403);
      const byRoot = await post('root', { name: 'by root', permissions: BIG });
      expect(byRoot.status).toBe(201);
      expect((await put('root', byRoot.body.id, { permissions: [...BIG, ...MAKING], teamIDs: [makers] })).status).toBe(200);
      expect((await api('rita', 'GET', '/orgs/acme/tokens/bus-tokens')).status).not.toBe(403);
    });
  });

  describe('an organization imported in bulk (POST /admin/orgs/import)', () => {
    // The rows, the CLI and orgs-teams' part are a tier down (docs/import.md); here the tuples the import writes and
    // the custom role it makes reach authz and the ordinary routes, as for an organization made call by call.
    it('is read and authorized by the ordinary routes as one made call by call, its custom role included', async () => {
      const imported = {
        name: 'imported',
        full_name: 'Imported Inc.',
        owners: ['olivia'],
        teams: [
          { name: 'devs', members: ['mia'], roles: ['editors'] },
          { name: 'ops', members: ['nora'], permission: 'write' },
        ],
        roles: [{ name: 'editors', permissions: [{ namespace: 'org', action: 'edit' }] }],
      };
      const res = await api('root', 'POST', '/admin/orgs/import', { organizations: [imported] });
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([expect.objectContaining({ name: 'imported', outcome: 'created', errors: [] })]);

      expect((await api('olivia', 'GET', '/orgs/imported')).body).toMatchObject({ username: 'imported', full_name: 'Imported Inc.' });
      const teams = await api('mia', 'GET', '/orgs/imported/teams');
      expect(teams.body.map((t: { name: string; permission: string }) => [t.name, t.permission])).toEqual([
        ['Owners', 'owner'],
        ['devs', 'read'],
        ['ops', 'write'],
      ]);
      const importedDevs = teams.body.find((t: { name: string }) => t.name === 'devs').id as number;
      const members = await api('olivia', 'GET', `/teams/${importedDevs}/members`);
      expect(members.body.map((u: { login: string }) => u.login)).toEqual(['mia']);
      expect((await api('olivia', 'GET', '/authz/roles?org=imported')).body).toEqual([
        expect.objectContaining({ name: 'editors', team_ids: [importedDevs] }),
      ]);
      // The role reaches devs' members, and only them; the owner team owns the organization.
      expect((await api('mia', 'PATCH', '/orgs/imported', { description: 'edited by a role' })).status).toBe(200);
      expect((await api('nora', 'PATCH', '/orgs/imported', { description: 'not allowed' })).status).toBe(403);
      expect((await api('olivia', 'PATCH', '/orgs/imported', { location: 'Earth' })).status).toBe(200);
      expect((await api('olivia', 'GET', '/orgs/imported')).body).toMatchObject({ description: 'edited by a role', location: 'Earth' });
    });
  });
});
