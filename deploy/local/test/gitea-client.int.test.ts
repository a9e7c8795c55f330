import { Api, giteaApi, type Organization, type Team, type User } from 'gitea-js';
import { Secret, TOTP } from 'otpauth';
import { basic, bootTestPlatform, type TestPlatform } from './harness';

// The organization and team routes driven by an unmodified Gitea API client (gitea-js, generated from Gitea's
// swagger): what a Gitea client sends must work here, and what it reads must be where it looks (docs/gitea-dialect.md).

/** A gitea-js client signing every request in with HTTP Basic credentials, as Gitea's clients may instead of a token. */
const giteaBasic = (base: string, login: string, password: string) =>
  new Api({ baseUrl: `${base}/api/v1`, baseApiParams: { format: 'json', headers: { Authorization: basic(login, password) } } });

/**
 * The status and message of an error answer: gitea-js throws the response with its parsed body in `error` (and a
 * success is a failure here). A plain object, so a mismatch shows as one.
 */
const failure = (call: Promise<unknown>): Promise<{ status: number; message: string; retryAfter: string | null }> =>
  call.then(
    (res) => {
      throw new Error(`answered ${(res as Response).status}, not an error`);
    },
    (res: Response & { error?: { message?: string } }) => ({
      status: res.status,
      message: res.error?.message ?? '',
      retryAfter: res.headers?.get('retry-after') ?? null,
    }),
  );

/** What `failure` reads of a refusal. */
const refusal = (status: number, message?: string | RegExp) =>
  expect.objectContaining({
    status,
    ...(message !== undefined && { message: typeof message === 'string' ? message : expect.stringMatching(message) }),
  });

/** The rels of a Link header and the page each names, in the order sent. */
const rels = (link: string | null) =>
  (link ?? '')
    .split(',')
    .filter(Boolean)
    .map((part) => {
      const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part)!;
      return [rel, new URL(url).searchParams.get('page')];
    });

/** The code an authenticator app shows now for a TOTP secret. */
const codeOf = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

/** Gitea's zero time: the date-time of what never happened (a user who never signed in, a token never used). */
const ZERO_TIME = '0001-01-01T00:00:00Z';

