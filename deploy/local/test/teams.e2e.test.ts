import { bootTestPlatform, type TestPlatform } from './harness';

// Teams as a client walks them: teams, team actions and team members, with custom roles attached
// through assignedRoleIDs. Decisions: docs/organizations-and-teams.md.

describe('teams over HTTP', () => {
  let harness: TestPlatform;
  /** Calls the API as `who` (a login, or undefined for an anonymous caller). */
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let ids: TestPlatform['ids'];
  const status = async (who: string | undefined, method: string, path: string, json?: unknown) =>
    (await api(who, method, path, json)).status;
  const logins = (users: { login: string }[]) => users.map((u) => u.login);
  const action = (who: string | undefined, teamId: number, name: string, query: string, org = 'globex') =>
    api(who, 'POST', `/orgs/${org}/teams/${teamId}/action/${name}${query}`);

  /** Creates a custom role of an organization as one of its owners. */
  async function createRole(
    owner: string,
    org: string,
    name: string,
    permissions: { namespace: string; action: string }[],
  ): Promise<number> {
    const role = await api(owner, 'POST', `/authz/roles?org=${org}`, { name, permissions });
    expect(role.status).toBe(201);
    return role.body.id;
  }

  beforeAll(async () => {
    // Checks are kept one second, so a role whose end passed stops granting soon after (the time-bound test waits it out).
    harness = await bootTestPlatform({ AUTHZ_DECISION_CACHE_TTL_MS: '1000' });
    ids = harness.ids;
    for (const login of ['alice', 'bob', 'carol', 'dave', 'erin']) await harness.signUp(login);
    const globex = await api('alice', 'POST', '/orgs', { username: 'globex', full_name: 'Globex' });
    ids.globex = globex.body.id;
    ids.initech = (await api('erin', 'POST', '/orgs', { username: 'initech', visibility: 'private' })).body.id;
  }, 120_000);
  afterAll(() => harness?.stop());

  describe('GET and POST /orgs/{orgname}/teams', () => {
    it('lists the owner team of a new organization', async () => {
      const teams = await api('alice', 'GET', '/orgs/globex/teams');
      expect(teams.status).toBe(200);
      expect(teams.body).toEqual([
        {
          id: expect.any(Number),
          name: 'Owners',
          description: expect.any(String),
          organization: expect.objectContaining({ id: ids.globex, username: 'globex', full_name: 'Globex', orgType: 0 }),
          permission: 'owner',
          units: null,
          units_map: {},
          type: 'general',
        },
      ]);
      ids.owners = teams.body[0].id;
    });

    it('creates teams of the accepted types for holders of create:team', async () => {
      const devs = await api('alice', 'POST', '/orgs/globex/teams', {
        name: 'devs',
        type: 'kubernetes',
        description: 'Developers',
        permission: 'write',
      });
      expect(devs.status).toBe(201);
      expect(devs.body).toEqual({
        id: expect.any(Number),
        name: 'devs',
        description: 'Developers',
        organization: expect.objectContaining({ id: ids.globex }),
        permission: 'write',
        units: null,
        units_map: {},
        type: 'kubernetes',
      });
      ids.devs = devs.body.id;
      const ops = await api('alice', 'POST', '/orgs/globex/teams', { name: 'ops', type: 'general', units: ['cluster.view'] });
      expect(ops.body).toMatchObject({ name: 'ops', type: 'general', permission: 'read', units: ['cluster.view'], units_map: { 'cluster.view': 'read' } });
      ids.ops = ops.body.id;
      expect((await api('alice', 'GET', '/orgs/globex/teams')).body.map((t: { name: string }) => t.name)).toEqual([
        'Owners',
        'devs',
        'ops',
      ]);
    });

    it('answers 400 for a bad type, name or permission, 422 for a taken name (as Gitea) and 422 without a name', async () => {
      const badType = await api('alice', 'POST', '/orgs/globex/teams', { name: 'qa', type: 'database' });
      expect(badType).toMatchObject({ status: 400, body: { message: 'type must be one of kubernetes, general' } });
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'qa', type: '' })).toBe(400);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'q a!', type: 'general' })).toBe(400);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'qa', type: 'general', permission: 'owner' })).toBe(400);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'DEVS', type: 'general' })).toBe(422);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'owners', type: 'general' })).toBe(422);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { type: 'general' })).toBe(422);
      expect((await api('alice', 'GET', '/orgs/globex/teams')).body).toHaveLength(3);
    });

    it('answers 401, 403 to non-members and members without the relation, and 404 for invisible organizations', async () => {
      expect(await status(undefined, 'GET', '/orgs/globex/teams')).toBe(401);
      expect(await status('bob', 'GET', '/orgs/globex/teams')).toBe(403);
      expect(await status('bob', 'POST', '/orgs/globex/teams', { name: 'x', type: 'general' })).toBe(403);
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await status('bob', 'GET', '/orgs/globex/teams')).toBe(200);
      expect(await status('bob', 'POST', '/orgs/globex/teams', { name: 'x', type: 'general' })).toBe(403);
      expect(await status('alice', 'GET', '/orgs/initech/teams')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/nowhere/teams')).toBe(404);
      expect(await status('root', 'GET', '/orgs/initech/teams')).toBe(200);
      expect(await status('root', 'POST', '/orgs/initech/teams', { name: 'auditors', type: 'general' })).toBe(201);
    });
  });

  describe('custom roles on teams (assignedRoleIDs)', () => {
    it('attaches roles of the same organization; role_ids appears only when set', async () => {
      ids.teamEditor = await createRole('alice', 'globex', 'team-editor', [{ namespace: 'team', action: 'edit' }]);
      const qa = await api('alice', 'POST', '/orgs/globex/teams', { name: 'qa', type: 'general', assignedRoleIDs: [ids.teamEditor] });
      expect(qa.status).toBe(201);
      expect(qa.body.role_ids).toEqual([ids.teamEditor]);
      ids.qa = qa.body.id;
      expect((await api('alice', 'GET', `/teams/${ids.qa}`)).body.role_ids).toEqual([ids.teamEditor]);
      expect((await api('alice', 'GET', `/teams/${ids.devs}`)).body).not.toHaveProperty('role_ids');
    });

    it('gives the role’s permissions to the team’s members on the next request, and takes them back', async () => {
      expect(await status('alice', 'PUT', `/teams/${ids.qa}/members/carol`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops', description: 'by carol' })).toBe(200);
      expect(await status('carol', 'DELETE', `/teams/${ids.ops}`)).toBe(403);
      expect(await status('alice', 'DELETE', `/teams/${ids.qa}/members/carol`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops' })).toBe(403);
      expect(await status('carol', 'GET', '/orgs/globex/teams')).toBe(403);
    });

    it('refuses roles of another organization and more than ten roles with 400, creating nothing', async () => {
      const foreign = await createRole('erin', 'initech', 'initech-role', [{ namespace: 'team', action: 'edit' }]);
      const wrong = await api('alice', 'POST', '/orgs/globex/teams', { name: 'mixed', type: 'general', assignedRoleIDs: [foreign] });
      expect(wrong.status).toBe(400);
      const many: number[] = [];
      for (let i = 0; i < 11; i++) many.push(await createRole('alice', 'globex', `role-${i}`, [{ namespace: 'team', action: 'view' }]));
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'crowded', type: 'general', assignedRoleIDs: many })).toBe(400);
      const names = (await api('alice', 'GET', '/orgs/globex/teams')).body.map((t: { name: string }) => t.name);
      expect(names).not.toContain('mixed');
      expect(names).not.toContain('crowded');
      expect(
        await status('alice', 'POST', '/orgs/globex/teams', { name: 'mixed', type: 'general', assignedRoleIDs: many.slice(0, 10) }),
      ).toBe(201);
      // A refused role change undoes the rest of the edit.
      expect(
        await status('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa-renamed', description: 'changed', assignedRoleIDs: many }),
      ).toBe(400);
      expect((await api('alice', 'GET', `/teams/${ids.qa}`)).body).toMatchObject({ name: 'qa', description: '' });
      expect(await status('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [foreign] })).toBe(400);
      expect((await api('alice', 'GET', `/teams/${ids.qa}`)).body.role_ids).toEqual([ids.teamEditor]);
    });

    it('PATCH replaces the roles, and an empty list removes them', async () => {
      const viewer = await createRole('alice', 'globex', 'viewer-only', [{ namespace: 'team', action: 'view' }]);
      const edited = await api('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [viewer, ids.teamEditor] });
      expect(edited.body.role_ids).toEqual([ids.teamEditor, viewer].sort((a, b) => a - b));
      const cleared = await api('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [] });
      expect(cleared.body).not.toHaveProperty('role_ids');
      expect(await status('alice', 'PUT', `/teams/${ids.qa}/members/carol`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops' })).toBe(403);
      expect(await status('alice', 'DELETE', `/teams/${ids.qa}/members/carol`)).toBe(204);
    });

    it('assignedRoleUntil: the role grants until its end and not after; 422 for a past end or a role not assigned', async () => {
      const editor = ids.teamEditor;
      const past = await api('alice', 'PATCH', `/teams/${ids.qa}`, {
        name: 'qa',
        assignedRoleIDs: [editor],
        assignedRoleUntil: { [editor]: '2020-01-01T00:00:00Z' },
      });
      expect(past.status).toBe(422);
      const notAssigned = { assignedRoleIDs: [], assignedRoleUntil: { [editor]: new Date(Date.now() + 60_000).toISOString() } };
      expect(await status('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', ...notAssigned })).toBe(422);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'late', ...notAssigned })).toBe(422);
      expect((await api('alice', 'GET', `/teams/${ids.qa}`)).body).not.toHaveProperty('role_ids');

      // A few seconds ahead, in whole seconds as authz keeps it.
      const end = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000);
      const given = await api('alice', 'PATCH', `/teams/${ids.qa}`, {
        name: 'qa',
        assignedRoleIDs: [editor],
        assignedRoleUntil: { [editor]: end.toISOString() },
      });
      expect(given.status).toBe(200);
      expect(given.body.role_ids).toEqual([editor]);
      expect(Date.parse(given.body.role_until[editor])).toBe(end.getTime());
      expect(Date.parse((await api('alice', 'GET', `/teams/${ids.qa}`)).body.role_until[editor])).toBe(end.getTime());

      expect(await status('alice', 'PUT', `/teams/${ids.qa}/members/carol`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops' })).toBe(200);
      // Past the end, and past the second a check is kept.
      await new Promise((r) => setTimeout(r, end.getTime() - Date.now() + 1_000 + 500));
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops' })).toBe(403);

      // Assigning again without an end makes the role permanent.
      const again = await api('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [editor] });
      expect(again.body).not.toHaveProperty('role_until');
      expect(await status('carol', 'PATCH', `/teams/${ids.ops}`, { name: 'ops' })).toBe(200);
      expect(await status('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [] })).toBe(200);
      expect(await status('alice', 'DELETE', `/teams/${ids.qa}/members/carol`)).toBe(204);
    }, 30_000);
  });

  describe('POST /orgs/{orgname}/teams/{teamid}/action/{action}', () => {
    it('join: only who may add members joins (409 when already in it); plain members, non-members and others’ uids are refused', async () => {
      // A team passes its custom roles on to its members: a plain member may not join one and take them.
      expect((await action('bob', ids.ops, 'join', `?uid=${ids.bob}`)).status).toBe(403);
      expect(logins((await api('bob', 'GET', `/teams/${ids.ops}/members`)).body)).toEqual([]);
      expect((await action('alice', ids.ops, 'join', `?uid=${ids.alice}`)).status).toBe(200);
      expect(logins((await api('bob', 'GET', `/teams/${ids.ops}/members`)).body)).toEqual(['alice']);
      expect((await action('alice', ids.ops, 'join', `?uid=${ids.alice}`)).status).toBe(409);
      expect((await action('alice', ids.ops, 'join', `?uid=${ids.dave}`)).status).toBe(403);
      expect((await action('dave', ids.ops, 'join', `?uid=${ids.dave}`)).status).toBe(403);
      expect((await action(undefined, ids.ops, 'join', `?uid=${ids.bob}`)).status).toBe(401);
      // As before: the owner leaves again, and adds bob, whom the next tests need in ops.
      expect((await action('alice', ids.ops, 'leave', `?uid=${ids.alice}`)).status).toBe(200);
      expect((await action('alice', ids.ops, 'add', `?uid=${ids.bob}`)).status).toBe(200);
    });

    it('join: plain members cannot make themselves owners', async () => {
      expect((await action('bob', ids.owners, 'join', `?uid=${ids.bob}`)).status).toBe(403);
      expect(await status('bob', 'GET', '/orgs/globex/is-owner')).toBe(403);
    });

    it('leave: the caller leaves a team; leaving the last team leaves the organization', async () => {
      expect((await action('bob', ids.ops, 'leave', `?uid=${ids.alice}`)).status).toBe(403);
      expect((await action('bob', ids.ops, 'leave', `?uid=${ids.bob}`)).status).toBe(200);
      expect((await action('bob', ids.ops, 'leave', `?uid=${ids.bob}`)).status).toBe(403);
      expect(await status('bob', 'GET', '/orgs/globex/teams')).toBe(200);
      expect((await action('bob', ids.devs, 'leave', `?uid=${ids.bob}`)).status).toBe(200);
      expect(await status('bob', 'GET', '/orgs/globex/teams')).toBe(403);
      expect(await status('alice', 'GET', '/orgs/globex/members/bob')).toBe(404);
    });

    it('leave: the last owner cannot leave the owner team', async () => {
      const last = await action('alice', ids.owners, 'leave', `?uid=${ids.alice}`);
      expect(last).toMatchObject({ status: 400, body: { message: expect.stringContaining('last owner') } });
      expect(await status('alice', 'GET', '/orgs/globex/is-owner')).toBe(200);
    });

    it('add: by uname or uid; 409 when already a member, 400 for an organization, 404 for nobody', async () => {
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.dave}&uname=dave`)).status).toBe(200);
      expect(await status('dave', 'GET', '/orgs/globex/teams')).toBe(200);
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.dave}&uname=dave`)).status).toBe(409);
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.bob}`)).status).toBe(200);
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.bob}`)).status).toBe(409);
      const org = await action('alice', ids.devs, 'add', `?uid=${ids.initech}&uname=initech`);
      expect(org).toMatchObject({ status: 400, body: { message: 'initech is an organization, not a user' } });
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.initech}`)).status).toBe(400);
      expect((await action('alice', ids.devs, 'add', '?uid=999999&uname=nobody')).status).toBe(404);
      expect((await action('dave', ids.ops, 'add', `?uid=${ids.carol}&uname=carol`)).status).toBe(403);
      expect(await status('carol', 'GET', '/orgs/globex/teams')).toBe(403);
    });

    it('remove: takes another user out; the user loses access on the next request', async () => {
      expect((await action('dave', ids.devs, 'remove', `?uid=${ids.bob}`)).status).toBe(403);
      expect((await action('alice', ids.devs, 'remove', `?uid=${ids.dave}`)).status).toBe(200);
      expect(await status('dave', 'GET', '/orgs/globex/teams')).toBe(403);
      expect((await action('alice', ids.devs, 'remove', `?uid=${ids.dave}`)).status).toBe(404);
      const last = await action('alice', ids.owners, 'remove', `?uid=${ids.alice}`);
      expect(last).toMatchObject({ status: 400, body: { message: expect.stringContaining('last owner') } });
    });

    it('answers 400 for a missing or bad uid and an unknown action, 404 for a team of another organization', async () => {
      expect((await action('alice', ids.devs, 'add', '?uname=dave')).status).toBe(400);
      expect((await action('alice', ids.devs, 'remove', '?uid=x')).status).toBe(400);
      expect((await action('alice', ids.devs, 'promote', `?uid=${ids.bob}`)).status).toBe(400);
      expect((await action('alice', ids.devs, 'add', `?uid=${ids.dave}`, 'initech')).status).toBe(404);
      expect((await action('root', ids.devs, 'add', `?uid=${ids.dave}`, 'initech')).status).toBe(404);
      expect((await action('alice', 987654, 'add', `?uid=${ids.dave}`)).status).toBe(404);
    });
  });

  describe('/teams/{teamid}', () => {
    it('GET: 200 for those with view:team, 403 for others, 404 for unknown teams, 400 for a bad id', async () => {
      const team = await api('bob', 'GET', `/teams/${ids.devs}`);
      expect(team).toMatchObject({ status: 200, body: { id: ids.devs, name: 'devs', organization: { username: 'globex' } } });
      expect(await status('carol', 'GET', `/teams/${ids.devs}`)).toBe(403);
      expect(await status('root', 'GET', `/teams/${ids.devs}`)).toBe(200);
      expect(await status(undefined, 'GET', `/teams/${ids.devs}`)).toBe(401);
      expect(await status('alice', 'GET', '/teams/987654')).toBe(404);
      expect(await status('alice', 'GET', '/teams/abc')).toBe(400);
    });

    it('PATCH: edits name, description, permission (custom too) and type', async () => {
      const edited = await api('alice', 'PATCH', `/teams/${ids.ops}`, {
        name: 'operations',
        description: 'On call',
        permission: 'custom',
        type: 'kubernetes',
      });
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({
        id: ids.ops,
        name: 'operations',
        description: 'On call',
        permission: 'custom',
        type: 'kubernetes',
      });
      expect((await api('alice', 'GET', `/teams/${ids.ops}`)).body.name).toBe('operations');
    });

    it('PATCH: the owner team keeps its permission and name (400); bad values are 400, taken names 409', async () => {
      const perm = await api('alice', 'PATCH', `/teams/${ids.owners}`, { name: 'Owners', permission: 'read' });
      expect(perm).toMatchObject({ status: 400, body: { message: 'the permission of the owner team Owners cannot be changed' } });
      expect(await status('alice', 'PATCH', `/teams/${ids.owners}`, { name: 'Admins' })).toBe(400);
      expect((await api('alice', 'PATCH', `/teams/${ids.owners}`, { name: 'Owners', description: 'The bosses' })).body).toMatchObject({
        permission: 'owner',
        description: 'The bosses',
      });
      expect(await status('alice', 'PATCH', `/teams/${ids.ops}`, { name: 'operations', type: 'database' })).toBe(400);
      expect(await status('alice', 'PATCH', `/teams/${ids.ops}`, { name: 'bad name!' })).toBe(400);
      expect(await status('alice', 'PATCH', `/teams/${ids.ops}`, { name: 'operations', permission: 'owner' })).toBe(400);
      expect(await status('alice', 'PATCH', `/teams/${ids.ops}`, { name: 'devs' })).toBe(409);
      expect(await status('alice', 'PATCH', `/teams/${ids.ops}`, { description: 'no name' })).toBe(422);
      expect(await status('bob', 'PATCH', `/teams/${ids.ops}`, { name: 'mine' })).toBe(403);
      expect(await status('alice', 'PATCH', '/teams/987654', { name: 'x' })).toBe(404);
    });

    it('DELETE: never the owner team; members left without a team leave the organization', async () => {
      const owners = await api('alice', 'DELETE', `/teams/${ids.owners}`);
      expect(owners).toMatchObject({ status: 400, body: { message: 'the owner team Owners cannot be deleted' } });
      expect(await status('alice', 'PUT', `/teams/${ids.ops}/members/carol`)).toBe(204);
      expect(await status('alice', 'PUT', `/teams/${ids.ops}/members/bob`)).toBe(204);
      expect(await status('bob', 'DELETE', `/teams/${ids.ops}`)).toBe(403);
      expect(await status(undefined, 'DELETE', `/teams/${ids.ops}`)).toBe(401);
      expect(await status('alice', 'DELETE', `/teams/${ids.ops}`)).toBe(204);
      expect(await status('alice', 'GET', `/teams/${ids.ops}`)).toBe(404);
      // carol was only in ops: she is out; bob is still in devs.
      expect(await status('carol', 'GET', '/orgs/globex/teams')).toBe(403);
      expect(await status('bob', 'GET', '/orgs/globex/teams')).toBe(200);
      expect(await status('alice', 'DELETE', `/teams/${ids.ops}`)).toBe(404);
    });

    it('DELETE: a team with custom roles takes its roles along', async () => {
      expect(await status('alice', 'PATCH', `/teams/${ids.qa}`, { name: 'qa', assignedRoleIDs: [ids.teamEditor] })).toBe(200);
      expect(await status('alice', 'PUT', `/teams/${ids.qa}/members/carol`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.devs}`, { name: 'devs' })).toBe(200);
      expect(await status('alice', 'DELETE', `/teams/${ids.qa}`)).toBe(204);
      expect(await status('carol', 'PATCH', `/teams/${ids.devs}`, { name: 'devs' })).toBe(403);
      const principals = await api('alice', 'GET', `/authz/roles/${ids.teamEditor}/principals?org=globex`);
      expect(principals.status).toBe(200);
      expect(principals.body).toEqual([]);
    });
  });

  describe('/teams/{teamid}/members', () => {
    it('GET lists members; GET one answers the user or 404', async () => {
      expect(logins((await api('alice', 'GET', `/teams/${ids.devs}/members`)).body)).toEqual(['bob']);
      expect(logins((await api('alice', 'GET', `/teams/${ids.owners}/members`)).body)).toEqual(['alice']);
      const bob = await api('alice', 'GET', `/teams/${ids.devs}/members/bob`);
      expect(bob).toMatchObject({ status: 200, body: { id: ids.bob, login: 'bob', username: 'bob' } });
      expect(await status('alice', 'GET', `/teams/${ids.devs}/members/carol`)).toBe(404);
      expect(await status('alice', 'GET', `/teams/${ids.devs}/members/nobody`)).toBe(404);
      expect(await status('carol', 'GET', `/teams/${ids.devs}/members`)).toBe(403);
      expect(await status('carol', 'GET', `/teams/${ids.devs}/members/bob`)).toBe(403);
      expect(await status(undefined, 'GET', `/teams/${ids.devs}/members`)).toBe(401);
    });

    it('PUT adds a member (again: no change), 400 for an organization or a bad autoConnectClusters, 404 for nobody', async () => {
      expect(await status('alice', 'PUT', `/teams/${ids.owners}/members/dave?autoConnectClusters=true`)).toBe(204);
      expect(await status('dave', 'GET', '/orgs/globex/is-owner')).toBe(200);
      expect(await status('dave', 'POST', '/orgs/globex/teams', { name: 'dave-team', type: 'general' })).toBe(201);
      expect(await status('alice', 'PUT', `/teams/${ids.owners}/members/dave`)).toBe(204);
      expect(logins((await api('alice', 'GET', `/teams/${ids.owners}/members`)).body)).toEqual(['alice', 'dave']);
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/initech`)).toBe(400);
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/nobody`)).toBe(404);
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/carol?autoConnectClusters=maybe`)).toBe(400);
      expect(await status('bob', 'PUT', `/teams/${ids.devs}/members/carol`)).toBe(403);
      expect(await status('carol', 'GET', '/orgs/globex/teams')).toBe(403);
    });

    it('DELETE removes a member, who loses the team’s rights on the next request; never the last owner', async () => {
      expect(await status('bob', 'DELETE', `/teams/${ids.owners}/members/dave`)).toBe(403);
      expect(await status('alice', 'DELETE', `/teams/${ids.owners}/members/dave`)).toBe(204);
      expect(await status('dave', 'GET', '/orgs/globex/is-owner')).toBe(403);
      expect(await status('dave', 'POST', '/orgs/globex/teams', { name: 'dave-team-2', type: 'general' })).toBe(403);
      expect(await status('alice', 'DELETE', `/teams/${ids.owners}/members/dave`)).toBe(404);
      const last = await api('alice', 'DELETE', `/teams/${ids.owners}/members/alice`);
      expect(last).toMatchObject({
        status: 400,
        body: { message: 'alice is the last owner of globex; add another owner before removing them' },
      });
      expect(await status('alice', 'DELETE', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await status('bob', 'GET', `/teams/${ids.devs}`)).toBe(403);
    });
  });

  describe('no one gives more than they hold: custom roles through teams', () => {
    // hooli (owner alice): bob edits teams, carol creates teams and erin adds members, each through a custom role
    // carrying that one permission; dave's role carries everything `powerful` does and those three. Team vault
    // carries `powerful`; plain carries nothing. Giving a role (to a team, or a team's roles to a user) takes
    // holding every permission it carries (docs/authorization.md, "No one gives more than they hold").
    const POWERFUL = [
      { namespace: 'org', action: 'edit' },
      { namespace: 'org', action: 'create_role' },
      { namespace: 'bus-token', action: 'list' },
    ];
    const h: Record<string, number> = {};
    const byId = (a: number, b: number) => a - b;
    const teamNames = async () => (await api('alice', 'GET', '/orgs/hooli/teams')).body.map((t: { name: string }) => t.name);

    async function hooliTeam(name: string, roleIds: number[], members: string[]): Promise<number> {
      const made = await api('alice', 'POST', '/orgs/hooli/teams', { name, type: 'general', assignedRoleIDs: roleIds });
      expect(made.status).toBe(201);
      for (const m of members) expect(await status('alice', 'PUT', `/teams/${made.body.id}/members/${m}`)).toBe(204);
      return made.body.id;
    }

    beforeAll(async () => {
      expect((await api('alice', 'POST', '/orgs', { username: 'hooli' })).status).toBe(201);
      h.powerful = await createRole('alice', 'hooli', 'powerful', POWERFUL);
      h.viewer = await createRole('alice', 'hooli', 'viewer', [{ namespace: 'team', action: 'view' }]);
      h.editor = await createRole('alice', 'hooli', 'team-editor', [{ namespace: 'team', action: 'edit' }]);
      h.creator = await createRole('alice', 'hooli', 'team-creator', [{ namespace: 'team', action: 'create' }]);
      h.adder = await createRole('alice', 'hooli', 'member-adder', [{ namespace: 'team-member', action: 'add' }]);
      h.lead = await createRole('alice', 'hooli', 'lead', [
        ...POWERFUL,
        { namespace: 'team', action: 'edit' },
        { namespace: 'team', action: 'create' },
        { namespace: 'team-member', action: 'add' },
      ]);
      h.editors = await hooliTeam('editors', [h.editor], ['bob']);
      h.creators = await hooliTeam('creators', [h.creator], ['carol']);
      h.adders = await hooliTeam('adders', [h.adder], ['erin']);
      h.leads = await hooliTeam('leads', [h.lead], ['dave']);
      h.vault = await hooliTeam('vault', [h.powerful], []);
      h.plain = await hooliTeam('plain', [], []);
    });

    it('PATCH /teams/{teamid} with a role the caller does not fully hold: 403 naming what is missing, and no change', async () => {
      const refused = await api('bob', 'PATCH', `/teams/${h.plain}`, {
        name: 'plain-renamed',
        description: 'by bob',
        assignedRoleIDs: [h.powerful],
      });
      expect(refused.status).toBe(403);
      for (const missing of ['edit:org', 'create_role:org', 'list:bus-token']) expect(refused.body.message).toContain(missing);
      const plain = (await api('alice', 'GET', `/teams/${h.plain}`)).body;
      expect(plain).toMatchObject({ name: 'plain', description: '' });
      expect(plain).not.toHaveProperty('role_ids');
      // His own team: the same, and the role he holds does not carry the other one through.
      expect(await status('bob', 'PATCH', `/teams/${h.editors}`, { name: 'editors', assignedRoleIDs: [h.editor, h.powerful] })).toBe(403);
      expect((await api('alice', 'GET', `/teams/${h.editors}`)).body.role_ids).toEqual([h.editor]);
      expect(await status('bob', 'POST', '/authz/roles?org=hooli', { name: 'mine', permissions: [] })).toBe(403);
      expect(await status('bob', 'GET', '/orgs/hooli/tokens/bus-tokens')).toBe(403);
      expect(await status('bob', 'PATCH', '/orgs/hooli', { description: 'mine' })).toBe(403);
      // What he holds he may give (every member views teams), and taking roles away gives nothing.
      const held = await api('bob', 'PATCH', `/teams/${h.plain}`, { name: 'plain', assignedRoleIDs: [h.viewer, h.editor] });
      expect(held.status).toBe(200);
      expect(held.body.role_ids).toEqual([h.viewer, h.editor].sort(byId));
      expect(await status('bob', 'PATCH', `/teams/${h.plain}`, { name: 'plain', assignedRoleIDs: [] })).toBe(200);
      expect(await status('bob', 'PATCH', `/teams/${h.vault}`, { name: 'vault', description: 'no roles named' })).toBe(200);
      expect((await api('alice', 'GET', `/teams/${h.vault}`)).body.role_ids).toEqual([h.powerful]);
    });

    it('POST /orgs/{orgname}/teams with a role the caller does not fully hold: 403, and no team', async () => {
      const refused = await api('carol', 'POST', '/orgs/hooli/teams', { name: 'sneaky', type: 'general', assignedRoleIDs: [h.powerful] });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain('create_role:org');
      expect(
        await status('carol', 'POST', '/orgs/hooli/teams', { name: 'sneaky', type: 'general', assignedRoleIDs: [h.creator, h.lead] }),
      ).toBe(403);
      expect(await teamNames()).not.toContain('sneaky');
      expect(await status('carol', 'POST', '/authz/roles?org=hooli', { name: 'mine', permissions: [] })).toBe(403);
      const held = await api('carol', 'POST', '/orgs/hooli/teams', {
        name: 'helpers',
        type: 'general',
        assignedRoleIDs: [h.creator, h.viewer],
      });
      expect(held.status).toBe(201);
      expect(held.body.role_ids).toEqual([h.creator, h.viewer].sort(byId));
    });

    it('adding to or joining a team that carries roles beyond the caller: 403, and the team keeps its members', async () => {
      const put = await api('erin', 'PUT', `/teams/${h.vault}/members/erin`);
      expect(put.status).toBe(403);
      expect(put.body.message).toContain('list:bus-token');
      expect(await status('erin', 'PUT', `/teams/${h.vault}/members/bob`)).toBe(403);
      expect((await action('erin', h.vault, 'join', `?uid=${ids.erin}`, 'hooli')).status).toBe(403);
      expect((await action('erin', h.vault, 'add', `?uid=${ids.erin}`, 'hooli')).status).toBe(403);
      expect((await action('erin', h.vault, 'add', `?uid=${ids.bob}&uname=bob`, 'hooli')).status).toBe(403);
      // A team whose roles carry more than she holds, even if one of them is hers.
      const mixed = await hooliTeam('mixed', [h.adder, h.creator], []);
      const refused = await api('erin', 'PUT', `/teams/${mixed}/members/bob`);
      expect(refused).toMatchObject({ status: 403, body: { message: expect.stringContaining('create:team') } });
      expect(refused.body.message).not.toContain('add:team-member');
      expect(logins((await api('alice', 'GET', `/teams/${h.vault}/members`)).body)).toEqual([]);
      expect(logins((await api('alice', 'GET', `/teams/${mixed}/members`)).body)).toEqual([]);
      expect(logins((await api('alice', 'GET', `/teams/${h.adders}/members`)).body)).toEqual(['erin']);
      expect(await status('erin', 'GET', '/orgs/hooli/tokens/bus-tokens')).toBe(403);
      // A team without roles, or with roles she holds, she may fill.
      expect(await status('erin', 'PUT', `/teams/${h.plain}/members/bob`)).toBe(204);
      expect((await action('erin', h.adders, 'add', `?uid=${ids.bob}`, 'hooli')).status).toBe(200);
      expect((await action('erin', h.plain, 'join', `?uid=${ids.erin}`, 'hooli')).status).toBe(200);
    });

    it('the Owners team and `permission: admin` take what they give: team:edit and team:create holders are refused', async () => {
      const owners = (await api('alice', 'GET', '/orgs/hooli/teams')).body[0];
      expect(owners.permission).toBe('owner');
      // The Owners team is the owners: editing it at all is theirs and site admins' (manage_owners:org).
      for (const change of [{ description: 'by bob' }, { units: ['repo.code'] }, { assignedRoleIDs: [h.editor] }]) {
        const refused = await api('bob', 'PATCH', `/teams/${owners.id}`, { name: 'Owners', ...change });
        expect([change, refused.status, refused.body.message]).toEqual([change, 403, 'you do not have the manage_owners:org permission']);
      }
      expect((await api('alice', 'GET', `/teams/${owners.id}`)).body).toMatchObject({ description: owners.description, units: null });
      expect((await api('alice', 'GET', `/teams/${owners.id}`)).body).not.toHaveProperty('role_ids');

      // Gitea's `admin` team permission makes its members the organization's admins: admin:org is needed to give it.
      const isAdmin = async (who: string) => (await api('alice', 'GET', `/users/${who}/orgs/hooli/permissions`)).body.is_admin;
      const edited = await api('bob', 'PATCH', `/teams/${h.plain}`, { name: 'plain', permission: 'admin' });
      expect(edited).toMatchObject({ status: 403, body: { message: 'permission admin would give permissions you do not hold: admin:org' } });
      expect(await isAdmin('bob')).toBe(false);
      const made = await api('carol', 'POST', '/orgs/hooli/teams', { name: 'admins', type: 'general', permission: 'admin' });
      expect(made).toMatchObject({ status: 403, body: { message: 'permission admin would give permissions you do not hold: admin:org' } });
      expect(await teamNames()).not.toContain('admins');
      // What gives nothing stays theirs.
      expect(await status('bob', 'PATCH', `/teams/${h.plain}`, { name: 'plain', permission: 'write' })).toBe(200);
      expect(await status('carol', 'POST', '/orgs/hooli/teams', { name: 'writers', type: 'general', permission: 'write' })).toBe(201);

      // Owners may do both.
      expect(await status('alice', 'PATCH', `/teams/${owners.id}`, { name: 'Owners', description: 'the owners of hooli' })).toBe(200);
      expect((await api('alice', 'GET', `/teams/${owners.id}`)).body.description).toBe('the owners of hooli');
      expect(await status('alice', 'PATCH', `/teams/${h.plain}`, { name: 'plain', permission: 'admin' })).toBe(200);
      expect(await isAdmin('bob')).toBe(true);
      expect(await status('alice', 'PATCH', `/teams/${h.plain}`, { name: 'plain', permission: 'read' })).toBe(200);
    });

    it('a holder of every permission the roles carry may give them, as owners and site admins may', async () => {
      const made = await api('dave', 'POST', '/orgs/hooli/teams', { name: 'dave-vault', type: 'general', assignedRoleIDs: [h.powerful] });
      expect(made.status).toBe(201);
      const byDave = await api('dave', 'PATCH', `/teams/${made.body.id}`, { name: 'dave-vault', assignedRoleIDs: [h.powerful, h.lead] });
      expect(byDave.status).toBe(200);
      expect(byDave.body.role_ids).toEqual([h.powerful, h.lead].sort(byId));
      expect(await status('dave', 'PUT', `/teams/${h.vault}/members/dave`)).toBe(204);
      expect((await action('dave', h.vault, 'add', `?uid=${ids.carol}`, 'hooli')).status).toBe(200);
      // Through the list:bus-token check (this organization has no bus accounts: 400).
      expect(await status('carol', 'GET', '/orgs/hooli/tokens/bus-tokens')).not.toBe(403);

      expect(await status('alice', 'PATCH', `/teams/${h.editors}`, { name: 'editors', assignedRoleIDs: [h.editor, h.powerful] })).toBe(200);
      expect(await status('bob', 'PATCH', '/orgs/hooli', { description: 'by bob' })).toBe(200);
      expect(
        await status('alice', 'POST', '/orgs/hooli/teams', { name: 'owner-vault', type: 'general', assignedRoleIDs: [h.powerful] }),
      ).toBe(201);
      expect(await status('alice', 'PUT', `/teams/${h.vault}/members/erin`)).toBe(204);
      expect(await status('erin', 'GET', '/orgs/hooli/tokens/bus-tokens')).not.toBe(403);

      expect(await status('root', 'PATCH', `/teams/${h.adders}`, { name: 'adders', assignedRoleIDs: [h.adder, h.powerful] })).toBe(200);
      expect(
        await status('root', 'POST', '/orgs/hooli/teams', { name: 'admin-vault', type: 'general', assignedRoleIDs: [h.powerful] }),
      ).toBe(201);
      expect(await status('root', 'PUT', `/teams/${h.vault}/members/bob`)).toBe(204);
    });
  });
});
