import { DomainError } from '@platform/errors';
import { authzRolesV1, authzV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { authzApp } from '../app';

// The authz service over real gRPC, real Postgres and the embedded engine: role rows and tuples change
// together, and every change shows in the very next check.

type Authz = PromiseClient<typeof authzV1.AuthzServiceService>;
type Roles = PromiseClient<typeof authzRolesV1.RolesServiceService>;

const status = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof DomainError ? err.httpStatus : err),
  );

const t = (user: string, relation: string, object: string) => ({ user, relation, object });

/** An organization as orgs-teams writes it (the shared tuple contract): an owner team, plus further teams. */
async function seedOrg(authz: Authz, org: number, owner: number, teams: Record<number, number[]>) {
  const ownersTeam = org * 100;
  const writes = [
    t('site:platform', 'site', `organization:${org}`),
    t(`organization:${org}`, 'organization', `team:${ownersTeam}`),
    t(`user:${owner}`, 'member', `team:${ownersTeam}`),
    t(`team:${ownersTeam}#member`, 'owner', `organization:${org}`),
    t(`team:${ownersTeam}#member`, 'member', `organization:${org}`),
  ];
  for (const [team, members] of Object.entries(teams)) {
    writes.push(t(`organization:${org}`, 'organization', `team:${team}`), t(`team:${team}#member`, 'member', `organization:${org}`));
    for (const m of members) writes.push(t(`user:${m}`, 'member', `team:${team}`));
  }
  await authz.writeTuples({ writes, deletes: [] });
}