describe('organizations and teams through the gitea-js client', () => {
  let harness: TestPlatform;
  let alice: ReturnType<typeof giteaApi>;
  let bob: ReturnType<typeof giteaApi>;
  let root: ReturnType<typeof giteaApi>;

  beforeAll(async () => {
    harness = await bootTestPlatform({}, { apps: ['authz', 'orgs-teams'] });
    for (const login of ['alice', 'bob', 'carol', 'dave', 'erin']) await harness.signUp(login);
    const base = harness.platform.url.replace(/\/$/, '');
    alice = giteaApi(base, { token: harness.tokens.alice });
    bob = giteaApi(base, { token: harness.tokens.bob });
    root = giteaApi(base, { token: harness.tokens.root });
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
    // Gitea's units_map: each unit with the access the team has to it.
    expect(team.data.units_map).toEqual({ 'repo.code': 'write' });
    expect((await alice.teams.orgGetTeam(team.data.id!)).data).toMatchObject({ units: ['repo.code'], units_map: { 'repo.code': 'write' } });
    const owners = (await alice.orgs.orgListTeams('hooli')).data.find((t: Team) => t.permission === 'owner')!;
    expect(owners.units_map).toEqual({});
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
    const links: (string | null)[][][] = [];
    let total = 0;
    for (let page = 1; ; page++) {
      const res = await alice.orgs.orgListMembers('hooli', { page, limit: 2 });
      total = Number(res.headers.get('x-total-count'));
      seen.push(...res.data);
      links.push(rels(res.headers.get('link')));
      if (!res.headers.get('link')?.includes('rel="next"')) break;
      expect(page).toBeLessThan(10);
    }
    expect(total).toBe(5);
    expect(seen.map((u) => u.login)).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);
    // Gitea's Link: next and last while there are more, first and prev after the first page, in that order.
    expect(links).toEqual([
      [
        ['next', '2'],
        ['last', '3'],
      ],
      [
        ['next', '3'],
        ['last', '3'],
        ['first', '1'],
        ['prev', '1'],
      ],
      [
        ['first', '1'],
        ['prev', '2'],
      ],
    ]);
    // Built as Gitea builds it: the request's query, sorted by key, with `page` set.
    const second = await alice.orgs.orgListMembers('hooli', { page: 2, limit: 2 });
    expect(second.headers.get('link')).toMatch(
      /^<[^>]+\/api\/v1\/orgs\/hooli\/members\?limit=2&page=3>; rel="next",<[^>]+\?limit=2&page=3>; rel="last",/,
    );
    // A page past the end is the last page's neighbours; one page has no Link at all.
    expect(rels((await alice.orgs.orgListMembers('hooli', { page: 9, limit: 2 })).headers.get('link'))).toEqual([
      ['first', '1'],
      ['prev', '2'],
    ]);
    expect((await alice.orgs.orgListMembers('hooli', { limit: 50 })).headers.get('link')).toBeNull();

    const teamMembers: User[] = [];
    for (let page = 1; page < 10; page++) {
      const res = await alice.teams.orgListTeamMembers(devs.id!, { page, limit: 3 });
      teamMembers.push(...res.data);
      if (res.data.length < 3) break;
    }
    expect(teamMembers.map((u) => u.login)).toEqual(['bob', 'carol', 'dave', 'erin']);
  });

  it('answers a taken name with 422 as Gitea does, keeping the message; fields it does not know are ignored', async () => {
    expect(await failure(bob.orgs.orgCreate({ username: 'HOOLI' }))).toEqual(refusal(422, 'the name HOOLI is already taken'));
    expect(await failure(bob.orgs.orgCreate({ username: 'carol' }))).toEqual(refusal(422, 'the name carol is already taken'));
    expect(
      await failure(
        root.admin.adminCreateUser({
          username: 'ALICE',
          email: 'someone@example.com',
          password: 'a-long-password',
          must_change_password: false,
        }),
      ),
    ).toEqual(refusal(422, 'user ALICE already exists'));
    expect(
      await failure(root.admin.adminCreateUser({ username: 'alicia', email: 'alice@example.com', password: 'a-long-password' })),
    ).toEqual(refusal(422, 'email alice@example.com is already used'));
    // Gitea's fields this platform has no use for (a repository-admin flag, a notification, a migration's creation
    // time) are accepted and ignored, as Gitea's clients send them.
    const made = await bob.orgs.orgCreate({ username: 'piedpiper', repo_admin_change_team_access: true, unknown: 1 } as never);
    expect(made.status).toBe(201);
    const user = await root.admin.adminCreateUser({
      username: 'gavin',
      email: 'gavin@example.com',
      password: 'a-long-password',
      must_change_password: false,
      send_notify: true,
      source_id: 0,
      login_name: 'gavin',
      visibility: 'public',
      created_at: '2020-01-01T00:00:00Z',
    });
    expect(user.status).toBe(201);
    const team = await bob.orgs.orgCreateTeam('piedpiper', {
      name: 'eng',
      permission: 'read',
      units: ['repo.code'],
      can_create_org_repo: true,
    });
    expect(await failure(bob.orgs.orgCreateTeam('piedpiper', { name: 'ENG', permission: 'read', units: ['repo.code'] }))).toEqual(
      refusal(422, 'team ENG already exists in piedpiper'),
    );
    expect((await bob.teams.orgDeleteTeam(team.data.id!)).status).toBe(204);
  });

  it('lists the caller’s teams across organizations, with their organizations (GET /user/teams)', async () => {
    const board = await bob.orgs.orgCreateTeam('piedpiper', { name: 'board', permission: 'admin', units: [] });
    // Making a team does not put its maker in it.
    expect((await bob.user.userListTeams()).data.map((t: Team) => t.name)).toEqual(['devs', 'Owners']);
    await bob.teams.orgAddTeamMember(board.data.id!, 'bob');
    const mine = await bob.user.userListTeams({ page: 1, limit: 10 });
    expect(mine.headers.get('x-total-count')).toBe('3');
    expect(mine.data.map((t: Team) => [t.name, t.organization?.name])).toEqual([
      ['board', 'piedpiper'],
      ['devs', 'hooli'],
      ['Owners', 'piedpiper'],
    ]);
    const paged = await bob.user.userListTeams({ page: 1, limit: 2 });
    expect(paged.data).toHaveLength(2);
    expect(rels(paged.headers.get('link'))).toEqual([
      ['next', '2'],
      ['last', '2'],
    ]);
    expect((await alice.user.userListTeams()).data.map((t: Team) => [t.name, t.organization?.name])).toEqual([
      ['Owners', 'hooli'],
      ['Owners', 'hooli-private'],
    ]);
    expect((await root.user.userListTeams()).data.map((t: Team) => t.organization?.name)).not.toContain('hooli');
  });

  it('lets a site admin create an organization for a user, who owns it (POST /admin/users/{username}/orgs)', async () => {
    const made = await root.admin.adminCreateOrg('carol', { username: 'carolcorp', full_name: 'Carol Corp', visibility: 'limited' });
    expect(made.status).toBe(201);
    expect(made.data).toMatchObject({ name: 'carolcorp', username: 'carolcorp', full_name: 'Carol Corp', visibility: 'limited' });
    const carol = giteaApi(harness.platform.url.replace(/\/$/, ''), { token: harness.tokens.carol });
    expect((await carol.users.orgGetUserPermissions('carol', 'carolcorp')).data).toMatchObject({ is_owner: true });
    // The admin made it but is not in it.
    expect((await root.orgs.orgListMembers('carolcorp')).data.map((u: User) => u.login)).toEqual(['carol']);
    expect((await root.user.orgListCurrentUserOrgs()).data.map((o: Organization) => o.name)).not.toContain('carolcorp');
    expect(await failure(root.admin.adminCreateOrg('dave', { username: 'CarolCorp' }))).toEqual(
      refusal(422, 'the name CarolCorp is already taken'),
    );
    expect(await failure(root.admin.adminCreateOrg('nobody', { username: 'nobodycorp' }))).toEqual(refusal(404));
    expect(await failure(root.admin.adminCreateOrg('hooli', { username: 'hoolicorp' }))).toEqual(refusal(404));
    expect(await failure(bob.admin.adminCreateOrg('bob', { username: 'bobcorp' }))).toEqual(refusal(403));
  });

  it('lets a site admin publicize and conceal another member; a member only their own', async () => {
    expect(await failure(bob.orgs.orgIsPublicMember('hooli', 'carol'))).toEqual(refusal(404));
    expect((await root.orgs.orgPublicizeMember('hooli', 'carol')).status).toBe(204);
    expect((await bob.orgs.orgIsPublicMember('hooli', 'carol')).status).toBe(204);
    expect(await failure(bob.orgs.orgPublicizeMember('hooli', 'dave'))).toEqual(
      refusal(403, 'you can only change your own public membership'),
    );
    expect((await root.orgs.orgConcealMember('hooli', 'carol')).status).toBe(204);
    expect(await failure(bob.orgs.orgIsPublicMember('hooli', 'carol'))).toEqual(refusal(404));
    // Not a member: nothing to publicize.
    expect(await failure(root.orgs.orgPublicizeMember('hooli', 'gavin'))).toEqual(refusal(404));
  });
});

