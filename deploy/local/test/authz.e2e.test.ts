import { authzV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { startPlatform, type LocalPlatform } from '../src/platform';

// Spec section 4.1 over HTTP, as a client would use it: every row, with the 401/403/404/400/422 paths, and
// the effect of every role change on the very next request.

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
type Api = (path: string, init?: RequestInit & { json?: unknown; as?: string }) => Promise<{ status: number; body: any }>;

describe('authorization and custom roles over HTTP (spec section 4.1)', () => {
  let platform: LocalPlatform;
  let drop: () => Promise<void>;
  let api: Api;
  const tokens: Record<string, string> = {};
  const ids: Record<string, number> = {};
  let acme: number;
  let devs: number;
  let ops: number;
  let globexTeam: number;

  /** Creates a user (site admin), and a token for it (Basic auth). */
  async function user(name: string) {
    const created = await api('/admin/users', {
      method: 'POST',
      as: 'root',
      json: { username: name, email: `${name}@example.com`, password: `${name}-password` },
    });
    expect(created.status).toBe(201);
    ids[name] = created.body.id;
    const token = await api(`/users/${name}/tokens`, {
      method: 'POST',
      headers: { authorization: basic(name, `${name}-password`) },
      json: { name: 'e2e' },
    });
    tokens[name] = token.body.sha1;
  }

  async function team(org: string, name: string, as: string, members: string[]): Promise<number> {
    const created = await api(`/orgs/${org}/teams`, { method: 'POST', as, json: { name, type: 'general', permission: 'read' } });
    expect(created.status).toBe(201);
    for (const m of members) expect((await api(`/teams/${created.body.id}/members/${m}`, { method: 'PUT', as })).status).toBe(204);
    return created.body.id;
  }

  // acme (owner olivia): team devs with mia, team ops with nora. globex (owner otto): team g.
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
      MAX_ROLES_PER_TEAM: '2',
    });
    api = async (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.json !== undefined) headers.set('content-type', 'application/json');
      if (init.as) headers.set('authorization', `token ${tokens[init.as]}`);
      const res = await fetch(`${platform.url}api/v1${path}`, {
        ...init,
        headers,
        body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    tokens.root = (
      await api('/users/root/tokens', { method: 'POST', headers: { authorization: basic('root', 'root-password') }, json: { name: 'e2e' } })
    ).body.sha1;
    for (const name of ['olivia', 'mia', 'nora', 'otto']) await user(name);
    const org = await api('/orgs', { method: 'POST', as: 'olivia', json: { username: 'acme' } });
    expect(org.status).toBe(201);
    acme = org.body.id;
    expect((await api('/orgs', { method: 'POST', as: 'otto', json: { username: 'globex' } })).status).toBe(201);
    devs = await team('acme', 'devs', 'olivia', ['mia']);
    ops = await team('acme', 'ops', 'olivia', ['nora']);
    globexTeam = await team('globex', 'g', 'otto', []);
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await drop?.();
  });

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
      const res = await api(`${path}?org=acme`, { method, json: bodyFor(method, path) });
      expect(res).toEqual({ status: 401, body: { message: expect.any(String), url: expect.stringMatching(/openapi\.json$/) } });
    });

    it.each(ROWS)('%s %s answers 400 without ?org= and 404 for an unknown org', async (method, path) => {
      expect((await api(path, { method, as: 'olivia', json: bodyFor(method, path) })).status).toBe(400);
      expect((await api(`${path}?org=nosuchorg`, { method, as: 'olivia', json: bodyFor(method, path) })).status).toBe(404);
    });

    it.each(ROWS)('%s %s answers 403 {message, url} to a signed-in non-member', async (method, path) => {
      const res = await api(`${path}?org=acme`, { method, as: 'otto', json: bodyFor(method, path) });
      expect(res).toEqual({
        status: 403,
        body: { message: expect.stringMatching(/member/), url: expect.stringMatching(/openapi\.json$/) },
      });
    });

    it('treats a site admin who is not a member as a non-member (membership is the member relation)', async () => {
      expect((await api('/authz/roles?org=acme', { as: 'root' })).status).toBe(403);
    });
  });

  describe('GET /authz/roles/available_permissions', () => {
    it('answers the catalog to any member: exactly the assignable permissions, with their associations', async () => {
      const res = await api('/authz/roles/available_permissions?org=acme', { as: 'mia' });
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
      expect(await api('/authz/roles?org=acme', { as: 'mia' })).toEqual({ status: 200, body: [] });
    });

    it('POST: 403 for a member without create_role:org', async () => {
      const res = await api('/authz/roles?org=acme', { method: 'POST', as: 'mia', json: { name: 'R', permissions: [] } });
      expect(res.status).toBe(403);
      expect((await api('/authz/roles?org=acme', { as: 'mia' })).body).toEqual([]);
    });

    it('POST: 422 for a malformed body', async () => {
      const post = (json: unknown) => api('/authz/roles?org=acme', { method: 'POST', as: 'olivia', json });
      expect((await post({ permissions: [] })).status).toBe(422);
      expect((await post({ name: 'R' })).status).toBe(422);
      expect((await post({ name: 'R', permissions: 'org:edit' })).status).toBe(422);
      expect((await post({ name: 'R', permissions: [{ namespace: 'org' }] })).status).toBe(422);
      expect((await post({ name: 'R', permissions: [], teamIDs: ['1'] })).status).toBe(422);
      expect((await post({ name: 7, permissions: [] })).status).toBe(422);
      const raw = await api('/authz/roles?org=acme', {
        method: 'POST',
        as: 'olivia',
        headers: { 'content-type': 'application/json' },
        body: '{"name": ',
      });
      expect(raw.status).toBe(422);
    });

    it('POST: 400 for unknown or unassignable permissions, teams of another org, duplicate names', async () => {
      const post = (json: unknown) => api('/authz/roles?org=acme', { method: 'POST', as: 'olivia', json });
      const bad = await post({ name: 'R', permissions: [{ namespace: 'org', action: 'fly' }] });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('fly:org');
      expect((await post({ name: 'R', permissions: [{ namespace: 'org', action: 'delete' }] })).status).toBe(400);
      expect((await post({ name: 'R', permissions: [], teamIDs: [globexTeam] })).status).toBe(400);
      expect((await post({ name: 'R', permissions: [], teamIDs: [999999] })).status).toBe(400);
      expect((await api('/authz/roles?org=acme', { as: 'olivia' })).body).toEqual([]);
    });

    it('POST: 201 RoleResponse with server-assigned id, owner_id and timestamps; the grant works on the next request', async () => {
      // Before: nora (team ops) may not create roles.
      expect((await api('/authz/roles?org=acme', { method: 'POST', as: 'nora', json: { name: 'N', permissions: [] } })).status).toBe(403);
      const res = await api('/authz/roles?org=acme', {
        method: 'POST',
        as: 'olivia',
        json: {
          name: 'Role makers',
          description: 'may create roles',
          permissions: [
            { namespace: 'org', action: 'create_role' },
            { namespace: 'role', action: 'view' },
          ],
          teamIDs: [ops],
        },
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
      const byNora = await api('/authz/roles?org=acme', { method: 'POST', as: 'nora', json: { name: 'Nora made', permissions: [] } });
      expect(byNora.status).toBe(201);
      expect((await api('/authz/roles?org=acme', { method: 'POST', as: 'mia', json: { name: 'Mia made', permissions: [] } })).status).toBe(
        403,
      );
      expect(
        (await api('/authz/roles?org=acme', { method: 'POST', as: 'olivia', json: { name: 'role MAKERS', permissions: [] } })).status,
      ).toBe(400);
      expect((await api(`/authz/roles/${byNora.body.id}?org=acme`, { method: 'DELETE', as: 'olivia' })).status).toBe(204);
    });

    it('GET list: every role of the org, to any member', async () => {
      const res = await api('/authz/roles?org=acme', { as: 'mia' });
      expect(res).toEqual({ status: 200, body: [role] });
      // globex has none of acme's roles.
      expect(await api('/authz/roles?org=globex', { as: 'otto' })).toEqual({ status: 200, body: [] });
    });

    it('GET one: 200 to a member (view:role), 404 unknown or of another org, 400 for a bad id', async () => {
      expect(await api(`/authz/roles/${role.id}?org=acme`, { as: 'mia' })).toEqual({ status: 200, body: role });
      expect((await api('/authz/roles/999999?org=acme', { as: 'mia' })).status).toBe(404);
      expect((await api(`/authz/roles/${role.id}?org=globex`, { as: 'otto' })).status).toBe(404);
      expect((await api('/authz/roles/abc?org=acme', { as: 'mia' })).status).toBe(400);
    });

    it('PUT: 403 without edit:role; 404 unknown; 422 malformed; 400 bad permission or foreign team; nothing changes', async () => {
      const put = (as: string, json: unknown, id = role.id) => api(`/authz/roles/${id}?org=acme`, { method: 'PUT', as, json });
      expect((await put('mia', { name: 'Mine' })).status).toBe(403);
      expect((await put('nora', { name: 'Mine' })).status).toBe(403);
      expect((await put('olivia', { name: 'x' }, 999999)).status).toBe(404);
      expect((await put('olivia', { permissions: { namespace: 'org', action: 'edit' } })).status).toBe(422);
      expect((await put('olivia', { teamIDs: 'all' })).status).toBe(422);
      expect((await put('olivia', { name: '' })).status).toBe(422);
      expect((await put('olivia', { permissions: [{ namespace: 'site_admin', action: 'view_contracts' }] })).status).toBe(400);
      expect((await put('olivia', { teamIDs: [globexTeam] })).status).toBe(400);
      expect((await api(`/authz/roles/${role.id}?org=acme`, { as: 'olivia' })).body).toEqual(role);
    });

    it('PUT: replaces supplied fields wholesale; the grants move with the teams on the next request', async () => {
      const put = (json: unknown) => api(`/authz/roles/${role.id}?org=acme`, { method: 'PUT', as: 'olivia', json });
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
      expect((await api('/authz/roles?org=acme', { method: 'POST', as: 'nora', json: { name: 'Again', permissions: [] } })).status).toBe(
        403,
      );
      expect((await api(`/authz/roles/${role.id}/principals?org=acme`, { as: 'mia' })).status).toBe(200);
      const byMia = await api(`/authz/roles/${role.id}?org=acme`, { method: 'PUT', as: 'mia', json: { description: 'kept by devs' } });
      expect(byMia.status).toBe(200);
      expect(byMia.body.description).toBe('kept by devs');
      role = byMia.body;
    });

    it('GET principals: the assigned teams and their members, with names; 403 without viewer:role', async () => {
      const res = await api(`/authz/roles/${role.id}/principals?org=acme`, { as: 'olivia' });
      expect(res).toEqual({
        status: 200,
        body: [
          { type: 'team', id: devs, name: 'devs' },
          { type: 'user', id: ids.mia, name: 'mia', teams: [devs] },
        ],
      });
      expect((await api(`/authz/roles/${role.id}/principals?org=acme`, { as: 'nora' })).status).toBe(403);
      expect((await api('/authz/roles/999999/principals?org=acme', { as: 'olivia' })).status).toBe(404);
      // A new member of an assigned team is a principal at once.
      expect((await api(`/teams/${devs}/members/nora`, { method: 'PUT', as: 'olivia' })).status).toBe(204);
      const after = await api(`/authz/roles/${role.id}/principals?org=acme`, { as: 'olivia' });
      expect(after.body).toContainEqual({ type: 'user', id: ids.nora, name: 'nora', teams: [devs] });
      expect((await api(`/teams/${devs}/members/nora`, { method: 'DELETE', as: 'olivia' })).status).toBe(204);
    });

    it('GET principals keeps a member whose account no longer exists, without a name', async () => {
      const authz = createClient(authzV1.AuthzServiceService, `127.0.0.1:${platform.apps.get('authz')!.grpcPort}`, { name: 'authz' });
      const ghost = { user: 'user:987654', relation: 'member', object: `team:${devs}` };
      try {
        await authz.writeTuples({ writes: [ghost], deletes: [] });
        const res = await api(`/authz/roles/${role.id}/principals?org=acme`, { as: 'olivia' });
        expect(res.status).toBe(200);
        expect(res.body).toContainEqual({ type: 'user', id: 987654, teams: [devs] });
        expect(res.body).toContainEqual({ type: 'user', id: ids.mia, name: 'mia', teams: [devs] });
      } finally {
        await authz.writeTuples({ writes: [], deletes: [ghost] });
        authz.close();
      }
    });

    it('teams created with assignedRoleIDs show in team_ids; more than MAX_ROLES_PER_TEAM is 400', async () => {
      const other = await api('/authz/roles?org=acme', { method: 'POST', as: 'olivia', json: { name: 'Other', permissions: [] } });
      const third = await api('/authz/roles?org=acme', { method: 'POST', as: 'olivia', json: { name: 'Third', permissions: [] } });
      const qa = await api('/orgs/acme/teams', {
        method: 'POST',
        as: 'olivia',
        json: { name: 'qa', type: 'general', assignedRoleIDs: [role.id, other.body.id] },
      });
      expect(qa.status).toBe(201);
      expect((await api(`/authz/roles/${role.id}?org=acme`, { as: 'olivia' })).body.team_ids).toEqual(
        [devs, qa.body.id].sort((a, b) => a - b),
      );
      // qa holds two roles, the maximum here: a third one is refused, by role update and by role creation.
      const full = await api(`/authz/roles/${third.body.id}?org=acme`, { method: 'PUT', as: 'olivia', json: { teamIDs: [qa.body.id] } });
      expect(full.status).toBe(400);
      expect(full.body.message).toMatch(/maximum of 2/);
      expect(
        (
          await api('/authz/roles?org=acme', {
            method: 'POST',
            as: 'olivia',
            json: { name: 'Fourth', permissions: [], teamIDs: [qa.body.id] },
          })
        ).status,
      ).toBe(400);
      for (const r of [other.body.id, third.body.id])
        expect((await api(`/authz/roles/${r}?org=acme`, { method: 'DELETE', as: 'olivia' })).status).toBe(204);
      role = (await api(`/authz/roles/${role.id}?org=acme`, { as: 'olivia' })).body;
    });

    it('DELETE: 403 without delete:role, 404 unknown; 204 removes every grant it carried on the next request', async () => {
      expect((await api(`/authz/roles/${role.id}?org=acme`, { method: 'DELETE', as: 'mia' })).status).toBe(403);
      expect((await api('/authz/roles/999999?org=acme', { method: 'DELETE', as: 'olivia' })).status).toBe(404);
      // Before: mia edits the role through it.
      expect((await api(`/authz/roles/${role.id}?org=acme`, { method: 'PUT', as: 'mia', json: {} })).status).toBe(200);
      expect(await api(`/authz/roles/${role.id}?org=acme`, { method: 'DELETE', as: 'olivia' })).toEqual({ status: 204, body: undefined });
      expect((await api(`/authz/roles/${role.id}?org=acme`, { as: 'olivia' })).status).toBe(404);
      expect((await api(`/authz/roles/${role.id}?org=acme`, { method: 'DELETE', as: 'olivia' })).status).toBe(404);
      expect((await api('/authz/roles?org=acme', { as: 'mia' })).body).toEqual([]);
      const held = await api(`/authz/objects/organization/${acme}/allowed-permissions?org=acme`, { as: 'mia' });
      expect(held.body.allowedPermissions).not.toContain('edit_role');
      expect(held.body.allowedPermissions).not.toContain('view_role_principals');
    });
  });

  describe('allowed-permissions', () => {
    const one = (as: string, type: string, id: number | string) => api(`/authz/objects/${type}/${id}/allowed-permissions?org=acme`, { as });

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
      const res = await api('/authz/objects/allowed-permissions?org=acme', {
        method: 'POST',
        as: 'olivia',
        json: [
          { objectType: 'team', objectID: ops },
          { objectType: 'organization', objectID: acme },
          { objectType: 'user', objectID: ids.olivia },
          { objectType: 'team', objectID: globexTeam },
        ],
      });
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
      expect(await api('/authz/objects/allowed-permissions?org=acme', { method: 'POST', as: 'mia', json: [] })).toEqual({
        status: 200,
        body: [],
      });
    });

    it('POST answers 400 when any element has a bad type or id, 422 for a malformed body', async () => {
      const post = (json: unknown) => api('/authz/objects/allowed-permissions?org=acme', { method: 'POST', as: 'mia', json });
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
      const raw = await api('/authz/objects/allowed-permissions?org=acme', {
        method: 'POST',
        as: 'mia',
        headers: { 'content-type': 'application/json' },
        body: '[{"objectType": "team",',
      });
      expect(raw.status).toBe(422);
    });
  });
});