describe('RolesService', () => {
  let app: AppUnderTest;
  let authz: Authz;
  let roles: Roles;
  const may = async (user: number, permission: string, objectId: number) =>
    (await authz.checkPermission({ userId: user, permission, objectId })).allowed;

  // Organization 1: owner 10; team 11 with member 21, team 12 with members 22 and 23, team 13 empty.
  // Organization 2: owner 30; team 31 with member 41.
  beforeAll(async () => {
    app = await startAppForTest(authzApp, { MAX_ROLES_PER_TEAM: '3' });
    authz = createClient(authzV1.AuthzServiceService, app.address, { name: 'authz' });
    roles = createClient(authzRolesV1.RolesServiceService, app.address, { name: 'authz' });
    await seedOrg(authz, 1, 10, { 11: [21], 12: [22, 23], 13: [] });
    await seedOrg(authz, 2, 30, { 31: [41] });
  });
  afterAll(async () => {
    authz?.close();
    roles?.close();
    await app?.stop();
  });

  describe('create, get, list', () => {
    it('creates a role whose permissions reach its teams’ members at once, and no one else', async () => {
      expect(await may(21, 'edit:org', 1)).toBe(false);
      const role = await roles.createRole({
        orgId: 1,
        name: 'Editors',
        description: 'edit the org',
        permissions: [
          { namespace: 'org', action: 'edit' },
          { namespace: 'org', action: 'edit' },
          { namespace: 'team', action: 'view' },
        ],
        teamIds: [11, 11],
      });
      expect(role).toEqual({
        id: expect.any(Number),
        orgId: 1,
        name: 'Editors',
        description: 'edit the org',
        permissions: [
          { namespace: 'org', action: 'edit' },
          { namespace: 'team', action: 'view' },
        ],
        teamIds: [11],
        createdUnix: expect.any(Number),
        updatedUnix: expect.any(Number),
      });
      expect(Math.abs(role.createdUnix - Date.now() / 1000)).toBeLessThan(60);
      expect(await may(21, 'edit:org', 1)).toBe(true);
      expect(await may(22, 'edit:org', 1)).toBe(false);
      expect(await may(41, 'edit:org', 1)).toBe(false);
      // The grant is for this organization only.
      expect(await may(21, 'edit:org', 2)).toBe(false);
      expect(await roles.getRole({ orgId: 1, id: role.id })).toEqual(role);
      // The role is an object of its organization: its members may view it, only owners may edit it.
      expect(await may(22, 'view:role', role.id)).toBe(true);
      expect(await may(22, 'edit:role', role.id)).toBe(false);
      expect(await may(10, 'edit:role', role.id)).toBe(true);
      expect(await may(30, 'view:role', role.id)).toBe(false);
    });

    it('lists the roles of one organization, oldest first; another organization has none', async () => {
      const second = await roles.createRole({ orgId: 1, name: 'Nobody', description: '', permissions: [], teamIds: [] });
      const { roles: list } = await roles.listRoles({ orgId: 1 });
      expect(list.map((r) => r.name)).toEqual(['Editors', 'Nobody']);
      expect(list[1]).toMatchObject({ id: second.id, permissions: [], teamIds: [] });
      expect(await roles.listRoles({ orgId: 2 })).toEqual({ roles: [], maxRolesPerTeam: 3 });
    });

    it('refuses unknown and unassignable permissions, foreign teams and duplicate names with 400, writing nothing', async () => {
      const before = (await roles.listRoles({ orgId: 1 })).roles.length;
      const bad = (over: Partial<authzRolesV1.CreateRoleRequest>) =>
        status(roles.createRole({ orgId: 1, name: 'Bad', description: '', permissions: [], teamIds: [], ...over }));
      expect(await bad({ permissions: [{ namespace: 'org', action: 'fly' }] })).toBe(400);
      expect(await bad({ permissions: [{ namespace: 'org', action: 'delete' }] })).toBe(400);
      expect(await bad({ permissions: [{ namespace: 'site_admin', action: 'view_contracts' }] })).toBe(400);
      expect(await bad({ permissions: [{ namespace: 'org', action: 'member' }] })).toBe(400);
      expect(await bad({ teamIds: [31] })).toBe(400);
      expect(await bad({ teamIds: [999] })).toBe(400);
      expect(await bad({ teamIds: [0] })).toBe(400);
      expect(await bad({ name: '   ' })).toBe(400);
      expect(await bad({ name: 'editors' })).toBe(400);
      // Texts over their limits (docs/limits.md), whoever the caller: the service is the authority.
      expect(await bad({ name: 'n'.repeat(256) })).toBe(400);
      expect(await bad({ description: 'd'.repeat(256) })).toBe(400);
      expect(await bad({ description: 'd'.repeat(1024 * 1024) })).toBe(400);
      expect(await bad({ permissions: [{ namespace: 'o'.repeat(65), action: 'edit' }] })).toBe(400);
      expect((await roles.listRoles({ orgId: 1 })).roles).toHaveLength(before);
      // The same name is fine in another organization.
      expect(await status(roles.createRole({ orgId: 2, name: 'Editors', description: '', permissions: [], teamIds: [] }))).toBe('ok');
    });

    it('answers 404 for a role of another organization or none at all', async () => {
      const [role] = (await roles.listRoles({ orgId: 1 })).roles;
      expect(await status(roles.getRole({ orgId: 2, id: role.id }))).toBe(404);
      expect(await status(roles.getRole({ orgId: 1, id: 987654 }))).toBe(404);
      expect(await status(roles.getRole({ orgId: 1, id: 0 }))).toBe(400);
    });
  });

  describe('update', () => {
    it('replaces only the supplied fields; permissions and teams wholesale, effective at once', async () => {
      const role = await roles.createRole({
        orgId: 1,
        name: 'Team admins',
        description: 'keeps teams',
        permissions: [{ namespace: 'team', action: 'create' }],
        teamIds: [11],
      });
      expect(await may(21, 'create:team', 1)).toBe(true);

      const renamed = await roles.updateRole({ orgId: 1, id: role.id, name: 'Team keepers' });
      expect(renamed).toMatchObject({ name: 'Team keepers', description: 'keeps teams', permissions: role.permissions, teamIds: [11] });
      expect(await may(21, 'create:team', 1)).toBe(true);

      const moved = await roles.updateRole({
        orgId: 1,
        id: role.id,
        permissions: { permissions: [{ namespace: 'org', action: 'admin' }] },
        teamIds: { teamIds: [13, 12] },
      });
      expect(moved).toMatchObject({ name: 'Team keepers', permissions: [{ namespace: 'org', action: 'admin' }], teamIds: [12, 13] });
      expect(moved.updatedUnix).toBeGreaterThanOrEqual(role.updatedUnix);
      expect(await may(21, 'create:team', 1)).toBe(false);
      expect(await may(22, 'create:team', 1)).toBe(false);
      expect(await may(22, 'admin:org', 1)).toBe(true);
      expect(await may(21, 'admin:org', 1)).toBe(false);

      const emptied = await roles.updateRole({
        orgId: 1,
        id: role.id,
        description: '',
        permissions: { permissions: [] },
        teamIds: { teamIds: [] },
      });
      expect(emptied).toMatchObject({ description: '', permissions: [], teamIds: [] });
      expect(await may(22, 'admin:org', 1)).toBe(false);
      expect(await roles.getRole({ orgId: 1, id: role.id })).toEqual(emptied);
    });

    it('refuses bad input with 400 and a missing role with 404, changing nothing', async () => {
      const role = await roles.createRole({
        orgId: 1,
        name: 'Stable',
        description: '',
        permissions: [{ namespace: 'avatar', action: 'update' }],
        teamIds: [12],
      });
      expect(
        await status(roles.updateRole({ orgId: 1, id: role.id, permissions: { permissions: [{ namespace: 'org', action: 'delete' }] } })),
      ).toBe(400);
      expect(await status(roles.updateRole({ orgId: 1, id: role.id, teamIds: { teamIds: [31] } }))).toBe(400);
      expect(await status(roles.updateRole({ orgId: 1, id: role.id, name: 'EDITORS' }))).toBe(400);
      const tooLong = await roles.updateRole({ orgId: 1, id: role.id, description: 'd'.repeat(1024 * 1024) }).catch((e) => e);
      expect(tooLong).toMatchObject({ httpStatus: 400, message: 'description: at most 255 characters' });
      expect(await status(roles.updateRole({ orgId: 1, id: role.id, description: 'd'.repeat(255) }))).toBe('ok');
      // Back as it was, but for when it was last updated (a second may have passed since it was made).
      const restored = await roles.updateRole({ orgId: 1, id: role.id, description: '' });
      expect(restored).toEqual({ ...role, updatedUnix: restored.updatedUnix });
      expect(await status(roles.updateRole({ orgId: 2, id: role.id, name: 'x' }))).toBe(404);
      expect(await status(roles.updateRole({ orgId: 1, id: 987654, name: 'x' }))).toBe(404);
      expect(await roles.getRole({ orgId: 1, id: role.id })).toEqual(restored);
      expect(await may(22, 'update:avatar', 1)).toBe(true);
      // Its own name, in another case, is not a duplicate.
      expect((await roles.updateRole({ orgId: 1, id: role.id, name: 'STABLE' })).name).toBe('STABLE');
    });
  });

  describe('delete', () => {
    it('removes the role, every grant it carried and every assignment; the next check proves it', async () => {
      const role = await roles.createRole({
        orgId: 1,
        name: 'Doomed',
        description: '',
        permissions: [
          { namespace: 'bus-token', action: 'list' },
          { namespace: 'role', action: 'edit' },
        ],
        teamIds: [11, 12],
      });
      expect(await may(21, 'list:bus-token', 1)).toBe(true);
      expect(await may(23, 'edit:role', role.id)).toBe(true);
      await roles.deleteRole({ orgId: 1, id: role.id });
      expect(await may(21, 'list:bus-token', 1)).toBe(false);
      expect(await may(23, 'list:bus-token', 1)).toBe(false);
      expect(await may(10, 'view:role', role.id)).toBe(false);
      expect((await authz.readTuples({ object: `role:${role.id}`, relation: '', user: '' })).tuples).toEqual([]);
      expect((await authz.readTuples({ object: 'organization:1', relation: '', user: `role:${role.id}#assignee` })).tuples).toEqual([]);
      expect(await status(roles.getRole({ orgId: 1, id: role.id }))).toBe(404);
      expect(await status(roles.deleteRole({ orgId: 1, id: role.id }))).toBe(404);
      expect((await roles.listTeamRoles({ teamIds: [11, 12] })).teamRoles[11]?.roleIds ?? []).not.toContain(role.id);
    });

    it('answers 404 for a role of another organization and leaves it alone', async () => {
      const role = await roles.createRole({
        orgId: 2,
        name: 'Theirs',
        description: '',
        permissions: [{ namespace: 'org', action: 'edit' }],
        teamIds: [31],
      });
      expect(await status(roles.deleteRole({ orgId: 1, id: role.id }))).toBe(404);
      expect(await may(41, 'edit:org', 2)).toBe(true);
    });
  });

  describe('principals', () => {
    it('lists the assigned teams, then the users they reach with the teams they come through', async () => {
      const role = await roles.createRole({ orgId: 1, name: 'Reach', description: '', permissions: [], teamIds: [12, 11, 13] });
      // User 22 is in two assigned teams.
      await authz.writeTuples({ writes: [t('user:22', 'member', 'team:11')], deletes: [] });
      try {
        expect(await roles.listPrincipals({ orgId: 1, id: role.id })).toEqual({
          principals: [
            { type: 'team', id: 11, viaTeamIds: [] },
            { type: 'team', id: 12, viaTeamIds: [] },
            { type: 'team', id: 13, viaTeamIds: [] },
            { type: 'user', id: 21, viaTeamIds: [11] },
            { type: 'user', id: 22, viaTeamIds: [11, 12] },
            { type: 'user', id: 23, viaTeamIds: [12] },
          ],
        });
      } finally {
        await authz.writeTuples({ writes: [], deletes: [t('user:22', 'member', 'team:11')] });
      }
      await roles.updateRole({ orgId: 1, id: role.id, teamIds: { teamIds: [13] } });
      expect(await roles.listPrincipals({ orgId: 1, id: role.id })).toEqual({ principals: [{ type: 'team', id: 13, viaTeamIds: [] }] });
      expect(await status(roles.listPrincipals({ orgId: 2, id: role.id }))).toBe(404);
      await roles.deleteRole({ orgId: 1, id: role.id });
    });
  });

  describe('team assignments (for orgs-teams)', () => {
    it('replaces a team’s roles; roles of another organization and too many roles are 400', async () => {
      const mk = (name: string, orgId = 1) =>
        roles.createRole({ orgId, name, description: '', permissions: [{ namespace: 'sync-token', action: 'view' }], teamIds: [] });
      const [a, b, c, d] = [await mk('A'), await mk('B'), await mk('C'), await mk('D')];
      const foreign = await mk('Foreign', 2);

      expect(await roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [b.id, a.id, a.id] })).toEqual({ roleIds: [a.id, b.id] });
      expect((await roles.getRole({ orgId: 1, id: a.id })).teamIds).toEqual([13]);
      await authz.writeTuples({ writes: [t('user:50', 'member', 'team:13')], deletes: [] });
      expect(await may(50, 'view:sync-token', 1)).toBe(true);

      expect(await status(roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [a.id, foreign.id] }))).toBe(400);
      expect(await status(roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [a.id, 987654] }))).toBe(400);
      expect(await status(roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [a.id, b.id, c.id, d.id] }))).toBe(400);
      expect(await status(roles.assignTeamRoles({ teamId: 31, orgId: 1, roleIds: [a.id] }))).toBe(400);
      expect((await roles.listTeamRoles({ teamIds: [13] })).teamRoles).toEqual({ 13: { roleIds: [a.id, b.id] } });

      expect(await roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [c.id] })).toEqual({ roleIds: [c.id] });
      expect((await roles.getRole({ orgId: 1, id: a.id })).teamIds).toEqual([]);
      expect(await roles.listTeamRoles({ teamIds: [13, 11, 31] })).toMatchObject({ teamRoles: { 13: { roleIds: [c.id] } } });

      // Creating or updating a role may not push a team past the maximum either.
      await roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [a.id, b.id, c.id] });
      expect(await status(roles.updateRole({ orgId: 1, id: d.id, teamIds: { teamIds: [13] } }))).toBe(400);
      expect(await status(roles.createRole({ orgId: 1, name: 'E', description: '', permissions: [], teamIds: [13] }))).toBe(400);
      // ...while re-supplying a team the role already has is not an addition.
      expect((await roles.updateRole({ orgId: 1, id: a.id, teamIds: { teamIds: [13] } })).teamIds).toEqual([13]);

      // Clearing works even after the team's own tuples are gone (a team being deleted).
      await authz.writeTuples({
        writes: [],
        deletes: [t('organization:1', 'organization', 'team:13'), t('team:13#member', 'member', 'organization:1')],
      });
      expect(await roles.assignTeamRoles({ teamId: 13, orgId: 1, roleIds: [] })).toEqual({ roleIds: [] });
      expect(await may(50, 'view:sync-token', 1)).toBe(false);
      expect((await roles.listTeamRoles({ teamIds: [13] })).teamRoles).toEqual({});
    });
  });

  describe('organization deletion', () => {
    it('deletes every role of the organization with their tuples, and only those', async () => {
      await seedOrg(authz, 3, 60, { 61: [62] });
      const a = await roles.createRole({
        orgId: 3,
        name: 'A',
        description: '',
        permissions: [{ namespace: 'org', action: 'edit' }],
        teamIds: [61],
      });
      const b = await roles.createRole({
        orgId: 3,
        name: 'B',
        description: '',
        permissions: [{ namespace: 'role', action: 'view' }],
        teamIds: [],
      });
      const elsewhere = (await roles.listRoles({ orgId: 1 })).roles.length;
      expect(await may(62, 'edit:org', 3)).toBe(true);
      expect(await roles.deleteOrgRoles({ orgId: 3 })).toEqual({ roleIds: [a.id, b.id] });
      expect(await may(62, 'edit:org', 3)).toBe(false);
      expect(await roles.listRoles({ orgId: 3 })).toEqual({ roles: [], maxRolesPerTeam: 3 });
      for (const id of [a.id, b.id]) expect((await authz.readTuples({ object: `role:${id}`, relation: '', user: '' })).tuples).toEqual([]);
      expect((await roles.listTeamRoles({ teamIds: [61] })).teamRoles).toEqual({});
      expect((await roles.listRoles({ orgId: 1 })).roles).toHaveLength(elsewhere);
      expect(await roles.deleteOrgRoles({ orgId: 3 })).toEqual({ roleIds: [] });
    });
  });

  describe('allowed permissions', () => {
    it('answers the relations held on each of the seven object types, in request order', async () => {
      await authz.writeTuples({
        writes: [
          t('organization:1', 'owner', 'cluster:7'),
          t('user:21', 'owner', 'contract:8'),
          t('organization:1', 'owner', 'robot_ac:9'),
          t('robot_ac:9', 'owner', 'token:6'),
        ],
        deletes: [],
      });
      const { objects } = await roles.allowedPermissions({
        userId: 10,
        objects: [
          { objectType: 'organization', objectId: 1 },
          { objectType: 'organization', objectId: 2 },
          { objectType: 'user', objectId: 10 },
          { objectType: 'team', objectId: 11 },
          { objectType: 'cluster', objectId: 7 },
          { objectType: 'contract', objectId: 8 },
          { objectType: 'robot_ac', objectId: 9 },
          { objectType: 'token', objectId: 6 },
        ],
      });
      expect(objects.map((o) => [o.objectType, o.objectId])).toEqual([
        ['organization', 1],
        ['organization', 2],
        ['user', 10],
        ['team', 11],
        ['cluster', 7],
        ['contract', 8],
        ['robot_ac', 9],
        ['token', 6],
      ]);
      const [org1, org2, user, team, cluster, contract, robot, token] = objects.map((o) => o.allowedPermissions);
      // The owner holds every organization relation; being in no team of organization 2, none there.
      expect(org1).toEqual(expect.arrayContaining(['owner', 'member', 'edit', 'delete', 'admin', 'create_role', 'view_role', 'list_team']));
      expect(org1).not.toContain('site');
      expect(org2).toEqual([]);
      expect(user).toEqual([]);
      expect(team).toEqual(expect.arrayContaining(['edit', 'delete', 'view', 'add_member', 'join']));
      expect(team).not.toContain('member');
      expect(team).not.toContain('organization');
      expect(cluster).toEqual(['manage', 'view', 'issue_license']);
      expect(contract).toEqual([]);
      expect(robot).toEqual(['view', 'edit', 'delete']);
      expect(token).toEqual(['view', 'delete']);

      // A plain member of organization 1: what members hold, nothing more.
      const member = await roles.allowedPermissions({
        userId: 21,
        objects: [
          { objectType: 'organization', objectId: 1 },
          { objectType: 'contract', objectId: 8 },
          { objectType: 'cluster', objectId: 7 },
        ],
      });
      expect(member.objects[0].allowedPermissions).toContain('member');
      expect(member.objects[0].allowedPermissions).not.toContain('owner');
      expect(member.objects[0].allowedPermissions).not.toContain('delete');
      expect(member.objects[1].allowedPermissions).toEqual(['owner', 'view', 'add_cluster', 'updated_preferences', 'issue_license']);
      expect(member.objects[2].allowedPermissions).toEqual(['view']);
    });

    it('follows role grants: a granted relation shows up on the next call and goes with the role', async () => {
      const ask = async () =>
        (await roles.allowedPermissions({ userId: 23, objects: [{ objectType: 'organization', objectId: 1 }] })).objects[0]
          .allowedPermissions;
      expect(await ask()).not.toContain('list_access_token');
      const role = await roles.createRole({
        orgId: 1,
        name: 'Tokens',
        description: '',
        permissions: [{ namespace: 'access-token', action: 'list' }],
        teamIds: [12],
      });
      expect(await ask()).toContain('list_access_token');
      await roles.deleteRole({ orgId: 1, id: role.id });
      expect(await ask()).not.toContain('list_access_token');
    });

    it('answers 400 for a bad type, a bad id, or another user’s user object', async () => {
      const ask = (objectType: string, objectId: number) =>
        status(roles.allowedPermissions({ userId: 21, objects: [{ objectType, objectId }] }));
      expect(await ask('role', 1)).toBe(400);
      expect(await ask('site', 1)).toBe(400);
      expect(await ask('Organization', 1)).toBe(400);
      expect(await ask('team', 0)).toBe(400);
      expect(await ask('team', -4)).toBe(400);
      expect(await ask('user', 22)).toBe(400);
      expect(await ask('user', 21)).toBe('ok');
      // A 100,000-character type is refused by its length, and the answer quotes none of it.
      const huge = await roles
        .allowedPermissions({ userId: 21, objects: [{ objectType: 'x'.repeat(100_000), objectId: 1 }] })
        .catch((e) => e);
      expect(huge).toMatchObject({ httpStatus: 400, message: 'objects[].objectType: at most 32 characters' });
      const long = await roles.allowedPermissions({ userId: 21, objects: [{ objectType: 'y'.repeat(32), objectId: 1 }] }).catch((e) => e);
      expect(long.message).toBe(
        `objectType "${'y'.repeat(32)}" is invalid; use one of user, organization, team, cluster, contract, robot_ac, token`,
      );
      expect(
        await status(
          roles.allowedPermissions({
            userId: 21,
            objects: [
              { objectType: 'team', objectId: 11 },
              { objectType: 'nope', objectId: 1 },
            ],
          }),
        ),
      ).toBe(400);
      expect(await roles.allowedPermissions({ userId: 21, objects: [] })).toEqual({ objects: [] });
      const many = (n: number) => Array.from({ length: n }, () => ({ objectType: 'team', objectId: 11 }));
      expect((await roles.allowedPermissions({ userId: 21, objects: many(100) })).objects).toHaveLength(100);
      expect(await status(roles.allowedPermissions({ userId: 21, objects: many(101) }))).toBe(400);
    });
  });
});
