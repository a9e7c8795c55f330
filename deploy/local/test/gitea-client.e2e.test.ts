import { giteaApi, type Organization, type User } from 'gitea-js';
import { bootTestPlatform, type TestPlatform } from './harness';

// The organization and team routes driven by an unmodified Gitea API client (gitea-js, generated from Gitea's
// swagger): what a Gitea client sends must work here, and what it reads must be where it looks.

describe('organizations and teams through the gitea-js client', () => {
  let harness: TestPlatform;
  let alice: ReturnType<typeof giteaApi>;
  let bob: ReturnType<typeof giteaApi>;

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const login of ['alice', 'bob', 'carol', 'dave', 'erin']) await harness.signUp(login);
    const base = harness.platform.url.replace(/\/$/, '');
    alice = giteaApi(base, { token: harness.tokens.alice });
    bob = giteaApi(base, { token: harness.tokens.bob });
  }, 120_000);
  afterAll(() => harness?.stop());

  it('creates an organization with an email and reads it back under Gitea’s field names', async () => {
    const created = await alice.orgs.orgCreate({
      username: 'hooli',
      full_name: 'Hooli',
      email: 'info@hooli.example.com',
      visibility: 'public',
    });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({
      name: 'hooli',
      username: 'hooli',
      full_name: 'Hooli',
      email: 'info@hooli.example.com',
      visibility: 'public',
    });
    const edited = await alice.orgs.orgEdit('hooli', { email: 'hello@hooli.example.com' });
    expect(edited.data.email).toBe('hello@hooli.example.com');
    await alice.orgs.orgCreate({ username: 'hooli-private', visibility: 'private' });
  });

  it('lists organizations and the user’s organizations', async () => {
    const all = await bob.orgs.orgGetAll({ page: 1, limit: 10 });
    const names = (orgs: Organization[]) => orgs.map((o) => o.name);
    // The private one is not listed to a non-member.
    expect(names(all.data)).toEqual(['hooli']);
    expect(all.headers.get('x-total-count')).toBe('1');
    expect(names((await alice.user.orgListCurrentUserOrgs()).data)).toEqual(['hooli', 'hooli-private']);
    expect(names((await alice.users.orgListUserOrgs('alice')).data)).toEqual(['hooli', 'hooli-private']);
    expect(names((await bob.users.orgListUserOrgs('alice')).data)).toEqual([]);
  });

  it('creates a team without a type, searches teams and reads permissions', async () => {
    const team = await alice.orgs.orgCreateTeam('hooli', {
      name: 'devs',
      description: 'Writes the code',
      permission: 'write',
      includes_all_repositories: false,
      can_create_org_repo: false,
      units: ['repo.code'],
    });
    expect(team.status).toBe(201);
    expect(team.data).toMatchObject({ name: 'devs', permission: 'write', organization: expect.objectContaining({ name: 'hooli' }) });
    await alice.teams.orgAddTeamMember(team.data.id!, 'bob');

    const found = await alice.orgs.teamSearch('hooli', { q: 'code', include_desc: true });
    expect(found.data).toEqual({ ok: true, data: [expect.objectContaining({ id: team.data.id })] });
    expect((await alice.orgs.teamSearch('hooli', { q: 'code', include_desc: false })).data.data).toEqual([]);

    const mine = await bob.users.orgGetUserPermissions('bob', 'hooli');
    expect(mine.data).toEqual({ is_owner: false, is_admin: false, can_write: true, can_read: true, can_create_repository: false });
    expect((await alice.users.orgGetUserPermissions('alice', 'hooli')).data).toMatchObject({ is_owner: true, can_create_repository: true });
  });

  it('pages through members until the last page, as a Gitea client loops', async () => {
    const teams = await alice.orgs.orgListTeams('hooli', { page: 1, limit: 50 });
    const devs = teams.data.find((t) => t.name === 'devs')!;
    for (const login of ['carol', 'dave', 'erin']) await alice.teams.orgAddTeamMember(devs.id!, login);

    const seen: User[] = [];
    let total = 0;
    for (let page = 1; ; page++) {
      const res = await alice.orgs.orgListMembers('hooli', { page, limit: 2 });
      total = Number(res.headers.get('x-total-count'));
      seen.push(...res.data);
      if (!res.headers.get('link')?.includes('rel="next"')) break;
      expect(page).toBeLessThan(10);
    }
    expect(total).toBe(5);
    expect(seen.map((u) => u.login)).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);

    const teamMembers: User[] = [];
    for (let page = 1; page < 10; page++) {
      const res = await alice.teams.orgListTeamMembers(devs.id!, { page, limit: 3 });
      teamMembers.push(...res.data);
      if (res.data.length < 3) break;
    }
    expect(teamMembers.map((u) => u.login)).toEqual(['bob', 'carol', 'dave', 'erin']);
  });
});

