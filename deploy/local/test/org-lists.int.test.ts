import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { basic, bootTestPlatform, type TestPlatform } from './harness';

// An organization's life as a client walks it, where the apps act together: listing organizations and teams as
// Gitea's clients do (GET /orgs, /user/orgs, /users/{username}/orgs, team search, a user's permissions in an
// organization, the paging of the organization, member and team lists), and what orgs-teams, authz, the object storage
// and the gateway's caches must agree on from the very next request: an organization made, joined, left, hidden and
// deleted; a team's custom roles and their end; a service account's token acting as its account until it is revoked;
// a site admin's changes to accounts; an avatar stored, served and signed. Each row's statuses for each caller are
// unit tests (apps/gateway/test), each app's own rules its integration tests. Decisions: docs/organizations-and-teams.md.

describe('an organization as a client walks it', () => {
  let harness: TestPlatform;
  let dataDir: string;
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
    // Its own DATA_DIR, to find the object storage's generated signing key and files in.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'org-lists-e2e-'));
    // Decisions are kept one second, so a role whose end passed stops granting soon after (a team's roles wait it out).
    harness = await bootTestPlatform(
      { PLATFORM_ADMIN_ORG: 'platform-admins', DATA_DIR: dataDir, AUTHZ_DECISION_CACHE_TTL_MS: '1000' },
      { apps: ['authz', 'orgs-teams'] },
    );
    for (const login of ['alice', 'bob', 'carol']) await harness.signUp(login);
    expect((await api('alice', 'POST', '/orgs', { username: 'pub-a', email: 'hello@pub-a.example.com' })).status).toBe(201);
    expect((await api('alice', 'POST', '/orgs', { username: 'lim-a', visibility: 'limited' })).status).toBe(201);
    expect((await api('alice', 'POST', '/orgs', { username: 'priv-a', visibility: 'private' })).status).toBe(201);
    expect((await api('bob', 'POST', '/orgs', { username: 'pub-b' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

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

  describe("an organization's life", () => {
    it('its owner, members and visibility hold from the very next request, and once deleted nothing of it is left to a new one of its name', async () => {
      const made = await api('alice', 'POST', '/orgs', { username: 'life' });
      expect(made.status).toBe(201);
      // Made with its Owners team, the creator its only member and an owner in authz.
      const teams = await api('alice', 'GET', '/orgs/life/teams');
      expect(teams.body).toEqual([expect.objectContaining({ name: 'Owners', permission: 'owner' })]);
      expect(logins((await api('alice', 'GET', `/teams/${teams.body[0].id}/members`)).body)).toEqual(['alice']);
      expect((await api('alice', 'GET', '/orgs/life/is-owner')).status).toBe(200);

      // A user added to a team is a member on the next request; removed, not.
      expect((await api('bob', 'GET', '/orgs/life/teams')).status).toBe(403);
      const devs = (await api('alice', 'POST', '/orgs/life/teams', { name: 'devs', type: 'general' })).body.id;
      expect((await api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
      expect((await api('bob', 'GET', '/orgs/life/teams')).status).toBe(200);
      expect((await api('alice', 'POST', `/orgs/life/members/action/remove?uid=${harness.ids.bob}`)).status).toBe(200);
      expect((await api('bob', 'GET', '/orgs/life/teams')).status).toBe(403);
      expect((await api('bob', 'GET', `/teams/${devs}`)).status).toBe(403);
      expect((await api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
      expect((await api('alice', 'DELETE', '/orgs/life/members/bob')).status).toBe(204);
      expect((await api('bob', 'GET', '/orgs/life/teams')).status).toBe(403);

      // Made private, it is hidden from everyone outside it on the next request.
      expect((await api('carol', 'GET', '/orgs/life')).status).toBe(200);
      expect((await api('alice', 'PATCH', '/orgs/life', { visibility: 'private' })).status).toBe(200);
      expect((await api('carol', 'GET', '/orgs/life')).status).toBe(404);
      // Private, it is seen by its members alone, from the very next request as they come and go (asked twice: the
      // second answer is the one kept), whoever else joins its teams meanwhile.
      expect((await api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
      expect((await api('bob', 'GET', '/orgs/life')).status).toBe(200);
      expect((await api('bob', 'GET', '/orgs/life')).status).toBe(200);
      expect((await api('alice', 'PUT', `/teams/${devs}/members/carol`)).status).toBe(204);
      expect((await api('carol', 'GET', '/orgs/life')).status).toBe(200);
      expect((await api('alice', 'POST', '/orgs/life/teams', { name: 'ops', type: 'general' })).status).toBe(201);
      expect((await api('alice', 'DELETE', '/orgs/life/members/bob')).status).toBe(204);
      expect((await api('bob', 'GET', '/orgs/life')).status).toBe(404);
      expect((await api('carol', 'GET', '/orgs/life')).status).toBe(200);
      expect((await api('alice', 'DELETE', `/teams/${devs}/members/carol`)).status).toBe(204);
      expect((await api('carol', 'GET', '/orgs/life')).status).toBe(404);

      // Deleted by its last owner, once, whoever asks at the same moment; its teams go with it.
      const replies = await Promise.all([1, 2, 3, 4].map(() => api('alice', 'DELETE', '/orgs/life')));
      expect(replies.map((r) => r.status).sort()).toEqual([204, 404, 404, 404]);
      for (const r of replies.filter((x) => x.status === 404)) expect(r.body.message).not.toMatch(/tuple/i);
      expect((await api('alice', 'GET', '/orgs/life')).status).toBe(404);
      expect((await api('alice', 'GET', `/teams/${devs}`)).status).toBe(404);
      const again = await api('carol', 'POST', '/orgs', { username: 'life' });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(made.body.id);
      expect(logins((await api('carol', 'GET', '/orgs/life/members')).body)).toEqual(['carol']);
      expect((await api('alice', 'GET', '/orgs/life/teams')).status).toBe(403);
      expect((await api('alice', 'GET', '/orgs/life/is-owner')).status).toBe(403);
    });
  });

  describe("a team's custom roles", () => {
    it("give the team's members their permissions from the very next request, until the end they are given until, and go with the team", async () => {
      expect((await api('alice', 'POST', '/orgs', { username: 'roles-co' })).status).toBe(201);
      const role = await api('alice', 'POST', '/authz/roles?org=roles-co', {
        name: 'team-editor',
        permissions: [{ namespace: 'team', action: 'edit' }],
      });
      expect(role.status).toBe(201);
      const editor = role.body.id;
      const qa = (await api('alice', 'POST', '/orgs/roles-co/teams', { name: 'qa', assignedRoleIDs: [editor] })).body;
      expect(qa.role_ids).toEqual([editor]);
      const ops = (await api('alice', 'POST', '/orgs/roles-co/teams', { name: 'ops' })).body.id;
      const editsOps = async () => (await api('carol', 'PATCH', `/teams/${ops}`, { name: 'ops' })).status;

      expect((await api('alice', 'PUT', `/teams/${qa.id}/members/carol`)).status).toBe(204);
      expect(await editsOps()).toBe(200);
      expect((await api('carol', 'DELETE', `/teams/${ops}`)).status).toBe(403);
      expect((await api('alice', 'DELETE', `/teams/${qa.id}/members/carol`)).status).toBe(204);
      expect(await editsOps()).toBe(403);

      // A few seconds ahead, in whole seconds as authz keeps it: granted until then, and not after.
      const end = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000);
      const timed = await api('alice', 'PATCH', `/teams/${qa.id}`, {
        name: 'qa',
        assignedRoleIDs: [editor],
        assignedRoleUntil: { [editor]: end.toISOString() },
      });
      expect(Date.parse(timed.body.role_until[editor])).toBe(end.getTime());
      expect((await api('alice', 'PUT', `/teams/${qa.id}/members/carol`)).status).toBe(204);
      expect(await editsOps()).toBe(200);
      // Past the end, and past the second a decision is kept.
      await new Promise((r) => setTimeout(r, end.getTime() - Date.now() + 1_000 + 500));
      expect(await editsOps()).toBe(403);
      // Given again without an end, the role is held for good.
      const again = await api('alice', 'PATCH', `/teams/${qa.id}`, { name: 'qa', assignedRoleIDs: [editor] });
      expect(again.body).not.toHaveProperty('role_until');
      expect(await editsOps()).toBe(200);

      // A deleted team takes its roles along.
      expect((await api('alice', 'DELETE', `/teams/${qa.id}`)).status).toBe(204);
      expect(await editsOps()).toBe(403);
      expect((await api('alice', 'GET', `/authz/roles/${editor}/principals?org=roles-co`)).body).toEqual([]);
    }, 30_000);
  });

  describe("an organization's service account", () => {
    /** Calls as the holder of a service account's token, sent as `Authorization: Bearer`. */
    const as = (token: string, method: string, path: string, json?: unknown) =>
      api(undefined, method, path, json, { authorization: `Bearer ${token}` });

    it('acts as its account, holding what its role gives and what a member sees, until its token is revoked, it is paused or its organization goes', async () => {
      const role = await api('alice', 'POST', '/authz/roles?org=priv-a', {
        name: 'team-maker',
        permissions: [{ namespace: 'team', action: 'create' }],
      });
      expect(role.status).toBe(201);
      const made = await api('alice', 'POST', '/orgs/priv-a/service-accounts', { name: 'priv-ci', roles: [role.body.id] });
      expect(made.status).toBe(201);
      const accounts = `/orgs/priv-a/service-accounts/${made.body.id}`;
      const token = (await api('alice', 'POST', `${accounts}/tokens`, { name: 'pipeline' })).body;
      expect((await as(token.sha1, 'GET', '/user')).body).toMatchObject({ id: made.body.id, login: 'priv-ci', type: 2 });
      expect((await api(undefined, 'GET', '/user', undefined, { authorization: `token ${token.sha1}` })).status).toBe(200);
      // What a member sees, in its private organization, and what its role gives.
      expect((await as(token.sha1, 'GET', '/orgs/priv-a')).status).toBe(200);
      expect(names((await as(token.sha1, 'GET', '/user/orgs')).body)).toEqual(['priv-a']);
      expect((await as(token.sha1, 'POST', '/orgs/priv-a/teams', { name: 'made-by-ci', type: 'general' })).status).toBe(201);
      // Nothing more.
      expect((await as(token.sha1, 'PATCH', '/orgs/priv-a', { description: 'changed' })).status).toBe(403);
      expect((await as(token.sha1, 'GET', '/orgs/priv-a/service-accounts')).status).toBe(403);
      expect((await as(token.sha1, 'POST', '/orgs/pub-b/teams', { name: 'x', type: 'general' })).status).toBe(403);
      expect((await as(token.sha1, 'GET', '/admin/audit-events')).status).toBe(403);
      // The role names it among its principals, and its token's use is recorded.
      expect((await api('alice', 'GET', `/authz/roles/${role.body.id}/principals?org=priv-a`)).body).toContainEqual({
        type: 'user',
        id: made.body.id,
        name: 'priv-ci',
        teams: [],
      });
      expect((await api('alice', 'GET', `${accounts}/tokens`)).body[0].last_used_at).toMatch(/Z$/);

      // Revoked: refused on the very next request.
      expect((await api('alice', 'DELETE', `${accounts}/tokens/${token.id}`)).status).toBe(204);
      expect((await as(token.sha1, 'GET', '/user')).status).toBe(401);
      // Paused: refused at once, and back once active again, without the role taken with the edit.
      const second = (await api('alice', 'POST', `${accounts}/tokens`, { name: 'second' })).body;
      expect((await as(second.sha1, 'GET', '/user')).status).toBe(200);
      expect((await api('alice', 'PATCH', accounts, { active: false, roles: [] })).status).toBe(200);
      expect((await as(second.sha1, 'GET', '/user')).status).toBe(401);
      expect((await api('alice', 'PATCH', accounts, { active: true })).status).toBe(200);
      expect((await as(second.sha1, 'GET', '/user')).status).toBe(200);
      expect((await as(second.sha1, 'POST', '/orgs/priv-a/teams', { name: 'no-longer', type: 'general' })).status).toBe(403);
      // Deleted with its tokens; and an organization's accounts go with it.
      expect((await api('alice', 'DELETE', accounts)).status).toBe(204);
      expect((await as(second.sha1, 'GET', '/user')).status).toBe(401);
      expect((await api('alice', 'POST', '/orgs', { username: 'short-lived' })).status).toBe(201);
      const doomed = (await api('alice', 'POST', '/orgs/short-lived/service-accounts', { name: 'short-lived-ci' })).body;
      const { sha1 } = (await api('alice', 'POST', `/orgs/short-lived/service-accounts/${doomed.id}/tokens`, { name: 'ci' })).body;
      expect((await as(sha1, 'GET', '/user')).status).toBe(200);
      expect((await api('alice', 'DELETE', '/orgs/short-lived')).status).toBe(204);
      expect((await as(sha1, 'GET', '/user')).status).toBe(401);
    });

    it('a site-wide one a site admin makes holds the site while it is a site admin, on the very next request', async () => {
      const made = await api('root', 'POST', '/admin/service-accounts', { name: 'site-ops', site_admin: true });
      expect(made.status).toBe(201);
      const { sha1 } = (await api('root', 'POST', `/admin/service-accounts/${made.body.id}/tokens`, { name: 'ops' })).body;
      expect((await as(sha1, 'GET', '/admin/audit-events')).status).toBe(200);
      expect((await as(sha1, 'GET', '/orgs/priv-a')).status).toBe(200);
      expect((await api('root', 'PATCH', `/admin/service-accounts/${made.body.id}`, { site_admin: false })).status).toBe(200);
      expect((await as(sha1, 'GET', '/admin/audit-events')).status).toBe(403);
      expect((await api('root', 'DELETE', `/admin/service-accounts/${made.body.id}`)).status).toBe(204);
      expect((await as(sha1, 'GET', '/user')).status).toBe(401);
    });
  });

  describe("a site admin's changes to accounts", () => {
    it('hold on the very next request: deactivated, prohibited, demoted, signed out, deleted with the organizations it alone owned', async () => {
      for (const login of ['ann', 'ben', 'cat']) await harness.signUp(login);
      const annBasic = { authorization: basic('ann', 'ann-password') };
      expect((await api('ann', 'GET', '/user')).status).toBe(200); // kept by the gateway now
      expect((await api('root', 'PATCH', '/admin/users/ann', { active: false })).body.active).toBe(false);
      expect(await api('ann', 'GET', '/user')).toMatchObject({ status: 401, body: { message: 'user is not active' } });
      expect((await api(undefined, 'POST', '/users/ann/tokens', { name: 'x' }, annBasic)).status).toBe(401);
      expect((await api('root', 'PATCH', '/admin/users/ann', { active: true, prohibit_login: true })).status).toBe(200);
      expect(await api('ann', 'GET', '/user')).toMatchObject({ status: 403, body: { message: 'user is prohibited from logging in' } });
      expect((await api(undefined, 'POST', '/users/ann/tokens', { name: 'x' }, annBasic)).status).toBe(403);
      expect((await api('root', 'PATCH', '/admin/users/ann', { prohibit_login: false })).status).toBe(200);
      expect((await api('ann', 'GET', '/user')).status).toBe(200);

      expect((await api('root', 'PATCH', '/admin/users/ben', { admin: true })).body.is_admin).toBe(true);
      expect((await api('ben', 'GET', '/admin/users')).status).toBe(200);
      expect((await api('root', 'PATCH', '/admin/users/ben', { admin: false })).status).toBe(200);
      expect((await api('ben', 'GET', '/admin/users')).status).toBe(403);
      expect((await api('ben', 'GET', '/user')).body.is_admin).toBe(false);

      // Signing out ends the token presented, and only that one.
      const session = await harness.tokenFor('ann', 'ann-password', 'console session');
      const bySession = { authorization: `token ${session}` };
      expect((await api(undefined, 'DELETE', '/user/token', undefined, bySession)).status).toBe(204);
      expect((await api(undefined, 'GET', '/user', undefined, bySession)).status).toBe(401);
      expect((await api('ann', 'GET', '/user')).status).toBe(200);

      expect((await api('cat', 'POST', '/orgs', { username: 'cat-co' })).status).toBe(201);
      expect((await api('root', 'DELETE', '/admin/users/cat')).status).toBe(422);
      expect((await api('cat', 'GET', '/user')).status).toBe(200);
      expect((await api('root', 'DELETE', '/admin/users/cat?purge=true')).status).toBe(204);
      expect((await api('cat', 'GET', '/user')).status).toBe(401);
      expect((await api('root', 'GET', '/orgs/cat-co')).status).toBe(404);
      expect((await api('root', 'GET', '/users/cat')).status).toBe(404);
    });
  });

  describe("an organization's avatar", () => {
    const PNG_1x1 = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const upload = (who: string, org: string) => {
      const form = new FormData();
      form.append('avatar', new Blob([PNG_1x1], { type: 'image/png' }), 'logo.png');
      return harness.send(who, 'POST', `/orgs/${org}/avatar/`, form);
    };
    /** Fetches an avatar URL as a browser would: no credentials. */
    const image = async (url: string) => {
      const res = await fetch(url);
      return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
    };

    it('is stored, served back and deleted; a custom role granting update:avatar holds from the very next request, and its removal too', async () => {
      expect((await api('alice', 'POST', '/orgs', { username: 'studio' })).status).toBe(201);
      const painters = await api('alice', 'POST', '/orgs/studio/teams', { name: 'painters', type: 'general' });
      expect((await api('alice', 'PUT', `/teams/${painters.body.id}/members/carol`)).status).toBe(204);
      const generated = await image((await api('carol', 'GET', '/orgs/studio/avatar/')).body);
      expect([generated.status, generated.type]).toEqual([200, 'image/png']);
      expect((await upload('carol', 'studio')).status).toBe(403);

      const role = await api('alice', 'POST', '/authz/roles?org=studio', {
        name: 'avatar-editors',
        permissions: [{ namespace: 'avatar', action: 'update' }],
        teamIDs: [painters.body.id],
      });
      expect(role.status).toBe(201);
      const stored = await upload('carol', 'studio');
      expect(stored.status).toBe(200);
      expect((await api('alice', 'GET', '/orgs/studio/avatar/')).body).toBe(stored.body);
      const served = await image(stored.body);
      expect([served.status, served.type, served.bytes.equals(PNG_1x1)]).toEqual([200, 'image/png', true]);
      // The role carries update only: deleting still takes delete:avatar.
      expect((await api('carol', 'POST', '/orgs/studio/avatar/delete')).status).toBe(403);
      expect((await api('alice', 'DELETE', `/authz/roles/${role.body.id}?org=studio`)).status).toBe(204);
      expect((await upload('carol', 'studio')).status).toBe(403);

      expect((await api('alice', 'POST', '/orgs/studio/avatar/delete')).status).toBe(200);
      expect((await image(stored.body)).status).toBe(404);
    });

    it('is signed, without OBJECT_STORAGE_SIGNING_KEY, with a key generated under DATA_DIR that every signing app shares, kept across a gateway restart', async () => {
      // The marketplace listener (installer links) reads the key at its start, the gateway on first use; the first
      // to create the file wins and both sign with it.
      const keyFile = path.join(dataDir, 'object-storage', 'signing-key');
      const url = new URL((await upload('alice', 'studio')).body);
      const key = fs.readFileSync(keyFile, 'utf8').trim();
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      const objectKey = url.pathname.replace('/api/v1/objects/', '');
      const expires = url.searchParams.get('expires');
      expect(url.searchParams.get('signature')).toBe(createHmac('sha256', key).update(`${objectKey}\n${expires}`).digest('base64url'));
      // Stored as a file under DATA_DIR/objects.
      expect(fs.existsSync(path.join(dataDir, 'objects', ...objectKey.split('/')))).toBe(true);

      await harness.platform.stopApp('gateway');
      await harness.platform.startApp('gateway');
      const port = harness.platform.apps.get('gateway')!.httpPort;
      const again = await image(`http://localhost:${port}${url.pathname}${url.search}`);
      expect([again.status, again.bytes.equals(PNG_1x1)]).toEqual([200, true]);
      expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(key);
    });
  });
});
