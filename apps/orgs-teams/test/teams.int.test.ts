import { orgsTeamsOrgsV1 } from '@platform/proto';
import type { PromiseClient } from '@platform/service-kit';
import type { AuthzStub } from './authz-stub';
import { orgRequest, startOrgsTeams, type OrgsTeamsUnderTest } from './orgs-teams-under-test';

// Teams' own rules (docs/organizations-and-teams.md): names unique in their organization in any case, the accepted
// types and permissions, units with the team's permission as their access, a team found only under its own
// organization, members added by id or name (never an organization), once, and leaving the organization with their
// last team; the owner team keeps its name and permission and is never deleted. The rows over HTTP:
// apps/gateway/test/teams.test.ts; the roles' rules: orgs.int.test.ts.

describe('teams: names, types, members and the owner team', () => {
  let authz: AuthzStub;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  const ids: Record<string, number> = {};
  let started: OrgsTeamsUnderTest;
  let globex: orgsTeamsOrgsV1.Organization;
  let initech: orgsTeamsOrgsV1.Organization;

  const newTeam = (name: string, fields: { type?: string; permission?: string; units?: string[] } = {}, orgId = globex.id) =>
    orgs.createTeam({
      orgId,
      name,
      description: '',
      permission: fields.permission ?? '',
      type: fields.type ?? 'general',
      units: fields.units && { units: fields.units },
    });
  const teamOf = async (name: string) => (await orgs.listTeams({ orgId: globex.id })).teams.find((t) => t.name === name)!;
  const logins = async (teamId: number) => (await orgs.listTeamMembers({ teamId })).members.map((u) => u.login);
  const isMember = async (login: string) => (await orgs.getMembership({ orgId: globex.id, viewerId: ids.alice, username: login })).member;

  beforeAll(async () => {
    started = await startOrgsTeams({ users: ['alice', 'bob', 'carol', 'erin'] });
    ({ authz, orgs } = started);
    Object.assign(ids, started.ids);
    const org = (username: string, creator: string) => orgs.createOrg(orgRequest(ids[creator], username));
    globex = await org('globex', 'alice');
    initech = await org('initech', 'erin');
  });
  afterAll(() => started?.stop());

  it('makes teams of the accepted types and permissions, listed after the owner team; units take the team’s permission, read by default', async () => {
    expect(await newTeam('devs', { type: 'kubernetes', permission: 'write' })).toMatchObject({ type: 'kubernetes', permission: 'write' });
    const ops = await newTeam('ops', { units: ['cluster.view'] });
    expect(ops).toMatchObject({ permission: 'read', units: ['cluster.view'], hasUnits: true });
    expect((await orgs.listTeams({ orgId: globex.id })).teams.map((t) => [t.name, t.permission])).toEqual([
      ['Owners', 'owner'],
      ['devs', 'write'],
      ['ops', 'read'],
    ]);
  });

  it('refuses a bad type, name or permission (400) and a name the organization has in any case (409)', async () => {
    await expect(newTeam('qa', { type: 'database' })).rejects.toMatchObject({
      kind: 'input',
      message: 'type must be one of kubernetes, general',
    });
    await expect(newTeam('qa', { type: '' })).rejects.toMatchObject({ kind: 'input' });
    await expect(newTeam('q a!')).rejects.toMatchObject({ kind: 'input' });
    await expect(newTeam('qa', { permission: 'owner' })).rejects.toMatchObject({ kind: 'input' });
    await expect(newTeam('DEVS')).rejects.toMatchObject({ kind: 'conflict' });
    await expect(newTeam('owners')).rejects.toMatchObject({ kind: 'conflict' });
    // Another organization may have a team of the same name.
    expect((await newTeam('devs', {}, initech.id)).name).toBe('devs');
    expect((await orgs.listTeams({ orgId: globex.id })).teams).toHaveLength(3);
  });

  it('finds a team only under its own organization', async () => {
    const devs = await teamOf('devs');
    expect((await orgs.getTeam({ teamId: devs.id, orgId: globex.id, withRoles: false })).organization?.username).toBe('globex');
    await expect(orgs.getTeam({ teamId: devs.id, orgId: initech.id, withRoles: false })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(orgs.getTeam({ teamId: 987654, orgId: 0, withRoles: false })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('adds members by id or name, once when asked (409), never an organization (400) nor nobody (404)', async () => {
    const devs = await teamOf('devs');
    const add = (user: { userId?: number; username?: string }, conflictIfMember = true) =>
      orgs.addTeamMember({ teamId: devs.id, userId: user.userId ?? 0, username: user.username ?? '', conflictIfMember });
    await add({ username: 'bob' });
    await expect(add({ userId: ids.bob })).rejects.toMatchObject({ kind: 'conflict' });
    await add({ userId: ids.bob }, false);
    await add({ userId: ids.carol });
    expect(await logins(devs.id)).toEqual(['bob', 'carol']);
    await expect(add({ username: 'initech' })).rejects.toMatchObject({ kind: 'input', message: 'initech is an organization, not a user' });
    await expect(add({ userId: initech.id })).rejects.toMatchObject({ kind: 'input' });
    await expect(add({ username: 'nobody' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(add({ userId: 999999 })).rejects.toMatchObject({ kind: 'not-found' });
    expect(await orgs.getTeamMember({ teamId: devs.id, username: 'bob' })).toMatchObject({ id: ids.bob, login: 'bob' });
    await expect(orgs.getTeamMember({ teamId: devs.id, username: 'erin' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('takes a member out of a team (404 when not in it); leaving the last team leaves the organization', async () => {
    const [devs, ops] = [await teamOf('devs'), await teamOf('ops')];
    await orgs.addTeamMember({ teamId: ops.id, userId: ids.bob, username: '', conflictIfMember: false });
    await orgs.removeTeamMember({ teamId: ops.id, userId: ids.bob, username: '' });
    expect(await isMember('bob')).toBe(true);
    await expect(orgs.removeTeamMember({ teamId: ops.id, userId: ids.bob, username: '' })).rejects.toMatchObject({ kind: 'not-found' });
    await orgs.removeTeamMember({ teamId: devs.id, userId: 0, username: 'bob' });
    expect(await isMember('bob')).toBe(false);
    expect(authz.tuples.has(`user:${ids.bob} member team:${devs.id}`)).toBe(false);
  });

  it('keeps the owner team’s name and permission (400), and its last owner (400)', async () => {
    const owners = await teamOf('Owners');
    await expect(orgs.editTeam({ teamId: owners.id, name: 'Owners', permission: 'read' })).rejects.toMatchObject({
      kind: 'input',
      message: 'the permission of the owner team Owners cannot be changed',
    });
    await expect(orgs.editTeam({ teamId: owners.id, name: 'Admins' })).rejects.toMatchObject({ kind: 'input' });
    expect(await orgs.editTeam({ teamId: owners.id, name: 'Owners', description: 'The bosses' })).toMatchObject({
      permission: 'owner',
      description: 'The bosses',
    });
    await expect(orgs.removeTeamMember({ teamId: owners.id, userId: ids.alice, username: '' })).rejects.toMatchObject({
      kind: 'input',
      message: 'alice is the last owner of globex; add another owner before removing them',
    });
  });

  it('edits name, description, permission (custom too) and type; bad values 400, a taken name 409', async () => {
    const ops = await teamOf('ops');
    const edited = await orgs.editTeam({
      teamId: ops.id,
      name: 'operations',
      description: 'On call',
      permission: 'custom',
      type: 'kubernetes',
    });
    expect(edited).toMatchObject({ id: ops.id, name: 'operations', description: 'On call', permission: 'custom', type: 'kubernetes' });
    await expect(orgs.editTeam({ teamId: ops.id, name: 'operations', type: 'database' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.editTeam({ teamId: ops.id, name: 'bad name!' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.editTeam({ teamId: ops.id, name: 'operations', permission: 'owner' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.editTeam({ teamId: ops.id, name: 'devs' })).rejects.toMatchObject({ kind: 'conflict' });
    await expect(orgs.editTeam({ teamId: 987654, name: 'x' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('never deletes the owner team; a deleted team’s members left without a team leave the organization', async () => {
    const owners = await teamOf('Owners');
    await expect(orgs.deleteTeam({ teamId: owners.id })).rejects.toMatchObject({
      kind: 'input',
      message: 'the owner team Owners cannot be deleted',
    });
    const [devs, ops] = [await teamOf('devs'), await teamOf('operations')];
    await orgs.addTeamMember({ teamId: ops.id, userId: ids.bob, username: '', conflictIfMember: false });
    await orgs.addTeamMember({ teamId: devs.id, userId: ids.bob, username: '', conflictIfMember: false });
    await orgs.addTeamMember({ teamId: ops.id, userId: ids.carol, username: '', conflictIfMember: false });
    await orgs.removeTeamMember({ teamId: devs.id, userId: ids.carol, username: '' });
    await orgs.deleteTeam({ teamId: ops.id });
    await expect(orgs.getTeam({ teamId: ops.id, orgId: 0, withRoles: false })).rejects.toMatchObject({ kind: 'not-found' });
    // carol was only in ops: she is out; bob is still in devs.
    expect([await isMember('carol'), await isMember('bob')]).toEqual([false, true]);
    await expect(orgs.deleteTeam({ teamId: ops.id })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