describe('user administration and own settings through the gitea-js client', () => {
  let harness: TestPlatform;
  let root: ReturnType<typeof giteaApi>;
  let kim: ReturnType<typeof giteaApi>;

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const login of ['kim', 'lee', 'max']) await harness.signUp(login);
    const base = harness.platform.url.replace(/\/$/, '');
    root = giteaApi(base, { token: harness.tokens.root });
    kim = giteaApi(base, { token: harness.tokens.kim });
  }, 120_000);
  afterAll(() => harness?.stop());

  it('lists and searches users as a site admin, paged with X-Total-Count', async () => {
    const page = await root.admin.adminSearchUsers({ page: 1, limit: 2 });
    expect(page.data.map((u: User) => u.login)).toEqual(['root', 'kim']);
    expect(page.headers.get('x-total-count')).toBe('4');
    const byName = await root.admin.adminSearchUsers({ login_name: 'lee' });
    expect(byName.data).toEqual([
      expect.objectContaining({ login: 'lee', email: 'lee@example.com', login_name: '', source_id: 0, visibility: 'public', restricted: false }),
    ]);
    const orgs = await root.admin.adminGetAllOrgs({ page: 1, limit: 10 });
    expect(orgs.headers.get('x-total-count')).toBe(String(orgs.data.length));
  });

  it('searches users as anyone signed in, without others’ emails', async () => {
    const found = await kim.users.userSearch({ q: 'le', limit: 10 });
    expect(found.data.ok).toBe(true);
    expect(found.data.data!.map((u: User) => [u.login, u.email])).toEqual([['lee', '']]);
    expect((await kim.users.userGet('kim')).data.email).toBe('kim@example.com');
    expect((await kim.users.userSearch({ uid: harness.ids.max })).data.data!.map((u: User) => u.login)).toEqual(['max']);
    await expect(kim.users.userGet('nobody')).rejects.toMatchObject({ status: 404 });
  });

  it('edits and deletes users', async () => {
    const edited = await root.admin.adminEditUser('lee', { login_name: 'lee', source_id: 0, full_name: 'Lee L.', email: 'lee@corp.example.com' });
    expect(edited.data).toMatchObject({ login: 'lee', full_name: 'Lee L.', email: 'lee@corp.example.com' });
    expect((await root.admin.adminDeleteUser('max')).status).toBe(204);
    await expect(root.users.userGet('max')).rejects.toMatchObject({ status: 404 });
    await expect(kim.admin.adminSearchUsers()).rejects.toMatchObject({ status: 403 });
  });

  it('reads and edits one’s own settings', async () => {
    const updated = await kim.user.updateUserSettings({ language: 'de-DE', location: 'Berlin', hide_activity: true });
    expect(updated.data).toMatchObject({ language: 'de-DE', location: 'Berlin', hide_activity: true, hide_email: false });
    expect((await kim.user.getUserSettings()).data).toEqual(updated.data);
  });
});
