import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway, callApi } from './test-gateway';

// Teams, team actions and team members at the edge (docs/organizations-and-teams.md), against a stand-in orgs-teams
// and authz: who may call each row (401, 403 naming the permission, 404 for an organization the caller cannot see or
// a team of another one, nothing asked of orgs-teams when refused), the team in Gitea's shape (its organization,
// units_map, role_ids and role_until only when set), what each row asks orgs-teams (a team created without a type is
// general, members by uid or uname, the owner team's members connected to its clusters), a role's end checked here
// (422), the owner team kept to owners, and giving no more than one holds (403 naming what authz says is missing).
// orgs-teams' own rules: apps/orgs-teams/test/teams.int.test.ts, orgs.int.test.ts; authz's count of what is missing:
// apps/authz/test/grants.int.test.ts; roles granting on the very next request and a role's end:
// deploy/local/test/org-lists.int.test.ts.

const user = (id: number, login: string, extra: Partial<orgsTeamsV1.User> = {}) =>
  orgsTeamsV1.User.fromPartial({ id, login, email: `${login}@example.com`, active: true, ...extra });
const USERS: Record<string, orgsTeamsV1.User> = {
  root: user(1, 'root', { isAdmin: true }),
  alice: user(5, 'alice'),
  bob: user(6, 'bob'),
  carol: user(7, 'carol'),
  erin: user(8, 'erin'),
};
const GLOBEX = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'globex', fullName: 'Globex', visibility: 'public' });
const INITECH = orgsTeamsOrgsV1.Organization.fromPartial({ id: 11, username: 'initech', visibility: 'private' });
const team = (id: number, name: string, extra: Partial<orgsTeamsOrgsV1.Team> = {}) =>
  orgsTeamsOrgsV1.Team.fromPartial({ id, name, organization: GLOBEX, permission: 'read', type: 'general', ...extra });
const TEAMS: Record<number, orgsTeamsOrgsV1.Team> = {
  100: team(100, 'Owners', { permission: 'owner', description: 'the owners' }),
  101: team(101, 'devs', { type: 'kubernetes', permission: 'write' }),
  102: team(102, 'ops', { units: ['cluster.view'], hasUnits: true }),
  103: team(103, 'vault', { roleIds: [50], roleUntil: { 50: '2030-01-01T00:00:00Z' } }),
  200: team(200, 'auditors', { organization: INITECH }),
};
/** Roles of globex: 50 carries more than bob holds; 51 what he holds. */
const POWERFUL = 50;
const TEAM_EDITOR = 51;

/**
 * alice owns globex (everything on it and its teams); bob is a member holding a custom role that edits teams and adds
 * members; erin owns initech; carol is in no organization; root holds everything.
 */
function holds(userId: number, permission: string, objectId: number): boolean {
  if (userId === USERS.root.id) return true;
  const globex = objectId === GLOBEX.id || (TEAMS[objectId] && TEAMS[objectId].organization?.id === GLOBEX.id);
  if (userId === USERS.alice.id) return !!globex;
  if (userId === USERS.erin.id) return objectId === INITECH.id || objectId === 200;
  if (userId === USERS.bob.id)
    return (
      !!globex &&
      [
        'list:team',
        'view:team',
        'list:team-members',
        'view:team-member',
        'edit:team',
        'add:team',
        'add:team-member',
        'leave:team',
      ].includes(permission)
    );
  return false;
}

