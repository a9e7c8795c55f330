import { bootTestPlatform, type TestPlatform } from './harness';

// Listing organizations and teams as Gitea's clients do: GET /orgs, /user/orgs, /users/{username}/orgs, team
// search, a user's permissions in an organization, and the paging (`page`, `limit`, X-Total-Count, Link) of the
// organization, member and team lists. Decisions: docs/organizations-and-teams.md.

describe('organization and team lists over HTTP, the Gitea way', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  const names = (orgs: { username: string }[]) => orgs.map((o) => o.username);
  const logins = (users: { login: string }[]) => users.map((u) => u.login);

  /** Every item of a list, as a client pages through it: until a page comes back short. */
  async function pageThrough(
    who: string | undefined,
    path: string,
    limit: number,
  ): Promise<{ items: unknown[]; pages: number; total: number }> {
    const items: unknown[] = [];
    let total = -1;
    for (let page = 1; page < 100; page++) {
      const sep = path.includes('?') ? '&' : '?';
      const res = await api(who, 'GET', `${path}${sep}page=${page}&limit=${limit}`);
      expect(res.status).toBe(200);
      total = Number(res.headers.get('x-total-count'));
      const body = Array.isArray(res.body) ? res.body : res.body.data;
      items.push(...body);
      if (body.length < limit) return { items, pages: page, total };
    }
    throw new Error(`paging through ${path} did not end`);
  }

  beforeAll(async () => {
    harness = await bootTestPlatform({ PLATFORM_ADMIN_ORG: 'platform-admins' });
    for (const login of ['alice', 'bob', 'carol']) await harness.signUp(login);
    expect((await api('alice', 'POST', '/orgs', { username: 'pub-a', email: 'hello@pub-a.example.com' })).status).toBe(201);
    expect((await api('alice', 'POST', '/orgs', { username: 'lim-a', visibility: 'limited' })).status).toBe(201);
    expect((await api('alice', 'POST', '/orgs', { username: 'priv-a', visibility: 'private' })).status).toBe(201);
    expect((await api('bob', 'POST', '/orgs', { username: 'pub-b' })).status).toBe(201);
  }, 120_000);
  afterAll(() => harness?.stop());

  describe('organizations carry Gitea’s name and email', () => {
    it('keeps the email given on create and edit, and names the organization in `name`', async () => {
      const org = await api('alice', 'GET', '/orgs/pub-a');
      expect(org.body).toMatchObject({ name: 'pub-a', username: 'pub-a', email: 'hello@pub-a.example.com' });
      const edited = await api('alice', 'PATCH', '/orgs/pub-a', { email: 'team@pub-a.example.com' });
      expect(edited.body).toMatchObject({ email: 'team@pub-a.example.com' });
      expect((await api('alice', 'GET', '/orgs/pub-a')).body.email).toBe('team@pub-a.example.com');
      expect((await api('alice', 'PATCH', '/orgs/pub-a', { email: 'not an address' })).status).toBe(422);
      expect((await api('alice', 'POST', '/orgs', { username: 'bad-mail', email: 'nope' })).status).toBe(422);
    });
  });

  describe('GET /orgs', () => {
    it('shows public organizations to anyone, limited ones to signed-in users, private ones to members and site admins', async () => {
      expect(names((await api(undefined, 'GET', '/orgs')).body)).toEqual(['pub-a', 'pub-b']);
      expect(names((await api('carol', 'GET', '/orgs')).body)).toEqual(['lim-a', 'pub-a', 'pub-b']);
      expect(names((await api('alice', 'GET', '/orgs')).body)).toEqual(['lim-a', 'priv-a', 'pub-a', 'pub-b']);
      expect(names((await api('root', 'GET', '/orgs')).body)).toEqual(['lim-a', 'platform-admins', 'priv-a', 'pub-a', 'pub-b']);
    });

    it('pages with page and limit, X-Total-Count and Link, and a paging loop ends', async () => {
      const first = await api('root', 'GET', '/orgs?limit=2');
      expect(names(first.body)).toEqual(['lim-a', 'platform-admins']);
      expect(first.headers.get('x-total-count')).toBe('5');
      const link = first.headers.get('link')!;
      expect(link).toContain('/api/v1/orgs?limit=2&page=2>; rel="next"');
      expect(link).toContain('/api/v1/orgs?limit=2&page=3>; rel="last"');
      const last = await api('root', 'GET', '/orgs?limit=2&page=3');
      expect(names(last.body)).toEqual(['pub-b']);
      expect(last.headers.get('link')).toContain('rel="prev"');
      expect(last.headers.get('link')).not.toContain('rel="next"');
      expect((await api('root', 'GET', '/orgs?limit=2&page=9')).body).toEqual([]);
      const all = await pageThrough('root', '/orgs', 2);
      expect(all).toMatchObject({ pages: 3, total: 5 });
      expect(names(all.items as { username: string }[])).toEqual(['lim-a', 'platform-admins', 'priv-a', 'pub-a', 'pub-b']);
      expect((await api('root', 'GET', '/orgs?page=x')).status).toBe(400);
      expect((await api('root', 'GET', '/orgs?limit=-1')).status).toBe(400);
    });
  });

  describe('GET /user/orgs and GET /users/{username}/orgs', () => {
    beforeAll(async () => {
      // carol: a private member of pub-b, a public member of priv-a and pub-a.
      const team = async (owner: string, org: string) =>
        (await api(owner, 'POST', `/orgs/${org}/teams`, { name: 'crew', type: 'general' })).body.id;
      for (const [owner, org] of [
        ['bob', 'pub-b'],
        ['alice', 'priv-a'],
        ['alice', 'pub-a'],
      ]) {
        expect((await api(owner, 'PUT', `/teams/${await team(owner, org)}/members/carol`)).status).toBe(204);
      }
      expect((await api('carol', 'PUT', '/orgs/priv-a/public_members/carol')).status).toBe(204);
      expect((await api('carol', 'PUT', '/orgs/pub-a/public_members/carol')).status).toBe(204);
    });

    it("lists the caller's own organizations, private memberships and private organizations included", async () => {
      const mine = await api('carol', 'GET', '/user/orgs');
      expect(names(mine.body)).toEqual(['priv-a', 'pub-a', 'pub-b']);
      expect(mine.headers.get('x-total-count')).toBe('3');
      expect(names((await api('alice', 'GET', '/user/orgs')).body)).toEqual(['lim-a', 'priv-a', 'pub-a']);
      expect((await api(undefined, 'GET', '/user/orgs')).status).toBe(401);
    });

    it("shows another user's organizations as the caller may see them", async () => {
      // The user and site admins: all of them.
      expect(names((await api('carol', 'GET', '/users/carol/orgs')).body)).toEqual(['priv-a', 'pub-a', 'pub-b']);
      expect(names((await api('root', 'GET', '/users/carol/orgs')).body)).toEqual(['priv-a', 'pub-a', 'pub-b']);
      // Anyone else: public memberships in organizations they may see; a private organization is not listed to a non-member.
      expect(names((await api(undefined, 'GET', '/users/carol/orgs')).body)).toEqual(['pub-a']);
      expect(names((await api('bob', 'GET', '/users/carol/orgs')).body)).toEqual(['pub-a', 'pub-b']);
      // A fellow member of priv-a sees it; her private membership of pub-b only its members see.
      expect(names((await api('alice', 'GET', '/users/carol/orgs')).body)).toEqual(['priv-a', 'pub-a']);
      expect(names((await api('bob', 'GET', '/users/alice/orgs')).body)).toEqual([]);
      expect((await api('bob', 'GET', '/users/nobody/orgs')).status).toBe(404);
      const paged = await api('root', 'GET', '/users/carol/orgs?limit=1&page=2');
      expect(names(paged.body)).toEqual(['pub-a']);
      expect(paged.headers.get('x-total-count')).toBe('3');
    });
  });

  describe('teams: the type default, search and paging', () => {
    let devs: number;

    beforeAll(async () => {
      const made = await api('alice', 'POST', '/orgs/pub-a/teams', { name: 'devs', description: 'Builds the traps' });
      expect(made.status).toBe(201);
      expect(made.body.type).toBe('general');
      devs = made.body.id;
      const ops = await api('alice', 'POST', '/orgs/pub-a/teams', { name: 'ops', type: 'kubernetes', description: 'Runs the clusters' });
      expect(ops.body.type).toBe('kubernetes');
    });

    it('searches names and descriptions (unless include_desc=false), any case, with {ok, data}', async () => {
      const byName = await api('alice', 'GET', '/orgs/pub-a/teams/search?q=DEV');
      expect(byName.status).toBe(200);
      expect(byName.body).toEqual({ ok: true, data: [expect.objectContaining({ id: devs, name: 'devs' })] });
      expect(byName.headers.get('x-total-count')).toBe('1');
      expect((await api('alice', 'GET', '/orgs/pub-a/teams/search?q=clusters')).body.data.map((t: { name: string }) => t.name)).toEqual([
        'ops',
      ]);
      expect((await api('alice', 'GET', '/orgs/pub-a/teams/search?q=clusters&include_desc=false')).body.data).toEqual([]);
      expect((await api('alice', 'GET', '/orgs/pub-a/teams/search?q=%25')).body.data).toEqual([]);
      const all = await api('alice', 'GET', '/orgs/pub-a/teams/search');
      expect(all.body.data.map((t: { name: string }) => t.name)).toEqual(['Owners', 'crew', 'devs', 'ops']);
      expect((await pageThrough('alice', '/orgs/pub-a/teams/search?q=', 3)).total).toBe(4);
      // Who may list the teams may search them.
      expect((await api('bob', 'GET', '/orgs/pub-a/teams/search?q=dev')).status).toBe(403);
      expect((await api(undefined, 'GET', '/orgs/pub-a/teams/search')).status).toBe(401);
      expect((await api('bob', 'GET', '/orgs/priv-a/teams/search')).status).toBe(404);
    });

    it('pages the team list, the team members and the organization members', async () => {
      for (const login of ['bob', 'carol']) expect((await api('alice', 'PUT', `/teams/${devs}/members/${login}`)).status).toBe(204);
      const teams = await api('alice', 'GET', '/orgs/pub-a/teams?limit=2&page=2');
      expect(teams.body.map((t: { name: string }) => t.name)).toEqual(['devs', 'ops']);
      expect(teams.headers.get('x-total-count')).toBe('4');

      const members = await pageThrough('alice', `/teams/${devs}/members`, 1);
      expect(logins(members.items as { login: string }[])).toEqual(['bob', 'carol']);
      expect(members).toMatchObject({ total: 2, pages: 3 });

      const orgMembers = await api('alice', 'GET', '/orgs/pub-a/members?limit=2');
      expect(logins(orgMembers.body)).toEqual(['alice', 'bob']);
      expect(orgMembers.headers.get('x-total-count')).toBe('3');
      expect(orgMembers.headers.get('link')).toContain('rel="next"');
      // Anonymous callers count only the public members: carol.
      const publicOnes = await api(undefined, 'GET', '/orgs/pub-a/members');
      expect(logins(publicOnes.body)).toEqual(['carol']);
      expect(publicOnes.headers.get('x-total-count')).toBe('1');
      expect(publicOnes.headers.get('link')).toBeNull();
      expect((await api(undefined, 'GET', '/orgs/pub-a/public_members?limit=1')).headers.get('x-total-count')).toBe('1');
      // At most 50 a page.
      expect((await api('alice', 'GET', '/orgs/pub-a/members?limit=500')).body).toHaveLength(3);
    });
  });

  describe('GET /users/{username}/orgs/{orgname}/permissions', () => {
    const perms = (is_owner: boolean, is_admin: boolean, can_write: boolean, can_read: boolean) => ({
      is_owner,
      is_admin,
      can_write,
      can_read,
      can_create_repository: is_owner,
    });

    it("answers the highest permission of the user's teams", async () => {
      expect((await api('alice', 'GET', '/users/alice/orgs/pub-a/permissions')).body).toEqual(perms(true, true, true, true));
      // devs has the default permission, read.
      expect((await api('alice', 'GET', '/users/bob/orgs/pub-a/permissions')).body).toEqual(perms(false, false, false, true));
      const writers = (await api('alice', 'POST', '/orgs/pub-a/teams', { name: 'writers', permission: 'admin' })).body.id;
      expect((await api('alice', 'PUT', `/teams/${writers}/members/bob`)).status).toBe(204);
      expect((await api('bob', 'GET', '/users/bob/orgs/pub-a/permissions')).body).toEqual(perms(false, true, true, true));
      // A non-member has none; asking about oneself needs nothing.
      expect((await api('root', 'GET', '/users/root/orgs/pub-a/permissions')).body).toEqual(perms(false, false, false, false));
    });

    it("keeps another user's permissions to those who may list the teams; 404 for unknown users and invisible organizations", async () => {
      expect((await api('root', 'GET', '/users/alice/orgs/pub-a/permissions')).status).toBe(200);
      expect((await api('bob', 'GET', '/users/alice/orgs/pub-b/permissions')).body).toEqual(perms(false, false, false, false));
      expect((await api('alice', 'GET', '/users/bob/orgs/pub-b/permissions')).status).toBe(403);
      expect((await api(undefined, 'GET', '/users/alice/orgs/pub-a/permissions')).status).toBe(401);
      expect((await api('bob', 'GET', '/users/alice/orgs/lim-a/permissions')).status).toBe(403);
      expect((await api('bob', 'GET', '/users/alice/orgs/priv-a/permissions')).status).toBe(404);
      expect((await api('alice', 'GET', '/users/nobody/orgs/pub-a/permissions')).status).toBe(404);
    });
  });
});