describe('user administration and own settings through the gitea-js client', () => {
  let harness: TestPlatform;
  let base: string;
  let root: ReturnType<typeof giteaApi>;
  let kim: ReturnType<typeof giteaApi>;

  beforeAll(async () => {
    // A low account limit, so a lockout is reached in a few tries.
    harness = await bootTestPlatform({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' }, { apps: ['authz', 'orgs-teams'] });
    for (const login of ['kim', 'lee', 'max', 'ned', 'oli', 'pat']) await harness.signUp(login);
    base = harness.platform.url.replace(/\/$/, '');
    root = giteaApi(base, { token: harness.tokens.root });
    kim = giteaApi(base, { token: harness.tokens.kim });
  }, 120_000);
  afterAll(() => harness?.stop());

  it('lists and searches users as a site admin, paged with X-Total-Count', async () => {
    const page = await root.admin.adminSearchUsers({ page: 1, limit: 2 });
    expect(page.data.map((u: User) => u.login)).toEqual(['root', 'kim']);
    expect(page.headers.get('x-total-count')).toBe('7');
    const byName = await root.admin.adminSearchUsers({ login_name: 'lee' });
    expect(byName.data).toEqual([
      expect.objectContaining({
        login: 'lee',
        email: 'lee@example.com',
        login_name: '',
        source_id: 0,
        visibility: 'public',
        restricted: false,
      }),
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
    const edited = await root.admin.adminEditUser('lee', {
      login_name: 'lee',
      source_id: 0,
      full_name: 'Lee L.',
      email: 'lee@corp.example.com',
    });
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

  it('answers every date-time as a string: Gitea’s zero time for a user who never signed in and a token never used', async () => {
    const made = await root.admin.adminCreateUser({
      username: 'quinn',
      email: 'quinn@example.com',
      password: 'quinn-password',
      must_change_password: false,
    });
    expect(made.data.last_login).toBe(ZERO_TIME);
    expect(made.data.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(new Date(made.data.created!).getTime()).toBeGreaterThan(Date.now() - 3_600_000);
    // kim signed in (her token was made with her password): a time of today.
    const kimSeen = (await kim.user.userGetCurrent()).data;
    expect(kimSeen.last_login).not.toBe(ZERO_TIME);
    expect(new Date(kimSeen.last_login!).getTime()).toBeGreaterThan(Date.now() - 3_600_000);
    for (const u of (await root.admin.adminSearchUsers({ limit: 50 })).data)
      for (const at of [u.last_login, u.created]) expect([u.login, typeof at]).toEqual([u.login, 'string']);
    // A token made and never used: its last use is the zero time too.
    const quinn = giteaBasic(base, 'quinn', 'quinn-password');
    await quinn.users.userCreateToken('quinn', { name: 'unused', scopes: ['read:user'] });
    const [token] = (await quinn.users.userGetTokens('quinn')).data as { name: string; created_at: string; last_used_at: string }[];
    expect(token).toMatchObject({ name: 'unused', last_used_at: ZERO_TIME, created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
  });

  it('manages tokens with Basic credentials: lists them paged, deletes one by name as by id', async () => {
    const lee = giteaBasic(base, 'lee', 'lee-password');
    for (const name of ['ci', 'deploy', 'laptop']) expect((await lee.users.userCreateToken('lee', { name })).status).toBe(201);
    const all = await lee.users.userGetTokens('lee');
    // The harness's own token comes first.
    expect(all.data.map((t) => t.name)).toEqual(['cli', 'ci', 'deploy', 'laptop']);
    const page = await lee.users.userGetTokens('lee', { page: 2, limit: 2 });
    expect(page.data.map((t) => t.name)).toEqual(['deploy', 'laptop']);
    expect(page.headers.get('x-total-count')).toBe('4');
    expect(rels(page.headers.get('link'))).toEqual([
      ['first', '1'],
      ['prev', '1'],
    ]);
    expect((await lee.users.userDeleteAccessToken('lee', 'deploy')).status).toBe(204);
    const ci = all.data.find((t) => t.name === 'ci')!;
    expect((await lee.users.userDeleteAccessToken('lee', String(ci.id))).status).toBe(204);
    expect((await lee.users.userGetTokens('lee')).data.map((t) => t.name)).toEqual(['cli', 'laptop']);
    expect(await failure(lee.users.userDeleteAccessToken('lee', 'deploy'))).toEqual(refusal(404, 'access token "deploy" does not exist'));
    expect(await failure(lee.users.userDeleteAccessToken('lee', '999999'))).toEqual(refusal(404));
    // Another user's token, by name or id: never.
    expect(await failure(lee.users.userDeleteAccessToken('kim', 'cli'))).toEqual(refusal(403));
    expect((await kim.user.userGetCurrent()).status).toBe(200);
  });

  it('takes Basic credentials on every route a token takes, with the second factor in X-Gitea-OTP', async () => {
    const ned = giteaBasic(base, 'ned', 'ned-password');
    expect((await ned.user.userGetCurrent()).data.login).toBe('ned');
    expect((await ned.users.userSearch({ q: 'ki' })).data.data!.map((u: User) => u.login)).toEqual(['kim']);
    expect((await ned.orgs.orgCreate({ username: 'nedcorp' })).status).toBe(201);
    expect((await ned.user.orgListCurrentUserOrgs()).data.map((o: Organization) => o.name)).toEqual(['nedcorp']);
    // Public routes too: a credential sent must be right.
    expect((await ned.orgs.orgGet('nedcorp')).status).toBe(200);
    expect(await failure(giteaBasic(base, 'ned', 'wrong-password').orgs.orgGet('nedcorp'))).toEqual(
      refusal(401, 'invalid username or password'),
    );
    // Basic is the owner's password: no token scope narrows it, but a site admin's routes stay the site admins'.
    expect(await failure(ned.admin.adminSearchUsers())).toEqual(refusal(403));

    // With a second factor, every Basic request needs a code (each code counts once).
    const enrolment = await harness.api('ned', 'POST', '/user/two-factor/enrolment');
    const enabled = await harness.api('ned', 'POST', '/user/two-factor', { code: codeOf(enrolment.body.secret) });
    expect(enabled.status).toBe(201);
    expect(await failure(ned.user.userGetCurrent())).toEqual(refusal(401, /two-factor authentication code is required.*X-Gitea-OTP/));
    const withCode = await ned.user.userGetCurrent({ headers: { 'X-Gitea-OTP': codeOf(enrolment.body.secret, 1) } });
    expect(withCode.data.login).toBe('ned');
    expect(await failure(ned.user.userGetCurrent({ headers: { 'X-Gitea-OTP': '000000' } }))).toEqual(
      refusal(401, 'invalid two-factor authentication code'),
    );
    // A token made once (here with a recovery code: this step's code is spent) stands for the password and the code.
    const token = await ned.users.userCreateToken('ned', { name: 'ci' }, { headers: { 'X-Gitea-OTP': enabled.body.recovery_codes[0] } });
    expect((await giteaApi(base, { token: token.data.sha1 }).user.userGetCurrent()).data.login).toBe('ned');
  });

  it('keeps the lockout, prohibit_login and unverified addresses on every route Basic credentials reach', async () => {
    // Three wrong passwords on any routes lock the account everywhere, its right password included, until lifted.
    const wrong = giteaBasic(base, 'oli', 'wrong-password');
    expect(await failure(wrong.user.userGetCurrent())).toEqual(refusal(401));
    expect(await failure(wrong.orgs.orgGetAll())).toEqual(refusal(401));
    expect(await failure(wrong.users.userGetTokens('oli'))).toEqual(refusal(401));
    const oli = giteaBasic(base, 'oli', 'oli-password');
    const locked = await failure(oli.user.userGetCurrent());
    expect(locked).toEqual(refusal(429, /too many failed sign-in attempts for this account/));
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    expect(await failure(oli.orgs.orgGetAll())).toEqual(refusal(429));
    // Its token keeps working; a site admin lifts the lockout.
    expect((await harness.api('oli', 'GET', '/user')).status).toBe(200);
    expect((await harness.api('root', 'DELETE', '/admin/users/oli/lockout')).status).toBe(204);
    expect((await oli.user.userGetCurrent()).data.login).toBe('oli');

    // Prohibited from logging in: 403 with the right password, 401 with a wrong one.
    await root.admin.adminEditUser('pat', { login_name: 'pat', source_id: 0, prohibit_login: true });
    expect(await failure(giteaBasic(base, 'pat', 'pat-password').user.userGetCurrent())).toEqual(
      refusal(403, 'user is prohibited from logging in'),
    );
    expect(await failure(giteaBasic(base, 'pat', 'pat-password').orgs.orgGetAll())).toEqual(
      refusal(403, 'user is prohibited from logging in'),
    );
    expect(await failure(giteaApi(base, { token: harness.tokens.pat }).user.userGetCurrent())).toEqual(
      refusal(403, 'user is prohibited from logging in'),
    );
    expect(await failure(giteaBasic(base, 'pat', 'wrong-password').user.userGetCurrent())).toEqual(refusal(401));
    await root.admin.adminEditUser('pat', { login_name: 'pat', source_id: 0, prohibit_login: false });
    expect((await giteaBasic(base, 'pat', 'pat-password').user.userGetCurrent()).data.login).toBe('pat');

    // Where the site lists allowed domains, an address not yet verified signs in nowhere with its password.
    expect((await harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: false })).status).toBe(
      200,
    );
    expect((await harness.api('root', 'POST', '/allowed-domains?org=platform-admin', { name: 'corp.example' })).status).toBe(200);
    const signUp = await harness.api(undefined, 'POST', '/user/signup', {
      username: 'uma',
      email: 'uma@corp.example',
      password: 'uma-password',
    });
    expect(signUp).toMatchObject({ status: 201, body: { session: null } });
    const uma = giteaBasic(base, 'uma', 'uma-password');
    expect(await failure(uma.user.userGetCurrent())).toEqual(refusal(403, /^your e-mail address uma@corp\.example is not verified yet/));
    expect(await failure(uma.orgs.orgGetAll())).toEqual(refusal(403, /not verified yet/));
  });
});