describe('teams and their members at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    // initech is private: erin and root see it, no one else.
    const callers = fakeOrgAndCaller(USERS, [GLOBEX, INITECH], holds);
    backends = await startFakeBackends({
      orgsTeams: {
        ...callers.orgsTeams,
        organizations: {
          ...callers.orgsTeams.organizations,
          getTeam: async ({ teamId, orgId }) => {
            const found = TEAMS[teamId];
            if (!found || (orgId && found.organization?.id !== orgId)) throw new NotFoundError(`team ${teamId} does not exist`);
            return found;
          },
          listTeams: async ({ orgId }) => ({ teams: Object.values(TEAMS).filter((t) => t.organization?.id === orgId), total: 4 }),
          createTeam: async ({ name, type, permission, units, roleIds }) => {
            if (name.toLowerCase() === 'devs') throw new ConflictError(`team ${name} exists`);
            if (type === 'database') throw new InputError('type must be one of kubernetes, general');
            return team(300, name, {
              type,
              permission: permission || 'read',
              units: units?.units ?? [],
              hasUnits: !!units,
              roleIds: roleIds?.roleIds ?? [],
              roleUntil: roleIds?.until ?? {},
            });
          },
          editTeam: async ({ teamId, name, description, roleIds }) => {
            if (name === 'devs' && teamId !== 101) throw new ConflictError(`team ${name} exists`);
            return { ...TEAMS[teamId], name, description: description ?? '', roleIds: roleIds?.roleIds ?? TEAMS[teamId].roleIds };
          },
          deleteTeam: async ({ teamId }) => {
            if (teamId === 100) throw new InputError('the owner team Owners cannot be deleted');
            return {};
          },
          addTeamMember: async ({ userId, username, conflictIfMember }) => {
            if (username === 'initech') throw new InputError('initech is an organization, not a user');
            if (username === 'nobody') throw new NotFoundError('user nobody does not exist');
            if (conflictIfMember && userId === USERS.bob.id) throw new ConflictError('bob is a member of the team already');
            return { added: true };
          },
          removeTeamMember: async ({ userId, username }) => {
            if (userId === USERS.alice.id || username === 'alice')
              throw new InputError('alice is the last owner of globex; add another owner before removing them');
            return {};
          },
          listTeamMembers: async () => ({ members: [USERS.bob], total: 1 }),
          getTeamMember: async ({ username }) => {
            const found = USERS[username];
            if (!found || username === 'carol') throw new NotFoundError(`${username} is not a member of the team`);
            return found;
          },
        },
      },
      authz: {
        ...callers.authz,
        roles: {
          // bob holds edit:team and add:team-member only: the powerful role, the vault team's, and `admin` are beyond him.
          checkGrant: async ({ userId, roleIds, teamIds, permissions }) => {
            if (userId !== USERS.bob.id) return { missing: [], dependsOn: [] };
            const missing = [
              ...(roleIds.includes(POWERFUL) || teamIds.includes(103) ? ['edit:org', 'create_role:org', 'list:bus-token'] : []),
              ...(permissions.some((p) => p.namespace === 'org' && p.action === 'admin') ? ['admin:org'] : []),
            ];
            return { missing, dependsOn: [] };
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = (who: string | undefined, method: string, path: string, body?: unknown) => callApi(base, who, method, path, body);
  const status = async (...args: Parameters<typeof call>) => (await call(...args)).status;
  type Method = 'createTeam' | 'editTeam' | 'deleteTeam' | 'addTeamMember' | 'removeTeamMember';
  const asked = (method: Method) => backends.orgsTeams.callsTo('organizations', method);
  const action = (who: string | undefined, teamId: number, name: string, query: string, org = 'globex') =>
    call(who, 'POST', `/orgs/${org}/teams/${teamId}/action/${name}${query}`);

  describe('GET and POST /orgs/{orgname}/teams', () => {
    it('lists the teams in Gitea’s shape: the organization, units and units_map, role_ids and role_until only when set', async () => {
      const teams = await call('bob', 'GET', '/orgs/globex/teams');
      expect(teams.status).toBe(200);
      expect(teams.body[0]).toEqual({
        id: 100,
        name: 'Owners',
        description: 'the owners',
        organization: expect.objectContaining({ id: GLOBEX.id, username: 'globex', full_name: 'Globex', orgType: 0 }),
        permission: 'owner',
        units: null,
        units_map: {},
        type: 'general',
      });
      expect(teams.body[2]).toMatchObject({ name: 'ops', units: ['cluster.view'], units_map: { 'cluster.view': 'read' } });
      expect(teams.body[3]).toMatchObject({ name: 'vault', role_ids: [POWERFUL], role_until: { [POWERFUL]: '2030-01-01T00:00:00Z' } });
      expect(teams.body[1]).not.toHaveProperty('role_ids');
      expect(teams.body[1]).not.toHaveProperty('role_until');
    });

    it('answers 401, 403 to non-members, 404 for an organization the caller cannot see; site admins see all', async () => {
      expect(await status(undefined, 'GET', '/orgs/globex/teams')).toBe(401);
      expect(await call('carol', 'GET', '/orgs/globex/teams')).toMatchObject({
        status: 403,
        body: { message: 'you do not have the list:team permission' },
      });
      expect(await status('alice', 'GET', '/orgs/initech/teams')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/nowhere/teams')).toBe(404);
      expect(await status('root', 'GET', '/orgs/initech/teams')).toBe(200);
    });

    it('creates with create:team: general when no type is given, the roles and their ends passed on', async () => {
      const made = await call('alice', 'POST', '/orgs/globex/teams', {
        name: 'qa',
        description: 'Testers',
        assignedRoleIDs: [TEAM_EDITOR],
      });
      expect(made).toMatchObject({ status: 201, body: { name: 'qa', type: 'general', role_ids: [TEAM_EDITOR] } });
      expect(asked('createTeam').at(-1)).toMatchObject({
        orgId: GLOBEX.id,
        name: 'qa',
        type: 'general',
        description: 'Testers',
        roleIds: { roleIds: [TEAM_EDITOR], until: {} },
      });
      const end = new Date(Date.now() + 60_000).toISOString();
      const timed = await call('alice', 'POST', '/orgs/globex/teams', {
        name: 'late',
        assignedRoleIDs: [TEAM_EDITOR],
        assignedRoleUntil: { [TEAM_EDITOR]: end },
      });
      expect(timed.body.role_until).toEqual({ [TEAM_EDITOR]: end });
      expect(asked('createTeam').at(-1)?.roleIds).toEqual({ roleIds: [TEAM_EDITOR], until: { [TEAM_EDITOR]: end } });
      expect((await call('alice', 'POST', '/orgs/globex/teams', { name: 'plain', type: 'kubernetes' })).body).not.toHaveProperty(
        'role_ids',
      );
      expect(await status('root', 'POST', '/orgs/initech/teams', { name: 'auditors2', type: 'general' })).toBe(201);
    });

    it('refuses 401, 403 without create:team, 404, 422 without a name or for an end past or of a role not given, asking nothing', async () => {
      backends.orgsTeams.reset();
      expect(await status(undefined, 'POST', '/orgs/globex/teams', { name: 'x' })).toBe(401);
      expect(await call('bob', 'POST', '/orgs/globex/teams', { name: 'x' })).toMatchObject({
        status: 403,
        body: { message: 'you do not have the create:team permission' },
      });
      expect(await status('carol', 'POST', '/orgs/globex/teams', { name: 'x' })).toBe(403);
      expect(await status('alice', 'POST', '/orgs/initech/teams', { name: 'x' })).toBe(404);
      expect(await status('alice', 'POST', '/orgs/globex/teams', { type: 'general' })).toBe(422);
      const past = { assignedRoleIDs: [TEAM_EDITOR], assignedRoleUntil: { [TEAM_EDITOR]: '2020-01-01T00:00:00Z' } };
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'late', ...past })).toBe(422);
      const notGiven = { assignedRoleIDs: [], assignedRoleUntil: { [TEAM_EDITOR]: new Date(Date.now() + 60_000).toISOString() } };
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'late', ...notGiven })).toBe(422);
      expect(await status('alice', 'PATCH', '/teams/102', { name: 'ops', ...notGiven })).toBe(422);
      expect(asked('createTeam')).toEqual([]);
      expect(asked('editTeam')).toEqual([]);
    });

    it('answers a taken name 422 as Gitea does, and passes orgs-teams’ 400 on', async () => {
      expect(await status('alice', 'POST', '/orgs/globex/teams', { name: 'DEVS', type: 'general' })).toBe(422);
      expect(await call('alice', 'POST', '/orgs/globex/teams', { name: 'qa', type: 'database' })).toMatchObject({
        status: 400,
        body: { message: 'type must be one of kubernetes, general' },
      });
    });
  });

  describe('team actions', () => {
    it('join: the caller only, with join:team (a plain member has it not); the team’s roles checked; 409 passed on', async () => {
      backends.orgsTeams.reset();
      expect(await call('bob', 'POST', `/orgs/globex/teams/102/action/join?uid=${USERS.bob.id}`)).toMatchObject({ status: 403 });
      expect(await call('alice', 'POST', `/orgs/globex/teams/102/action/join?uid=${USERS.bob.id}`)).toMatchObject({ status: 403 });
      expect((await action(undefined, 102, 'join', `?uid=${USERS.bob.id}`)).status).toBe(401);
      expect(asked('addTeamMember')).toEqual([]);
      expect((await action('alice', 102, 'join', `?uid=${USERS.alice.id}`)).status).toBe(200);
      expect(asked('addTeamMember').at(-1)).toEqual({ teamId: 102, userId: USERS.alice.id, username: '', conflictIfMember: true });
      expect(backends.authz.callsTo('roles', 'checkGrant').at(-1)).toMatchObject({
        userId: USERS.alice.id,
        orgId: GLOBEX.id,
        teamIds: [102],
      });
      expect((await action('root', 102, 'join', `?uid=${USERS.root.id}`)).status).toBe(200);
    });

    it('add: by uname when given, else by uid; orgs-teams’ 409, 400 and 404 passed on; the owner team is the owners’', async () => {
      backends.orgsTeams.reset();
      expect((await action('alice', 101, 'add', `?uid=${USERS.carol.id}&uname=carol`)).status).toBe(200);
      expect((await action('alice', 101, 'add', `?uid=${USERS.carol.id}`)).status).toBe(200);
      expect(asked('addTeamMember')).toEqual([
        { teamId: 101, userId: 0, username: 'carol', conflictIfMember: true },
        { teamId: 101, userId: USERS.carol.id, username: '', conflictIfMember: true },
      ]);
      expect((await action('alice', 101, 'add', `?uid=${USERS.bob.id}`)).status).toBe(409);
      expect(await action('alice', 101, 'add', `?uid=11&uname=initech`)).toMatchObject({
        status: 400,
        body: { message: 'initech is an organization, not a user' },
      });
      expect((await action('alice', 101, 'add', '?uid=999999&uname=nobody')).status).toBe(404);
      // bob adds members through his role, but not to the owner team, and not beyond what he holds.
      expect((await action('bob', 101, 'add', `?uid=${USERS.carol.id}`)).status).toBe(200);
      expect(await action('bob', 100, 'add', `?uid=${USERS.carol.id}`)).toMatchObject({
        status: 403,
        body: { message: 'you do not have the manage_owners:org permission' },
      });
      const vault = await action('bob', 103, 'add', `?uid=${USERS.carol.id}`);
      expect(vault.status).toBe(403);
      for (const missing of ['edit:org', 'create_role:org', 'list:bus-token']) expect(vault.body.message).toContain(missing);
    });

    it('leave and remove: the caller leaves, others are removed with remove:team; the owner team’s leave disconnects its clusters', async () => {
      backends.orgsTeams.reset();
      expect((await action('bob', 102, 'leave', `?uid=${USERS.alice.id}`)).status).toBe(403);
      expect((await action('bob', 102, 'leave', `?uid=${USERS.bob.id}`)).status).toBe(200);
      expect((await action('bob', 101, 'remove', `?uid=${USERS.carol.id}`)).status).toBe(403);
      expect((await action('alice', 101, 'remove', `?uid=${USERS.carol.id}`)).status).toBe(200);
      expect(await action('alice', 100, 'leave', `?uid=${USERS.alice.id}`)).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('last owner') },
      });
      expect(asked('removeTeamMember')).toEqual([
        { teamId: 102, userId: USERS.bob.id, username: '', disconnectClusters: false },
        { teamId: 101, userId: USERS.carol.id, username: '', disconnectClusters: false },
        { teamId: 100, userId: USERS.alice.id, username: '', disconnectClusters: true },
      ]);
    });

    it('answers 400 for a missing or bad uid and an unknown action, 404 for a team of another organization', async () => {
      expect((await action('alice', 101, 'add', '?uname=dave')).status).toBe(400);
      expect((await action('alice', 101, 'remove', '?uid=x')).status).toBe(400);
      expect(await action('alice', 101, 'promote', `?uid=${USERS.bob.id}`)).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('unknown team action') },
      });
      expect((await action('erin', 101, 'add', `?uid=${USERS.carol.id}`, 'initech')).status).toBe(404);
      expect((await action('root', 101, 'add', `?uid=${USERS.carol.id}`, 'initech')).status).toBe(404);
      expect(backends.orgsTeams.callsTo('organizations', 'getTeam').at(-1)).toMatchObject({ teamId: 101, orgId: INITECH.id });
      expect((await action('alice', 987654, 'add', `?uid=${USERS.carol.id}`)).status).toBe(404);
    });
  });

  describe('/teams/{teamid}', () => {
    it('GET: 200 with view:team, 403 for others, 401, 404 unknown, 400 for a bad id', async () => {
      expect(await call('bob', 'GET', '/teams/101')).toMatchObject({
        status: 200,
        body: { id: 101, name: 'devs', organization: { username: 'globex' } },
      });
      expect(await status('carol', 'GET', '/teams/101')).toBe(403);
      expect(await status('root', 'GET', '/teams/101')).toBe(200);
      expect(await status(undefined, 'GET', '/teams/101')).toBe(401);
      expect(await status('alice', 'GET', '/teams/987654')).toBe(404);
      expect(await status('alice', 'GET', '/teams/abc')).toBe(400);
    });

    it('PATCH: passes the edit on with edit:team; 422 without a name, 409 passed on, 403, 404', async () => {
      const edited = await call('bob', 'PATCH', '/teams/102', {
        name: 'operations',
        description: 'On call',
        permission: 'custom',
        type: 'kubernetes',
      });
      expect(edited).toMatchObject({ status: 200, body: { id: 102, name: 'operations', description: 'On call' } });
      expect(asked('editTeam').at(-1)).toMatchObject({
        teamId: 102,
        name: 'operations',
        description: 'On call',
        permission: 'custom',
        type: 'kubernetes',
      });
      expect(await status('alice', 'PATCH', '/teams/102', { description: 'no name' })).toBe(422);
      expect(await status('alice', 'PATCH', '/teams/102', { name: 'devs' })).toBe(409);
      expect(await status('carol', 'PATCH', '/teams/102', { name: 'mine' })).toBe(403);
      expect(await status('alice', 'PATCH', '/teams/987654', { name: 'x' })).toBe(404);
      // An empty list of roles is passed on: it takes them away.
      await call('alice', 'PATCH', '/teams/103', { name: 'vault', assignedRoleIDs: [] });
      expect(asked('editTeam').at(-1)?.roleIds).toEqual({ roleIds: [], until: {} });
    });

    it('keeps the owner team to its owners: any edit of it by a holder of edit:team is 403', async () => {
      backends.orgsTeams.reset();
      for (const change of [{ description: 'by bob' }, { units: ['repo.code'] }, { assignedRoleIDs: [TEAM_EDITOR] }]) {
        const refused = await call('bob', 'PATCH', '/teams/100', { name: 'Owners', ...change });
        expect([change, refused.status, refused.body.message]).toEqual([change, 403, 'you do not have the manage_owners:org permission']);
      }
      expect(asked('editTeam')).toEqual([]);
      expect(await status('alice', 'PATCH', '/teams/100', { name: 'Owners', description: 'the owners of globex' })).toBe(200);
    });

    it('gives no more than the caller holds: roles and `permission: admin` beyond them are 403 naming what is missing, and nothing changes', async () => {
      backends.orgsTeams.reset();
      const refused = await call('bob', 'PATCH', '/teams/102', { name: 'ops', description: 'by bob', assignedRoleIDs: [POWERFUL] });
      expect(refused.status).toBe(403);
      for (const missing of ['edit:org', 'create_role:org', 'list:bus-token']) expect(refused.body.message).toContain(missing);
      expect(backends.authz.callsTo('roles', 'checkGrant').at(-1)).toMatchObject({
        userId: USERS.bob.id,
        orgId: GLOBEX.id,
        roleIds: [POWERFUL],
      });
      expect(await call('bob', 'PATCH', '/teams/102', { name: 'ops', permission: 'admin' })).toMatchObject({
        status: 403,
        body: { message: 'permission admin would give permissions you do not hold: admin:org' },
      });
      expect(asked('editTeam')).toEqual([]);
      // What he holds he may give, and taking roles away gives nothing.
      expect(await status('bob', 'PATCH', '/teams/102', { name: 'ops', assignedRoleIDs: [TEAM_EDITOR] })).toBe(200);
      expect(await status('bob', 'PATCH', '/teams/102', { name: 'ops', assignedRoleIDs: [] })).toBe(200);
      expect(await status('bob', 'PATCH', '/teams/102', { name: 'ops', permission: 'write' })).toBe(200);
      // Owners and site admins may give anything.
      expect(await status('alice', 'PATCH', '/teams/102', { name: 'ops', assignedRoleIDs: [POWERFUL], permission: 'admin' })).toBe(200);
      expect(await status('root', 'POST', '/orgs/globex/teams', { name: 'admin-vault', assignedRoleIDs: [POWERFUL] })).toBe(201);
    });

    it('DELETE: with delete:team; the owner team’s refusal passed on', async () => {
      backends.orgsTeams.reset();
      expect(await status('bob', 'DELETE', '/teams/102')).toBe(403);
      expect(await status(undefined, 'DELETE', '/teams/102')).toBe(401);
      expect(asked('deleteTeam')).toEqual([]);
      expect(await status('alice', 'DELETE', '/teams/102')).toBe(204);
      expect(asked('deleteTeam')).toEqual([{ teamId: 102 }]);
      expect(await call('alice', 'DELETE', '/teams/100')).toMatchObject({
        status: 400,
        body: { message: 'the owner team Owners cannot be deleted' },
      });
    });
  });

  describe('/teams/{teamid}/members', () => {
    it('lists members and answers one or 404; 403 and 401 otherwise', async () => {
      expect((await call('bob', 'GET', '/teams/101/members')).body.map((u: { login: string }) => u.login)).toEqual(['bob']);
      expect(await call('alice', 'GET', '/teams/101/members/bob')).toMatchObject({
        status: 200,
        body: { id: USERS.bob.id, login: 'bob', username: 'bob' },
      });
      expect(await status('alice', 'GET', '/teams/101/members/carol')).toBe(404);
      expect(await status('carol', 'GET', '/teams/101/members')).toBe(403);
      expect(await status('carol', 'GET', '/teams/101/members/bob')).toBe(403);
      expect(await status(undefined, 'GET', '/teams/101/members')).toBe(401);
    });

    it('PUT adds by name without a conflict, connecting an owner to the clusters only when asked; 400 for a bad flag', async () => {
      backends.orgsTeams.reset();
      expect(await status('alice', 'PUT', '/teams/100/members/erin?autoConnectClusters=true')).toBe(204);
      expect(await status('alice', 'PUT', '/teams/100/members/erin')).toBe(204);
      expect(await status('alice', 'PUT', '/teams/101/members/erin?autoConnectClusters=true')).toBe(204);
      // Each with the request's audit event, for orgs-teams to write with the membership.
      const audit = expect.objectContaining({ action: 'orgAddTeamMember', actorLogin: 'alice', method: 'PUT', status: 204 });
      expect(asked('addTeamMember')).toEqual([
        { teamId: 100, userId: 0, username: 'erin', conflictIfMember: false, clusterConnection: { connect: true, role: 'cluster-admin' }, audit },
        { teamId: 100, userId: 0, username: 'erin', conflictIfMember: false, audit },
        { teamId: 101, userId: 0, username: 'erin', conflictIfMember: false, audit },
      ]);
      backends.orgsTeams.reset();
      expect(await status('alice', 'PUT', '/teams/101/members/carol?autoConnectClusters=maybe')).toBe(400);
      expect(await status('carol', 'PUT', '/teams/101/members/carol')).toBe(403);
      expect(await status('bob', 'PUT', '/teams/100/members/carol')).toBe(403);
      expect(asked('addTeamMember')).toEqual([]);
      expect(await status('alice', 'PUT', '/teams/101/members/initech')).toBe(400);
      expect(await status('alice', 'PUT', '/teams/101/members/nobody')).toBe(404);
      const vault = await call('bob', 'PUT', '/teams/103/members/bob');
      expect(vault).toMatchObject({ status: 403, body: { message: expect.stringContaining('list:bus-token') } });
    });

    it('DELETE removes by name, an owner by id with its clusters; 403 without remove:team-member; the last owner’s 400 passed on', async () => {
      backends.orgsTeams.reset();
      expect(await status('bob', 'DELETE', '/teams/101/members/carol')).toBe(403);
      expect(asked('removeTeamMember')).toEqual([]);
      expect(await status('alice', 'DELETE', '/teams/101/members/bob')).toBe(204);
      expect(await status('alice', 'DELETE', '/teams/100/members/erin')).toBe(204);
      expect(asked('removeTeamMember')).toEqual([
        { teamId: 101, userId: 0, username: 'bob', disconnectClusters: false },
        { teamId: 100, userId: USERS.erin.id, username: '', disconnectClusters: true },
      ]);
      expect(await call('alice', 'DELETE', '/teams/100/members/alice')).toMatchObject({
        status: 400,
        body: { message: 'alice is the last owner of globex; add another owner before removing them' },
      });
    });
  });
});
