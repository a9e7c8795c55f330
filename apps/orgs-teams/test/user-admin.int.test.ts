import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import type { PromiseClient } from '@platform/service-kit';
import type { AuthzStub } from './authz-stub';
import { orgRequest, startOrgsTeams, type OrgsTeamsUnderTest } from './orgs-teams-under-test';

// A site admin's edits and deletions of users, and a user's own settings and password (docs/authentication.md):
// deactivating and prohibiting refuse the account's credentials, no admin takes away their own rights, deleting
// the last owner of an organization takes `purge` (which deletes the organization too) while a member's memberships
// simply go, a wrong old password is counted toward the lockout a site admin can lift. The rows over HTTP:
// apps/gateway/test/identity.test.ts; refused on the gateway's very next request: deploy/local/test/org-lists.int.test.ts.

describe('user administration and one’s own account', () => {
  let authz: AuthzStub;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  const ids: Record<string, number> = {};
  let started: OrgsTeamsUnderTest;

  const newOrg = (username: string, creatorId: number) => orgs.createOrg(orgRequest(creatorId, username));
  const basic = (username: string, password: string) => identity.authenticateBasic({ username, password });

  beforeAll(async () => {
    started = await startOrgsTeams({
      users: ['ann', 'ben', 'cat', 'dan', 'eve', 'gus'],
      env: {
        // A low account limit, so a lockout is reached in a few tries.
        LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      },
    });
    ({ authz, identity, orgs } = started);
    Object.assign(ids, started.ids);
  });
  afterAll(() => started?.stop());

  it('refuses a deactivated user’s token and password (401), and a prohibited one’s (403), until they are given back', async () => {
    const { sha1 } = await identity.createToken({ userId: ids.ann, name: 'cli', scope: '', scopeAccountId: 0, accessScopes: [] });
    await identity.editUser({ login: 'ann', active: false, editorId: ids.root });
    await expect(identity.authenticate({ token: sha1 })).rejects.toMatchObject({ kind: 'unauthenticated', message: 'user is not active' });
    await expect(basic('ann', 'ann-password')).rejects.toMatchObject({ kind: 'unauthenticated' });
    await identity.editUser({ login: 'ann', active: true, prohibitLogin: true, editorId: ids.root });
    await expect(identity.authenticate({ token: sha1 })).rejects.toMatchObject({
      kind: 'not-allowed',
      message: 'user is prohibited from logging in',
    });
    await expect(basic('ann', 'ann-password')).rejects.toMatchObject({
      kind: 'not-allowed',
      message: 'user is prohibited from logging in',
    });
    // A wrong password is still just wrong.
    await expect(basic('ann', 'wrong-password')).rejects.toMatchObject({ kind: 'unauthenticated' });
    await identity.editUser({ login: 'ann', prohibitLogin: false, editorId: ids.root });
    expect((await identity.authenticate({ token: sha1 })).user?.login).toBe('ann');
  });

  it('makes and demotes site admins, writing and deleting the site admin relation; nobody demotes themselves', async () => {
    expect((await identity.editUser({ login: 'ben', admin: true, editorId: ids.root })).isAdmin).toBe(true);
    expect(authz.tuples.has(`user:${ids.ben} admin site:platform`)).toBe(true);
    expect((await identity.editUser({ login: 'ben', admin: false, editorId: ids.root })).isAdmin).toBe(false);
    expect(authz.tuples.has(`user:${ids.ben} admin site:platform`)).toBe(false);
    // Even with another site admin left, one's own rights are another admin's to take.
    await identity.editUser({ login: 'ben', admin: true, editorId: ids.root });
    await expect(identity.editUser({ login: 'root', admin: false, editorId: ids.root })).rejects.toMatchObject({
      kind: 'validation',
      message: 'you cannot take away your own site admin rights or sign-in; ask another site admin',
    });
    expect((await identity.getUser({ id: ids.root, login: '' })).isAdmin).toBe(true);
    await identity.editUser({ login: 'ben', admin: false, editorId: ids.root });
  });

  it('refuses to delete the last owner of an organization unless purged, which deletes the organization too', async () => {
    const catCo = await newOrg('cat-co', ids.cat);
    await expect(identity.deleteUser({ login: 'cat', purge: false, deleterId: ids.root })).rejects.toMatchObject({
      kind: 'validation',
      message: expect.stringContaining('is the last owner of cat-co'),
    });
    expect((await identity.getUser({ id: ids.cat, login: '' })).login).toBe('cat');
    expect(await identity.deleteUser({ login: 'cat', purge: true, deleterId: ids.root })).toEqual({ deletedOrgIds: [catCo.id] });
    await expect(identity.getUser({ id: 0, login: 'cat' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(orgs.getOrg({ name: 'cat-co', viewerId: ids.root })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(identity.deleteUser({ login: 'cat', purge: false, deleterId: ids.root })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('deletes a member with its memberships; the organization keeps its other owner', async () => {
    const danCo = await newOrg('dan-co', ids.dan);
    const owners = (await orgs.listTeams({ orgId: danCo.id })).teams[0];
    await orgs.addTeamMember({ teamId: owners.id, userId: ids.eve, username: '', conflictIfMember: false });
    expect(await identity.deleteUser({ login: 'dan', purge: false, deleterId: ids.root })).toEqual({ deletedOrgIds: [] });
    const members = await orgs.listMembers({ orgId: danCo.id, viewerId: ids.root, publicOnly: false });
    expect(members.members.map((u) => u.login)).toEqual(['eve']);
    expect(authz.tuples.has(`user:${ids.dan} member team:${owners.id}`)).toBe(false);
  });

  it('keeps allow_create_organization as the site admin sets it', async () => {
    expect((await identity.editUser({ login: 'gus', allowCreateOrganization: false, editorId: ids.root })).allowCreateOrganization).toBe(
      false,
    );
    expect((await identity.getUser({ id: ids.gus, login: '' })).allowCreateOrganization).toBe(false);
    expect((await identity.editUser({ login: 'gus', allowCreateOrganization: true, editorId: ids.root })).allowCreateOrganization).toBe(
      true,
    );
  });

  it('locks an account after its limit of wrong passwords, shows the lockout to site admins, and lets one lift it', async () => {
    for (let i = 0; i < 3; i++) await expect(basic('gus', 'not-the-password')).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(basic('gus', 'gus-password')).rejects.toMatchObject({ kind: 'too-many-requests' });
    const [listed] = (
      await identity.searchUsers({ q: 'gus', uid: 0, loginName: '', page: 1, limit: 10, withLockout: true, matchEmail: false })
    ).users;
    expect(listed.signInLockedUntilUnix * 1000).toBeGreaterThan(Date.now());
    await identity.clearSignInLockout({ login: 'gus' });
    expect((await basic('gus', 'gus-password')).user?.login).toBe('gus');
    expect(
      (await identity.searchUsers({ q: 'gus', uid: 0, loginName: '', page: 1, limit: 10, withLockout: true, matchEmail: false })).users[0]
        .signInLockedUntilUnix,
    ).toBe(0);
    await expect(identity.clearSignInLockout({ login: 'nobody' })).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('changes the password with the old one: a wrong old one is refused and counted, a short new one refused', async () => {
    const change = (oldPassword: string, newPassword: string) =>
      identity.changePassword({ userId: ids.eve, oldPassword, newPassword, keepSessionId: 0 });
    await expect(change('nope-nope', 'eve-new-password')).rejects.toMatchObject({
      kind: 'not-allowed',
      message: 'the old password is wrong',
    });
    await expect(change('eve-password', 'short')).rejects.toMatchObject({ kind: 'validation' });
    // Two more wrong ones reach the limit of three: even the right one is refused now.
    await expect(change('nope-nope', 'eve-new-password')).rejects.toMatchObject({ kind: 'not-allowed' });
    await expect(change('nope-nope', 'eve-new-password')).rejects.toMatchObject({ kind: 'not-allowed' });
    await expect(change('eve-password', 'eve-new-password')).rejects.toMatchObject({ kind: 'too-many-requests' });
    await identity.clearSignInLockout({ login: 'eve' });
    await change('eve-password', 'eve-new-password');
    await expect(basic('eve', 'eve-password')).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await basic('eve', 'eve-new-password')).user?.login).toBe('eve');
  });

  it('edits one’s own settings, refusing an unknown diff view style', async () => {
    const edited = await identity.editUserSettings({
      userId: ids.eve,
      fullName: 'Eve E.',
      theme: 'dark',
      diffViewStyle: 'split',
      hideEmail: true,
    });
    expect(edited).toMatchObject({ fullName: 'Eve E.', theme: 'dark', diffViewStyle: 'split', hideEmail: true, hideActivity: false });
    expect(await identity.getUser({ id: ids.eve, login: '' })).toMatchObject({ fullName: 'Eve E.', diffViewStyle: 'split' });
    await expect(identity.editUserSettings({ userId: ids.eve, diffViewStyle: 'sideways' })).rejects.toMatchObject({ kind: 'validation' });
  });
});
