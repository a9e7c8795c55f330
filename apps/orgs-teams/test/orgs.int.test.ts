import { ORGS_CHANGED, type OrgsChanged } from '@platform/bus';
import { orgClaimsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { key, MAX_ROLES_PER_TEAM, startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// OrganizationsService against a stand-in authz that keeps tuples as OpenFGA does (writing an existing or
// deleting a missing tuple fails the whole call) and can fail on demand: every data change must leave the
// tuples matching, and a failed tuple write must leave the data as it was (decision D6).

describe('OrganizationsService', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  const users: Record<string, number> = {};

  /** Runs fn with tuple writes failing. */
  async function whileAuthzFails<T>(fn: () => Promise<T>): Promise<T> {
    authz.state.failWrites = true;
    try {
      return await fn();
    } finally {
      authz.state.failWrites = false;
    }
  }
  const has = (user: string, relation: string, object: string) => authz.tuples.has(`${user} ${relation} ${object}`);
  /**
   * Waits until the outbox has applied every change of the tests before (those made while authz failed are the
   * relay's, which retries them in the background), so counting authz's writes from here sees this test's only.
   */
  const settled = () => eventually(async () => Number((await app.running.ctx.db!.table('outbox').count({ n: '*' }))[0].n) === 0, 30_000);
  const memberLogins = async (teamId: number) => (await orgs.listTeamMembers({ teamId })).members.map((u) => u.login);
  const orgMembers = async (orgId: number) =>
    (await orgs.listMembers({ orgId, viewerId: users.root, publicOnly: false })).members.map((u) => u.login);

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    });
    orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    users.root = (await identity.getUser({ id: 0, login: 'root' })).id;
    for (const login of ['alice', 'bob']) {
      const u = await identity.createUser({
        username: login,
        email: `${login}@example.com`,
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      });
      users[login] = u.id;
    }
  });
  afterAll(async () => {
    orgs?.close();
    identity?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  const newOrg = (username: string, creatorId = users.alice) => orgs.createOrg(orgRequest(creatorId, username));
  const newTeam = (orgId: number, name: string, roleIds?: number[], until: Record<number, string> = {}) =>
    orgs.createTeam({ orgId, name, description: '', permission: '', type: 'general', roleIds: roleIds && { roleIds, until } });
  const ownerTeam = async (orgId: number) => (await orgs.listTeams({ orgId })).teams[0];

  it('creates an organization with exactly the tuples of the contract', async () => {
    const org = await newOrg('acme');
    const owners = await ownerTeam(org.id);
    expect(owners).toMatchObject({ name: 'Owners', permission: 'owner' });
    const mine = [...authz.tuples.values()].filter((t) => t.object === `organization:${org.id}` || t.object === `team:${owners.id}`);
    expect(mine.map(key).sort()).toEqual(
      [
        `site:platform site organization:${org.id}`,
        `organization:${org.id} organization team:${owners.id}`,
        `team:${owners.id}#member member organization:${org.id}`,
        `team:${owners.id}#member owner organization:${org.id}`,
        `user:${users.alice} member team:${owners.id}`,
      ].sort(),
    );
  });

  it('leaves no organization behind when its tuples cannot be written', async () => {
    await expect(whileAuthzFails(() => newOrg('initech'))).rejects.toMatchObject({ kind: 'unavailable' });
    await expect(orgs.getOrg({ name: 'initech', viewerId: users.root })).rejects.toMatchObject({ kind: 'not-found' });
    // The name is free again.
    expect((await newOrg('initech')).username).toBe('initech');
  });

  it('refuses roles of another organization before writing anything: no team, no tuple written, nothing for authz to refuse', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const other = await newOrg('globex');
    authz.roles.set(5, org.id);
    authz.roles.set(7, org.id);
    authz.roles.set(41, other.id);
    await settled();
    const [writes, calls] = [authz.state.writes, authz.state.calls.length];
    await expect(newTeam(org.id, 'mixed', [5, 41, 42])).rejects.toMatchObject({
      kind: 'input',
      message: 'role 41, 42 are not custom roles of this organization',
    });
    expect([authz.state.writes, authz.state.calls.length]).toEqual([writes, calls]);
    expect((await orgs.listTeams({ orgId: org.id })).teams.map((t) => t.name)).toEqual(['Owners']);
    const owners = await ownerTeam(org.id);
    await expect(
      orgs.editTeam({ teamId: owners.id, name: 'Owners', description: 'changed', roleIds: { roleIds: [41], until: {} } }),
    ).rejects.toMatchObject({
      kind: 'input',
      message: 'role 41 is not a custom role of this organization',
    });
    expect([authz.state.writes, authz.state.calls.length]).toEqual([writes, calls]);
    expect(await ownerTeam(org.id)).toMatchObject({ description: owners.description });
  });

  it('refuses more roles than a team may hold before writing anything', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const many = Array.from({ length: MAX_ROLES_PER_TEAM + 1 }, (_, i) => 200 + i);
    for (const id of many) authz.roles.set(id, org.id);
    await settled();
    const [writes, calls] = [authz.state.writes, authz.state.calls.length];
    await expect(newTeam(org.id, 'crowded', many)).rejects.toMatchObject({
      kind: 'input',
      message: `a team can have at most ${MAX_ROLES_PER_TEAM} custom roles; ${MAX_ROLES_PER_TEAM + 1} were given`,
    });
    expect([authz.state.writes, authz.state.calls.length]).toEqual([writes, calls]);
    expect((await orgs.listTeams({ orgId: org.id })).teams.map((t) => t.name)).not.toContain('crowded');
    // As many as a team may hold is fine (and the team goes again, for the tests after this one).
    const full = await newTeam(org.id, 'full', many.slice(1));
    expect(authz.teamRoles.get(full.id)).toHaveLength(MAX_ROLES_PER_TEAM);
    await orgs.deleteTeam({ teamId: full.id });
    for (const id of many) authz.roles.delete(id);
  });

  it('gives a team a role until a time and answers the end; refuses a past end or one for a role not assigned', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    authz.roles.set(5, org.id);
    authz.roles.set(7, org.id);
    const end = new Date(Date.now() + 3_600_000).toISOString();
    await settled();
    const [writes, calls] = [authz.state.writes, authz.state.calls.length];
    await expect(newTeam(org.id, 'late', [5], { 5: '2001-01-01T00:00:00Z' })).rejects.toMatchObject({
      kind: 'input',
      message: 'the end of role 5 has passed: 2001-01-01T00:00:00Z',
    });
    await expect(newTeam(org.id, 'late', [5], { 7: end })).rejects.toMatchObject({
      kind: 'input',
      message: "role 7 has an end but is not among the team's roles",
    });
    await expect(newTeam(org.id, 'late', [5], { 5: 'tomorrow' })).rejects.toMatchObject({ kind: 'input' });
    expect([authz.state.writes, authz.state.calls.length]).toEqual([writes, calls]);

    const temps = await newTeam(org.id, 'temps', [5, 7], { 7: end });
    expect(temps).toMatchObject({ roleIds: [5, 7], roleUntil: { 7: end } });
    expect(authz.teamRolesUntil.get(temps.id)).toEqual({ 7: end });
    // Sending the roles again without ends makes them permanent.
    const edited = await orgs.editTeam({ teamId: temps.id, name: 'temps', roleIds: { roleIds: [5, 7], until: {} } });
    expect(edited).toMatchObject({ roleIds: [5, 7], roleUntil: {} });
    expect(authz.teamRolesUntil.has(temps.id)).toBe(false);
    await orgs.deleteTeam({ teamId: temps.id });
  });

  it('undoes a team creation whose tuples or roles are refused', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    // 99 is acme's here: authz refuses it all the same (a role deleted meanwhile), after the team's rows committed.
    authz.roles.set(99, org.id);
    await expect(whileAuthzFails(() => newTeam(org.id, 'devs'))).rejects.toMatchObject({ kind: 'unavailable' });
    authz.state.refuseRoles = true;
    try {
      await expect(newTeam(org.id, 'devs', [99])).rejects.toMatchObject({
        kind: 'input',
        message: 'role 99 belongs to another organization',
      });
    } finally {
      authz.state.refuseRoles = false;
    }
    expect((await orgs.listTeams({ orgId: org.id })).teams.map((t) => t.name)).toEqual(['Owners']);
    expect(
      [...authz.tuples.keys()].filter((k) => k.includes('organization team:') && k.startsWith(`organization:${org.id} `)),
    ).toHaveLength(1);
    const devs = await newTeam(org.id, 'devs', [7, 5]);
    expect(devs.roleIds).toEqual([5, 7]);
    expect(has(`team:${devs.id}#member`, 'member', `organization:${org.id}`)).toBe(true);
  });

  it('undoes adding and removing team members when the tuple write fails', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const devs = (await orgs.listTeams({ orgId: org.id })).teams.find((t) => t.name === 'devs')!;
    await expect(
      whileAuthzFails(() => orgs.addTeamMember({ teamId: devs.id, userId: users.bob, username: '', conflictIfMember: true })),
    ).rejects.toMatchObject({ kind: 'unavailable' });
    expect(await memberLogins(devs.id)).toEqual([]);
    expect(await orgMembers(org.id)).toEqual(['alice']);

    expect(await orgs.addTeamMember({ teamId: devs.id, userId: 0, username: 'bob', conflictIfMember: true })).toEqual({ added: true });
    expect(has(`user:${users.bob}`, 'member', `team:${devs.id}`)).toBe(true);
    await expect(orgs.addTeamMember({ teamId: devs.id, userId: users.bob, username: '', conflictIfMember: true })).rejects.toMatchObject({
      kind: 'conflict',
    });
    expect(await orgs.addTeamMember({ teamId: devs.id, userId: users.bob, username: '', conflictIfMember: false })).toEqual({
      added: false,
    });

    await orgs.setMemberVisibility({ orgId: org.id, userId: users.bob, public: true });
    await expect(whileAuthzFails(() => orgs.removeTeamMember({ teamId: devs.id, userId: users.bob, username: '' }))).rejects.toMatchObject({
      kind: 'unavailable',
    });
    expect(await memberLogins(devs.id)).toEqual(['bob']);
    const back = await orgs.getMembership({ orgId: org.id, viewerId: 0, username: 'bob' });
    expect(back).toMatchObject({ member: true, public: true });

    await expect(whileAuthzFails(() => orgs.removeMember({ orgId: org.id, userId: users.bob, username: '' }))).rejects.toMatchObject({
      kind: 'unavailable',
    });
    expect(await orgMembers(org.id)).toEqual(['alice', 'bob']);
    expect(has(`user:${users.bob}`, 'member', `team:${devs.id}`)).toBe(true);
  });

  it('undoes a claim whose tuples cannot be written, then moves ownership to the claimer', async () => {
    const claims = createClient(orgClaimsV1.OrgClaimsServiceService, app.address, { name: 'orgs-teams' });
    try {
      const org = await newOrg('standalone');
      const owners = await ownerTeam(org.id);
      const ops = await newTeam(org.id, 'ops');
      // root is an owner who stays a member through another team; alice is only an owner.
      for (const teamId of [owners.id, ops.id])
        await orgs.addTeamMember({ teamId, userId: users.root, username: '', conflictIfMember: true });
      const { claimId } = await claims.createClaim({ orgId: org.id, backoffSeconds: 0, ifAbsent: false });

      await expect(whileAuthzFails(() => claims.claimOrg({ claimId, userId: users.bob }))).rejects.toMatchObject({ kind: 'unavailable' });
      expect(await memberLogins(owners.id)).toEqual(['alice', 'root']);
      expect(await orgMembers(org.id)).toEqual(['alice', 'root']);
      expect(has(`user:${users.alice}`, 'member', `team:${owners.id}`)).toBe(true);
      expect(has(`user:${users.bob}`, 'member', `team:${owners.id}`)).toBe(false);

      expect(await claims.claimOrg({ claimId, userId: users.bob })).toEqual({ orgId: org.id, orgName: 'standalone' });
      expect(await memberLogins(owners.id)).toEqual(['bob']);
      expect(await orgMembers(org.id)).toEqual(['bob', 'root']);
      expect(has(`user:${users.bob}`, 'member', `team:${owners.id}`)).toBe(true);
      expect(has(`user:${users.alice}`, 'member', `team:${owners.id}`)).toBe(false);
      expect(has(`user:${users.root}`, 'member', `team:${owners.id}`)).toBe(false);
      await expect(claims.claimOrg({ claimId, userId: users.alice })).rejects.toMatchObject({ kind: 'conflict' });
    } finally {
      claims.close();
    }
  });

  it('answers the claimable check of one claim: 429 with Retry-After during its backoff, 200 once flagged, 409 claimed, 404 unknown', async () => {
    const claims = createClient(orgClaimsV1.OrgClaimsServiceService, app.address, { name: 'orgs-teams' });
    try {
      const org = await newOrg('bought');
      const { claimId } = await claims.createClaim({ orgId: org.id, backoffSeconds: 600, ifAbsent: false });
      const early = await claims.checkClaimable({ claimId }).catch((e) => e);
      expect(early).toMatchObject({ kind: 'too-many-requests' });
      expect(Number(early.headers['retry-after'])).toBeGreaterThan(590);
      expect(Number(early.headers['retry-after'])).toBeLessThanOrEqual(600);

      // A retried binding gets the same claim back; without if_absent a second claim is a conflict.
      expect(await claims.createClaim({ orgId: org.id, backoffSeconds: 600, ifAbsent: true })).toEqual({ claimId, orgId: org.id });
      await expect(claims.createClaim({ orgId: org.id, backoffSeconds: 0, ifAbsent: false })).rejects.toMatchObject({ kind: 'conflict' });

      expect(await claims.markClaimable({ claimId })).toEqual({ isClaimable: true, claimId });
      expect(await claims.checkClaimable({ claimId })).toEqual({ isClaimable: true, claimId });
      await claims.claimOrg({ claimId, userId: users.bob });
      await expect(claims.checkClaimable({ claimId })).rejects.toMatchObject({ kind: 'conflict' });
      for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        await expect(claims.checkClaimable({ claimId: unknown })).rejects.toMatchObject({ kind: 'not-found' });
        await expect(claims.markClaimable({ claimId: unknown })).rejects.toMatchObject({ kind: 'not-found' });
      }
    } finally {
      claims.close();
    }
  });

  it('adds a user once when the same member is added twice at the same moment', async () => {
    const org = await newOrg('racers');
    // Several teams, so the two requests interleave inside their transactions at least once.
    for (const name of ['one', 'two', 'three', 'four', 'five']) {
      const team = await newTeam(org.id, name);
      const add = () => orgs.addTeamMember({ teamId: team.id, userId: 0, username: 'bob', conflictIfMember: false });
      const results = await Promise.all([add(), add()]);
      expect(results.map((r) => r.added).sort()).toEqual([false, true]);
      expect(await memberLogins(team.id)).toEqual(['bob']);
      expect(has(`user:${users.bob}`, 'member', `team:${team.id}`)).toBe(true);
    }
    expect(await orgMembers(org.id)).toEqual(['alice', 'bob']);
  });

  it('refuses to remove the last owner and the owner team, whatever the route', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const owners = await ownerTeam(org.id);
    await expect(orgs.removeTeamMember({ teamId: owners.id, userId: users.alice, username: '' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.removeMember({ orgId: org.id, userId: users.alice, username: '' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.deleteTeam({ teamId: owners.id })).rejects.toMatchObject({ kind: 'input' });
    await expect(
      orgs.editTeam({ teamId: owners.id, name: 'Owners', permission: 'admin', description: undefined, type: undefined }),
    ).rejects.toMatchObject({ kind: 'input' });
    expect(has(`user:${users.alice}`, 'member', `team:${owners.id}`)).toBe(true);
  });

  it('undoes a team edit whose roles are refused', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const devs = (await orgs.listTeams({ orgId: org.id })).teams.find((t) => t.name === 'devs')!;
    authz.state.refuseRoles = true;
    try {
      await expect(
        orgs.editTeam({ teamId: devs.id, name: 'developers', description: 'changed', roleIds: { roleIds: [99], until: {} } }),
      ).rejects.toMatchObject({ kind: 'input' });
    } finally {
      authz.state.refuseRoles = false;
    }
    expect(await orgs.getTeam({ teamId: devs.id, orgId: 0, withRoles: true })).toMatchObject({
      name: 'devs',
      description: '',
      roleIds: [5, 7],
    });
  });

  it('puts a deleted team back, members and roles included, when its tuples cannot be deleted', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const devs = (await orgs.listTeams({ orgId: org.id })).teams.find((t) => t.name === 'devs')!;
    await expect(whileAuthzFails(() => orgs.deleteTeam({ teamId: devs.id }))).rejects.toMatchObject({ kind: 'unavailable' });
    expect(await orgs.getTeam({ teamId: devs.id, orgId: org.id, withRoles: true })).toMatchObject({ name: 'devs', roleIds: [5, 7] });
    expect(await memberLogins(devs.id)).toEqual(['bob']);
    expect(await orgs.getMembership({ orgId: org.id, viewerId: 0, username: 'bob' })).toMatchObject({ member: true, public: true });

    await orgs.deleteTeam({ teamId: devs.id });
    expect(authz.state.calls.slice(-1)).toEqual([`assign ${devs.id} []`]);
    expect([...authz.tuples.keys()].filter((k) => k.includes(`team:${devs.id}`))).toEqual([]);
    expect(await orgMembers(org.id)).toEqual(['alice']);
  });

  it('deletes an organization while authz is down, and removes every tuple of it once authz is back', async () => {
    const org = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    await newTeam(org.id, 'ops');
    await expect(orgs.deleteOrg({ orgId: org.id, requesterId: users.bob })).rejects.toMatchObject({ kind: 'not-allowed' });
    // A committed deletion stands: the tuples it leaves behind are the outbox relay's to remove.
    await whileAuthzFails(() => orgs.deleteOrg({ orgId: org.id, requesterId: users.alice }));
    await expect(orgs.getOrg({ name: 'acme', viewerId: users.root })).rejects.toMatchObject({ kind: 'not-found' });
    expect([...authz.tuples.keys()].filter((k) => k.includes(`organization:${org.id}`))).not.toEqual([]);
    await eventually(async () => ![...authz.tuples.keys()].some((k) => k.includes(`organization:${org.id}`)));
    // Its custom roles go with it, in one call to authz.
    await eventually(async () => authz.state.calls.includes(`delete roles of ${org.id}`));
    // Concurrent deletes: one wins, the others find nothing.
    const doomed = await newOrg('doomed');
    const results = await Promise.allSettled([1, 2, 3].map(() => orgs.deleteOrg({ orgId: doomed.id, requesterId: users.alice })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.kind)).toEqual([
      'not-found',
      'not-found',
    ]);
  });

  it('serves organizations from its cache until another replica’s change notice evicts them', async () => {
    const org = await newOrg('replicated');
    const read = async () => (await orgs.getOrg({ name: 'replicated', viewerId: users.bob })).description;
    expect(await read()).toBe('');
    // Another replica changes the row (here: straight in the database, which this replica does not see)...
    await app.running.ctx.db!.table('accounts').where({ id: org.id }).update({ description: 'elsewhere' });
    expect(await read()).toBe('');
    // ...and tells the others, as orgChanged does.
    await app.running.ctx.bus!.notify(ORGS_CHANGED, { orgIds: [org.id] } satisfies OrgsChanged);
    await eventually(async () => (await read()) === 'elsewhere', 5_000);
  });
});
