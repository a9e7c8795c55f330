import { bootTestPlatform, type TestPlatform } from './harness';

// Organizations as a client walks them: organizations, members and public members (avatars, sync
// tokens, access and bus tokens and claims have their own suites). Decisions: docs/organizations-and-teams.md.

describe('organizations, members and public members over HTTP', () => {
  let harness: TestPlatform;
  /** Calls the API as `who` (a login, or undefined for an anonymous caller); redirects are not followed. */
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let ids: TestPlatform['ids'];
  const status = async (who: string | undefined, method: string, path: string, json?: unknown) =>
    (await api(who, method, path, json)).status;
  const logins = (users: { login: string }[]) => users.map((u) => u.login);

  /** The id of an organization's team, as its owner sees it. */
  async function teamId(owner: string, org: string, name: string): Promise<number> {
    const teams = await api(owner, 'GET', `/orgs/${org}/teams`);
    expect(teams.status).toBe(200);
    return teams.body.find((t: { name: string }) => t.name === name).id;
  }

  beforeAll(async () => {
    harness = await bootTestPlatform({ PLATFORM_ADMIN_ORG: 'platform-admins' });
    ids = harness.ids;
    for (const login of ['alice', 'bob', 'carol', 'dave']) await harness.signUp(login);
  }, 120_000);
  afterAll(() => harness?.stop());

  describe('POST /orgs', () => {
    it('creates an organization owned by the caller through the Owners team', async () => {
      const created = await api('alice', 'POST', '/orgs', {
        username: 'acme',
        full_name: 'Acme Inc.',
        description: 'Roadrunner traps',
        website: 'https://acme.example.com',
        location: 'Desert',
        orgType: 'public',
        managerManagementClusterEndPoint: 'https://manager.acme.example.com',
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name: 'acme',
        username: 'acme',
        full_name: 'Acme Inc.',
        email: '',
        avatar_url: expect.any(String),
        description: 'Roadrunner traps',
        website: 'https://acme.example.com',
        location: 'Desert',
        managerManagementClusterEndPoint: 'https://manager.acme.example.com',
        visibility: 'public',
        orgType: 0,
      });
      ids.acme = created.body.id;
      const teams = await api('alice', 'GET', '/orgs/acme/teams');
      expect(teams.body).toEqual([expect.objectContaining({ name: 'Owners', permission: 'owner' })]);
      expect(logins((await api('alice', 'GET', `/teams/${teams.body[0].id}/members`)).body)).toEqual(['alice']);
      expect(await status('alice', 'GET', '/orgs/acme/is-owner')).toBe(200);
    });

    it('maps orgType public, limited, private to 0, 1, 2 and accepts visibility as the same setting', async () => {
      const limited = await api('alice', 'POST', '/orgs', { username: 'acme-limited', orgType: 'limited' });
      expect(limited.body).toMatchObject({ orgType: 1, visibility: 'limited' });
      const priv = await api('alice', 'POST', '/orgs', { username: 'acme-private', visibility: 'private' });
      expect(priv.body).toMatchObject({ orgType: 2, visibility: 'private' });
      const both = await api('bob', 'POST', '/orgs', { username: 'bobcorp', orgType: 'private', visibility: 'private' });
      expect(both.body).toMatchObject({ orgType: 2, visibility: 'private' });
      expect((await api('carol', 'POST', '/orgs', { username: 'carolcorp' })).body).toMatchObject({ orgType: 0, visibility: 'public' });
    });

    it('answers 401 without a token, 422 for a taken name (as Gitea), 422 for a bad body and 400 for a bad orgType', async () => {
      expect(await status(undefined, 'POST', '/orgs', { username: 'nobody' })).toBe(401);
      expect(await api('bob', 'POST', '/orgs', { username: 'ACME' })).toMatchObject({
        status: 422,
        body: { message: 'the name ACME is already taken' },
      });
      expect(await status('bob', 'POST', '/orgs', { username: 'carol' })).toBe(422);
      expect(await status('bob', 'POST', '/orgs', {})).toBe(422);
      expect(await status('bob', 'POST', '/orgs', { username: 'no spaces' })).toBe(422);
      const bad = await api('bob', 'POST', '/orgs', { username: 'weird', orgType: 'secret' });
      expect(bad).toMatchObject({ status: 400, body: { message: 'orgType must be one of public, limited, private' } });
      expect(await status('bob', 'POST', '/orgs', { username: 'weird', orgType: 'public', visibility: 'private' })).toBe(400);
      expect(await status(undefined, 'GET', '/orgs/weird')).toBe(404);
    });
  });

  describe('GET /orgs/{orgname}', () => {
    it('shows public organizations to everyone', async () => {
      expect((await api(undefined, 'GET', '/orgs/acme')).body).toMatchObject({ id: ids.acme, username: 'acme', orgType: 0 });
      expect(await status('carol', 'GET', '/orgs/ACME')).toBe(200);
    });

    it('hides limited organizations from anonymous callers and private ones from non-members', async () => {
      expect(await status(undefined, 'GET', '/orgs/acme-limited')).toBe(404);
      expect(await status('carol', 'GET', '/orgs/acme-limited')).toBe(200);
      expect(await status(undefined, 'GET', '/orgs/acme-private')).toBe(404);
      expect(await status('carol', 'GET', '/orgs/acme-private')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/acme-private')).toBe(200);
      expect(await status('root', 'GET', '/orgs/acme-private')).toBe(200);
      expect(await status('root', 'GET', '/orgs/no-such-org')).toBe(404);
    });

    it('hides a private organization behind 404 on every route of a non-member', async () => {
      expect(await status('carol', 'PATCH', '/orgs/acme-private', { description: 'x' })).toBe(404);
      expect(await status('carol', 'GET', '/orgs/acme-private/members')).toBe(404);
      expect(await status('carol', 'GET', '/orgs/acme-private/teams')).toBe(404);
      expect(await status(undefined, 'GET', '/orgs/acme-private/public_members')).toBe(404);
    });
  });

  describe('PATCH /orgs/{orgname}', () => {
    it('changes the given fields for holders of edit:org', async () => {
      const edited = await api('alice', 'PATCH', '/orgs/acme', { description: 'Better traps', website: 'https://acme.example.org' });
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({ description: 'Better traps', website: 'https://acme.example.org', full_name: 'Acme Inc.' });
      expect((await api(undefined, 'GET', '/orgs/acme')).body.description).toBe('Better traps');
    });

    it('makes an organization private for everyone outside it on the next request', async () => {
      expect((await api('alice', 'PATCH', '/orgs/acme-limited', { orgType: 'private' })).body).toMatchObject({
        orgType: 2,
        visibility: 'private',
      });
      expect(await status('carol', 'GET', '/orgs/acme-limited')).toBe(404);
      expect((await api('alice', 'PATCH', '/orgs/acme-limited', { visibility: 'public' })).body.orgType).toBe(0);
      expect(await status(undefined, 'GET', '/orgs/acme-limited')).toBe(200);
    });

    it('answers 401, 403 without edit:org, 400 for a bad orgType and 422 for a bad body', async () => {
      expect(await status(undefined, 'PATCH', '/orgs/acme', { description: 'x' })).toBe(401);
      expect(await status('carol', 'PATCH', '/orgs/acme', { description: 'x' })).toBe(403);
      expect(await status('alice', 'PATCH', '/orgs/acme', { orgType: 'hidden' })).toBe(400);
      expect(await status('alice', 'PATCH', '/orgs/acme', { description: 42 })).toBe(422);
      expect(await status('alice', 'PATCH', '/orgs/nope', { description: 'x' })).toBe(404);
    });
  });

  describe('members and public members', () => {
    it('a user added to a team of the organization becomes a member on the next request', async () => {
      expect(await status('bob', 'GET', '/orgs/acme/teams')).toBe(403);
      const devs = await api('alice', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general' });
      expect(devs.status).toBe(201);
      ids.devs = devs.body.id;
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await status('bob', 'GET', '/orgs/acme/teams')).toBe(200);
    });

    it('lists every member to members and site admins, only public members to others', async () => {
      expect(logins((await api('alice', 'GET', '/orgs/acme/members')).body)).toEqual(['alice', 'bob']);
      expect(logins((await api('bob', 'GET', '/orgs/acme/members')).body)).toEqual(['alice', 'bob']);
      expect(logins((await api('root', 'GET', '/orgs/acme/members')).body)).toEqual(['alice', 'bob']);
      expect((await api('carol', 'GET', '/orgs/acme/members')).body).toEqual([]);
      expect((await api(undefined, 'GET', '/orgs/acme/members')).body).toEqual([]);
      expect((await api(undefined, 'GET', '/orgs/acme/public_members')).body).toEqual([]);
    });

    it('PUT and DELETE public_members change the caller’s own membership only', async () => {
      expect(await status(undefined, 'PUT', '/orgs/acme/public_members/bob')).toBe(401);
      expect(await status('alice', 'PUT', '/orgs/acme/public_members/bob')).toBe(403);
      expect(await status('carol', 'PUT', '/orgs/acme/public_members/carol')).toBe(403);
      expect(await status('bob', 'PUT', '/orgs/acme/public_members/bob')).toBe(204);
      expect(logins((await api(undefined, 'GET', '/orgs/acme/members')).body)).toEqual(['bob']);
      expect(logins((await api('carol', 'GET', '/orgs/acme/public_members')).body)).toEqual(['bob']);
      // Member lists show an email to the member and to site admins only: not to other signed-in callers, nor anonymous ones.
      expect((await api('carol', 'GET', '/orgs/acme/public_members')).body[0].email).toBe('');
      expect((await api('bob', 'GET', '/orgs/acme/public_members')).body[0].email).toBe('bob@example.com');
      const asRoot = (await api('root', 'GET', '/orgs/acme/members')).body as { login: string; email: string }[];
      expect(asRoot.find((m) => m.login === 'bob')?.email).toBe('bob@example.com');
      expect((await api(undefined, 'GET', '/orgs/acme/public_members')).body[0]).toMatchObject({ login: 'bob', email: '' });
      expect((await api(undefined, 'GET', '/orgs/acme/members')).body[0]).toMatchObject({ login: 'bob', email: '' });
      expect(await status(undefined, 'GET', '/orgs/acme/public_members/bob')).toBe(204);
      expect(await status(undefined, 'GET', '/orgs/acme/public_members/alice')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/acme/public_members/nobody')).toBe(404);

      expect(await status('bob', 'DELETE', '/orgs/acme/public_members/alice')).toBe(403);
      expect(await status('bob', 'DELETE', '/orgs/acme/public_members/bob')).toBe(204);
      expect(await status(undefined, 'GET', '/orgs/acme/public_members/bob')).toBe(404);
      expect((await api(undefined, 'GET', '/orgs/acme/public_members')).body).toEqual([]);
    });

    it('GET members/{username}: 204 or 404 for members and site admins, a redirect to public_members for others', async () => {
      expect(await status('alice', 'GET', '/orgs/acme/members/bob')).toBe(204);
      expect(await status('bob', 'GET', '/orgs/acme/members/alice')).toBe(204);
      expect(await status('alice', 'GET', '/orgs/acme/members/carol')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/acme/members/nobody')).toBe(404);
      expect(await status('root', 'GET', '/orgs/acme/members/bob')).toBe(204);
      for (const who of ['carol', undefined]) {
        const redirect = await api(who, 'GET', '/orgs/acme/members/bob');
        expect(redirect.status).toBe(302);
        expect(redirect.headers.get('location')).toBe('/api/v1/orgs/acme/public_members/bob');
      }
      // A non-member asking about themselves learns the plain answer.
      expect(await status('carol', 'GET', '/orgs/acme/members/carol')).toBe(404);
      expect(await status(undefined, 'GET', '/orgs/acme-private/members/alice')).toBe(404);
    });

    it('GET /orgs/{orgname}/user/{username}: the profile of an active user, its e-mail for itself and site admins only; 400 otherwise', async () => {
      const profile = await api('carol', 'GET', '/orgs/acme/user/bob');
      expect(profile).toMatchObject({
        status: 200,
        body: {
          name: 'bob',
          full_name: '',
          email: '',
          keep_email_private: false,
          website: '',
          location: '',
          language: '',
          description: '',
        },
      });
      expect((await api('bob', 'GET', '/orgs/acme/user/bob')).body.email).toBe('bob@example.com');
      expect((await api('root', 'GET', '/orgs/acme/user/bob')).body.email).toBe('bob@example.com');
      expect(await status('carol', 'GET', '/orgs/acme/user/nobody')).toBe(400);
      expect(await status('carol', 'GET', '/orgs/acme/user/acme')).toBe(400);
      expect(await status(undefined, 'GET', '/orgs/acme/user/bob')).toBe(401);
      expect(await status('carol', 'GET', '/orgs/acme-private/user/bob')).toBe(404);
    });

    it('GET is-owner: 200 with an empty body for owners, 403 for everyone else', async () => {
      const owner = await api('alice', 'GET', '/orgs/acme/is-owner');
      expect(owner).toMatchObject({ status: 200, body: undefined });
      expect(await status('bob', 'GET', '/orgs/acme/is-owner')).toBe(403);
      expect(await status('carol', 'GET', '/orgs/acme/is-owner')).toBe(403);
      expect(await status('root', 'GET', '/orgs/acme/is-owner')).toBe(403);
      expect(await status(undefined, 'GET', '/orgs/acme/is-owner')).toBe(401);
    });
  });

  describe('POST /orgs/{orgname}/members/action/{action}', () => {
    const action = (who: string | undefined, name: string, uid?: number | string) =>
      status(who, 'POST', `/orgs/acme/members/action/${name}${uid === undefined ? '' : `?uid=${uid}`}`);

    it('public and private change one’s own membership, or anyone’s with admin:org', async () => {
      expect(await action('bob', 'public', ids.bob)).toBe(200);
      expect(logins((await api(undefined, 'GET', '/orgs/acme/members')).body)).toEqual(['bob']);
      expect(await action('bob', 'private', ids.bob)).toBe(200);
      expect((await api(undefined, 'GET', '/orgs/acme/members')).body).toEqual([]);
      expect(await action('bob', 'public', ids.alice)).toBe(403);
      expect(await action('alice', 'public', ids.alice)).toBe(200);
      expect(await action('alice', 'public', ids.bob)).toBe(200);
      expect(logins((await api(undefined, 'GET', '/orgs/acme/members')).body)).toEqual(['alice', 'bob']);
      expect(await action('alice', 'private', ids.bob)).toBe(200);
      expect(await action('alice', 'private', ids.carol)).toBe(404);
    });

    it('answers 401, 403 for non-members, 400 for a missing or bad uid and for an unknown action', async () => {
      expect(await action(undefined, 'public', ids.bob)).toBe(401);
      expect(await action('carol', 'public', ids.carol)).toBe(403);
      expect(await action('root', 'public', ids.root)).toBe(403);
      expect(await action('bob', 'public')).toBe(400);
      expect(await action('bob', 'public', 'abc')).toBe(400);
      expect(await action('bob', 'public', -3)).toBe(400);
      expect(await action('bob', 'promote', ids.bob)).toBe(400);
    });

    it('remove takes admin:org and refuses the last owner with 400', async () => {
      expect(await action('bob', 'remove', ids.alice)).toBe(403);
      const last = await api('alice', 'POST', `/orgs/acme/members/action/remove?uid=${ids.alice}`);
      expect(last).toMatchObject({
        status: 400,
        body: { message: 'alice is the last owner of acme; add another owner before removing them' },
      });
      expect(await action('alice', 'remove', ids.carol)).toBe(404);
      expect(await action('alice', 'remove', ids.bob)).toBe(200);
      // The removed member loses access on the very next request.
      expect(await status('bob', 'GET', '/orgs/acme/teams')).toBe(403);
      expect(await status('bob', 'GET', `/teams/${ids.devs}`)).toBe(403);
      expect(await status('alice', 'GET', '/orgs/acme/members/bob')).toBe(404);
    });

    it('leave takes the caller out (uid must be the caller), never the last owner', async () => {
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await action('bob', 'leave', ids.alice)).toBe(403);
      expect(await action('bob', 'leave', ids.bob)).toBe(200);
      expect(await status('bob', 'GET', '/orgs/acme/teams')).toBe(403);
      expect(await action('bob', 'leave', ids.bob)).toBe(403);
      expect(await action('alice', 'leave', ids.alice)).toBe(400);
    });
  });

  describe('DELETE /orgs/{orgname}/members/{username}', () => {
    it('removes a member from every team with admin:org; the member loses access on the next request', async () => {
      const owners = await teamId('alice', 'acme', 'Owners');
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await status('alice', 'PUT', `/teams/${owners}/members/dave`)).toBe(204);
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/dave`)).toBe(204);
      expect(await status('dave', 'GET', '/orgs/acme/is-owner')).toBe(200);
      expect(await status('dave', 'PATCH', '/orgs/acme', { location: 'Mesa' })).toBe(200);

      expect(await status(undefined, 'DELETE', '/orgs/acme/members/dave')).toBe(401);
      expect(await status('bob', 'DELETE', '/orgs/acme/members/dave')).toBe(403);
      expect(await status('carol', 'DELETE', '/orgs/acme/members/dave')).toBe(403);
      expect(await status('alice', 'DELETE', '/orgs/acme/members/dave')).toBe(204);
      expect(await status('dave', 'GET', '/orgs/acme/is-owner')).toBe(403);
      expect(await status('dave', 'PATCH', '/orgs/acme', { location: 'Mesa' })).toBe(403);
      expect(await status('dave', 'GET', '/orgs/acme/teams')).toBe(403);
      expect(logins((await api('alice', 'GET', `/teams/${ids.devs}/members`)).body)).toEqual(['bob']);
      expect(await status('alice', 'DELETE', '/orgs/acme/members/dave')).toBe(404);
      expect(await status('alice', 'DELETE', '/orgs/acme/members/nobody')).toBe(404);
    });

    it('refuses to remove the last owner with 400, and lets a site admin remove members', async () => {
      const last = await api('alice', 'DELETE', '/orgs/acme/members/alice');
      expect(last).toMatchObject({ status: 400, body: { message: expect.stringContaining('last owner') } });
      expect(await status('root', 'DELETE', '/orgs/acme/members/bob')).toBe(204);
      expect(await status('bob', 'GET', '/orgs/acme/teams')).toBe(403);
    });

    it('site admins cannot be removed from the administrative organization', async () => {
      // Created at bootstrap, private, owned by the first site admin.
      expect((await api('root', 'GET', '/orgs/platform-admins')).body).toMatchObject({
        username: 'platform-admins',
        visibility: 'private',
      });
      expect(await status('root', 'POST', '/orgs', { username: 'platform-admins' })).toBe(422);
      const owners = await teamId('root', 'platform-admins', 'Owners');
      expect(await status('root', 'PUT', `/teams/${owners}/members/alice`)).toBe(204);
      const refused = await api('alice', 'DELETE', '/orgs/platform-admins/members/root');
      expect(refused).toMatchObject({
        status: 403,
        body: { message: 'site admins cannot be removed from the administrative organization platform-admins' },
      });
      expect(await status('alice', 'DELETE', `/teams/${owners}/members/root`)).toBe(403);
      expect(await status('root', 'GET', '/orgs/platform-admins/is-owner')).toBe(200);
      // Elsewhere a site admin is removed like anyone else.
      expect(await status('alice', 'PUT', `/teams/${await teamId('alice', 'acme', 'Owners')}/members/root`)).toBe(204);
      expect(await status('alice', 'DELETE', '/orgs/acme/members/root')).toBe(204);
    });
  });

  describe('POST /admin/orgs/import', () => {
    // The rows, the CLI and orgs-teams' part are a tier down (docs/import.md); here the tuples the import writes reach
    // authz and the ordinary routes, as for an organization made call by call.
    it('imports an organization the ordinary routes read and authorize as one made call by call, custom role included', async () => {
      const imported = {
        name: 'imported',
        full_name: 'Imported Inc.',
        owners: ['alice'],
        teams: [
          { name: 'devs', members: ['bob'], roles: ['editors'] },
          { name: 'ops', members: ['carol'], permission: 'write' },
        ],
        roles: [{ name: 'editors', permissions: [{ namespace: 'org', action: 'edit' }] }],
      };
      const res = await api('root', 'POST', '/admin/orgs/import', { organizations: [imported] });
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([expect.objectContaining({ name: 'imported', outcome: 'created', errors: [] })]);

      expect((await api('alice', 'GET', '/orgs/imported')).body).toMatchObject({ username: 'imported', full_name: 'Imported Inc.' });
      const teams = await api('bob', 'GET', '/orgs/imported/teams');
      expect(teams.body.map((t: { name: string; permission: string }) => [t.name, t.permission])).toEqual([
        ['Owners', 'owner'],
        ['devs', 'read'],
        ['ops', 'write'],
      ]);
      const devs = await teamId('alice', 'imported', 'devs');
      expect(logins((await api('alice', 'GET', `/teams/${devs}/members`)).body)).toEqual(['bob']);
      expect((await api('alice', 'GET', '/authz/roles?org=imported')).body).toEqual([
        expect.objectContaining({ name: 'editors', team_ids: [devs] }),
      ]);
      // The role reaches devs' members, and only them; the owner team owns the organization.
      expect(await status('bob', 'PATCH', '/orgs/imported', { description: 'edited by a role' })).toBe(200);
      expect(await status('carol', 'PATCH', '/orgs/imported', { description: 'not allowed' })).toBe(403);
      expect(await status('alice', 'PATCH', '/orgs/imported', { location: 'Earth' })).toBe(200);
      expect((await api('alice', 'GET', '/orgs/imported')).body).toMatchObject({ description: 'edited by a role', location: 'Earth' });
    });
  });

  describe('malformed requests', () => {
    it('answers 415 to PATCH /orgs/{orgname} with a text/plain body, changing nothing, and 400 to an undecodable name', async () => {
      const before = (await api('alice', 'GET', '/orgs/acme')).body;
      const asText = await harness.send('alice', 'PATCH', '/orgs/acme', JSON.stringify({ description: 'changed' }), {
        'content-type': 'text/plain',
      });
      expect(asText.status).toBe(415);
      expect((await api('alice', 'GET', '/orgs/acme')).body).toEqual(before);
      expect(await status('alice', 'GET', '/orgs/%FF')).toBe(400);
    });
  });

  describe('DELETE /orgs/{orgname}', () => {
    it('answers concurrent deletes of one organization with one 204 and 404s, never an internal message', async () => {
      expect(await status('carol', 'POST', '/orgs', { username: 'doomed' })).toBe(201);
      const replies = await Promise.all([1, 2, 3, 4].map(() => api('carol', 'DELETE', '/orgs/doomed')));
      expect(replies.map((r) => r.status).sort()).toEqual([204, 404, 404, 404]);
      for (const r of replies.filter((x) => x.status === 404)) expect(r.body.message).not.toMatch(/tuple/i);
      expect(await status('carol', 'GET', '/orgs/doomed')).toBe(404);
      // The name is free again and the new organization starts clean.
      expect(await status('carol', 'POST', '/orgs', { username: 'doomed' })).toBe(201);
      expect(await status('carol', 'DELETE', '/orgs/doomed')).toBe(204);
    });

    it('answers 401 and 403 to callers without delete:org', async () => {
      expect(await status('alice', 'PUT', `/teams/${ids.devs}/members/bob`)).toBe(204);
      expect(await status(undefined, 'DELETE', '/orgs/acme')).toBe(401);
      expect(await status('bob', 'DELETE', '/orgs/acme')).toBe(403);
      expect(await status('carol', 'DELETE', '/orgs/acme')).toBe(403);
    });

    it('lets an owner delete only as the last owner', async () => {
      const owners = await teamId('alice', 'acme', 'Owners');
      expect(await status('alice', 'PUT', `/teams/${owners}/members/dave`)).toBe(204);
      const refused = await api('alice', 'DELETE', '/orgs/acme');
      expect(refused).toMatchObject({ status: 403, body: { message: expect.stringContaining('only the last owner may delete') } });
      expect(await status('alice', 'DELETE', `/teams/${owners}/members/dave`)).toBe(204);
      expect(await status('alice', 'DELETE', '/orgs/acme')).toBe(204);
      expect(await status('alice', 'GET', '/orgs/acme')).toBe(404);
      expect(await status('alice', 'PATCH', '/orgs/acme', { description: 'x' })).toBe(404);
      expect(await status('bob', 'GET', `/teams/${ids.devs}`)).toBe(404);
    });

    it('gives a new organization of the same name nothing of the old one', async () => {
      const again = await api('carol', 'POST', '/orgs', { username: 'acme' });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(ids.acme);
      expect(logins((await api('carol', 'GET', '/orgs/acme/members')).body)).toEqual(['carol']);
      expect(await status('alice', 'GET', '/orgs/acme/teams')).toBe(403);
      expect(await status('alice', 'GET', '/orgs/acme/is-owner')).toBe(403);
    });

    it('lets a site admin delete any organization', async () => {
      const owners = await teamId('alice', 'acme-private', 'Owners');
      expect(await status('alice', 'PUT', `/teams/${owners}/members/dave`)).toBe(204);
      expect(await status('root', 'DELETE', '/orgs/acme-private')).toBe(204);
      expect(await status('alice', 'GET', '/orgs/acme-private')).toBe(404);
      expect(await status('root', 'DELETE', '/orgs/acme-private')).toBe(404);
    });
  });
});
