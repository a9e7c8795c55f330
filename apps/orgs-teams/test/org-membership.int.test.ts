import { orgsTeamsOrgsV1 } from '@platform/proto';
import type { PromiseClient } from '@platform/service-kit';
import type { AuthzStub } from './authz-stub';
import { orgRequest, startOrgsTeams, type OrgsTeamsUnderTest } from './orgs-teams-under-test';

// Organizations' own rules (docs/organizations-and-teams.md): `orgType` and `visibility` as one setting, names unique
// among accounts in any case, who sees a public, limited or private organization and its private members, the last
// owner kept (removing, deleting), site admins kept in the administrative organization, a deleted organization's
// name free again with nothing of the old one. The rows over HTTP: apps/gateway/test/orgs.test.ts.

describe('organizations: visibility, members and owners', () => {
  let authz: AuthzStub;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  const ids: Record<string, number> = {};
  let started: OrgsTeamsUnderTest;

  const create = (username: string, creator: string, fields: { orgType?: string; visibility?: string } = {}) =>
    orgs.createOrg(orgRequest(ids[creator], username, { orgType: fields.orgType ?? '', visibility: fields.visibility ?? '' }));
  const sees = async (name: string, viewer: string | undefined) =>
    orgs.getOrg({ name, viewerId: viewer ? ids[viewer] : 0 }).then(
      () => true,
      (err) => {
        if (err.kind !== 'not-found') throw err;
        return false;
      },
    );
  const members = async (orgId: number, viewer: string | undefined, publicOnly = false) =>
    (await orgs.listMembers({ orgId, viewerId: viewer ? ids[viewer] : 0, publicOnly })).members.map((u) => u.login);
  const ownerTeam = async (orgId: number) => (await orgs.listTeams({ orgId })).teams[0];
  const add = (teamId: number, login: string) => orgs.addTeamMember({ teamId, userId: ids[login], username: '', conflictIfMember: false });

  beforeAll(async () => {
    started = await startOrgsTeams({
      users: ['alice', 'bob', 'carol', 'dave'],
      env: {
        PLATFORM_ADMIN_ORG: 'platform-admins',
      },
    });
    ({ authz, orgs } = started);
    Object.assign(ids, started.ids);
  });
  afterAll(() => started?.stop());

  it('takes orgType public, limited, private as 0, 1, 2, visibility as the same setting; refuses disagreeing or unknown ones', async () => {
    expect(await create('acme', 'alice', { orgType: 'public' })).toMatchObject({ orgType: 0, visibility: 'public' });
    expect(await create('acme-limited', 'alice', { orgType: 'limited' })).toMatchObject({ orgType: 1, visibility: 'limited' });
    expect(await create('acme-private', 'alice', { visibility: 'private' })).toMatchObject({ orgType: 2, visibility: 'private' });
    expect(await create('bobcorp', 'bob', { orgType: 'private', visibility: 'private' })).toMatchObject({ orgType: 2 });
    expect(await create('carolcorp', 'carol')).toMatchObject({ orgType: 0, visibility: 'public' });
    await expect(create('weird', 'bob', { orgType: 'secret' })).rejects.toMatchObject({
      kind: 'input',
      message: 'orgType must be one of public, limited, private',
    });
    await expect(create('weird', 'bob', { orgType: 'public', visibility: 'private' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.getOrg({ name: 'weird', viewerId: ids.root })).rejects.toMatchObject({ kind: 'not-found' });
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    await expect(orgs.editOrg({ orgId: acme.id, orgType: 'hidden' })).rejects.toMatchObject({ kind: 'input' });
  });

  it('refuses a name any account has, in any case', async () => {
    await expect(create('ACME', 'bob')).rejects.toMatchObject({ kind: 'conflict', message: 'the name ACME is already taken' });
    await expect(create('carol', 'bob')).rejects.toMatchObject({ kind: 'conflict' });
    await expect(create('no spaces', 'bob')).rejects.toMatchObject({ kind: 'validation' });
    await expect(create('platform-admins', 'root')).rejects.toMatchObject({ kind: 'conflict' });
  });

  it('shows public organizations to anyone, limited ones to signed-in users, private ones to members and site admins', async () => {
    expect([await sees('acme', undefined), await sees('ACME', 'carol')]).toEqual([true, true]);
    expect([await sees('acme-limited', undefined), await sees('acme-limited', 'carol')]).toEqual([false, true]);
    expect([await sees('acme-private', undefined), await sees('acme-private', 'carol')]).toEqual([false, false]);
    expect([await sees('acme-private', 'alice'), await sees('acme-private', 'root')]).toEqual([true, true]);
    // Made private, it is hidden from everyone outside it; public again, from nobody.
    const limited = await orgs.getOrg({ name: 'acme-limited', viewerId: ids.alice });
    expect(await orgs.editOrg({ orgId: limited.id, orgType: 'private' })).toMatchObject({ orgType: 2, visibility: 'private' });
    expect(await sees('acme-limited', 'carol')).toBe(false);
    expect((await orgs.editOrg({ orgId: limited.id, visibility: 'public' })).orgType).toBe(0);
    expect(await sees('acme-limited', undefined)).toBe(true);
    // The administrative organization is private.
    expect(await orgs.getOrg({ name: 'platform-admins', viewerId: ids.root })).toMatchObject({ visibility: 'private' });
    expect(await sees('platform-admins', 'carol')).toBe(false);
  });

  it('lists every member to members and site admins, public members only to others', async () => {
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const devs = await orgs.createTeam({ orgId: acme.id, name: 'devs', description: '', permission: '', type: 'general' });
    await add(devs.id, 'bob');
    for (const viewer of ['alice', 'bob', 'root']) expect(await members(acme.id, viewer)).toEqual(['alice', 'bob']);
    expect(await members(acme.id, 'carol')).toEqual([]);
    expect(await members(acme.id, undefined)).toEqual([]);
    expect(await orgs.getMembership({ orgId: acme.id, viewerId: ids.carol, username: 'bob' })).toEqual({
      viewerSeesPrivate: false,
      member: true,
      public: false,
    });
    expect((await orgs.getMembership({ orgId: acme.id, viewerId: ids.root, username: 'bob' })).viewerSeesPrivate).toBe(true);
    expect((await orgs.getMembership({ orgId: acme.id, viewerId: ids.alice, username: 'carol' })).member).toBe(false);

    await orgs.setMemberVisibility({ orgId: acme.id, userId: ids.bob, public: true });
    expect(await members(acme.id, undefined)).toEqual(['bob']);
    expect(await members(acme.id, 'alice', true)).toEqual(['bob']);
    expect(await orgs.getMembership({ orgId: acme.id, viewerId: 0, username: 'bob' })).toMatchObject({ public: true });
    await orgs.setMemberVisibility({ orgId: acme.id, userId: ids.bob, public: false });
    expect(await members(acme.id, undefined)).toEqual([]);
    await expect(orgs.setMemberVisibility({ orgId: acme.id, userId: ids.carol, public: true })).rejects.toMatchObject({
      kind: 'not-found',
    });
  });

  it('keeps the last owner: removing or leaving is refused while no other owner remains', async () => {
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    await expect(orgs.removeMember({ orgId: acme.id, userId: ids.alice, username: '' })).rejects.toMatchObject({
      kind: 'input',
      message: 'alice is the last owner of acme; add another owner before removing them',
    });
    await expect(orgs.removeMember({ orgId: acme.id, userId: 0, username: 'alice' })).rejects.toMatchObject({ kind: 'input' });
    await expect(orgs.removeMember({ orgId: acme.id, userId: ids.carol, username: '' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(orgs.removeMember({ orgId: acme.id, userId: 0, username: 'nobody' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('takes a removed member out of every team of the organization', async () => {
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const owners = await ownerTeam(acme.id);
    const devs = (await orgs.listTeams({ orgId: acme.id })).teams.find((t) => t.name === 'devs')!;
    await add(owners.id, 'dave');
    await add(devs.id, 'dave');
    await orgs.removeMember({ orgId: acme.id, userId: 0, username: 'dave' });
    expect(await members(acme.id, 'alice')).toEqual(['alice', 'bob']);
    expect((await orgs.listTeamMembers({ teamId: devs.id })).members.map((u) => u.login)).toEqual(['bob']);
    expect(authz.tuples.has(`user:${ids.dave} member team:${owners.id}`)).toBe(false);
    await expect(orgs.removeMember({ orgId: acme.id, userId: 0, username: 'dave' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('never takes a site admin out of the administrative organization; elsewhere a site admin goes like anyone', async () => {
    const admins = await orgs.getOrg({ name: 'platform-admins', viewerId: ids.root });
    await add((await ownerTeam(admins.id)).id, 'alice');
    await expect(orgs.removeMember({ orgId: admins.id, userId: 0, username: 'root' })).rejects.toMatchObject({
      kind: 'not-allowed',
      message: 'site admins cannot be removed from the administrative organization platform-admins',
    });
    expect(await members(admins.id, 'root')).toEqual(['alice', 'root']);
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    await add((await ownerTeam(acme.id)).id, 'root');
    await orgs.removeMember({ orgId: acme.id, userId: 0, username: 'root' });
    expect(await members(acme.id, 'alice')).toEqual(['alice', 'bob']);
  });

  it('lets an owner delete only as the last owner, a site admin always; the name is then free, with nothing of the old one', async () => {
    const acme = await orgs.getOrg({ name: 'acme', viewerId: 0 });
    const owners = await ownerTeam(acme.id);
    await add(owners.id, 'dave');
    await expect(orgs.deleteOrg({ orgId: acme.id, requesterId: ids.alice })).rejects.toMatchObject({
      kind: 'not-allowed',
      message: expect.stringContaining('only the last owner may delete'),
    });
    await orgs.removeMember({ orgId: acme.id, userId: 0, username: 'dave' });
    await orgs.deleteOrg({ orgId: acme.id, requesterId: ids.alice });
    expect(await sees('acme', 'alice')).toBe(false);

    const again = await create('acme', 'carol');
    expect(again.id).not.toBe(acme.id);
    expect(await members(again.id, 'carol')).toEqual(['carol']);
    expect((await orgs.listTeams({ orgId: again.id })).teams.map((t) => t.name)).toEqual(['Owners']);

    const priv = await orgs.getOrg({ name: 'acme-private', viewerId: ids.alice });
    await add((await ownerTeam(priv.id)).id, 'dave');
    await orgs.deleteOrg({ orgId: priv.id, requesterId: ids.root });
    expect(await sees('acme-private', 'alice')).toBe(false);
    await expect(orgs.deleteOrg({ orgId: priv.id, requesterId: ids.root })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
