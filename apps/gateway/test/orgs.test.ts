import { ConflictError, InputError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin, userByLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Organizations, members and public members at the edge (docs/organizations-and-teams.md), against a stand-in
// orgs-teams and authz: who may call each row (401, 403 naming the permission, 404 for an organization the caller
// cannot see, nothing asked of orgs-teams when refused), what each row asks orgs-teams (the viewer, publicOnly, the
// member acted on), Gitea's answers (a taken name 422, the membership check's redirect for non-members, is-owner's
// empty 200, member actions' uid), and orgs-teams' refusals passed on. orgs-teams' own rules (orgType and visibility,
// who sees what, the last owner, the administrative organization, deletion): apps/orgs-teams/test/org-membership.int.test.ts,
// orgs.int.test.ts. Membership seen on the very next request: deploy/local/test/org-lists.int.test.ts.

const user = (id: number, login: string, extra: Partial<orgsTeamsV1.User> = {}) =>
  orgsTeamsV1.User.fromPartial({ id, login, email: `${login}@example.com`, active: true, allowCreateOrganization: true, ...extra });
const USERS: Record<string, orgsTeamsV1.User> = {
  root: user(1, 'root', { isAdmin: true }),
  alice: user(5, 'alice'),
  bob: user(6, 'bob'),
  carol: user(7, 'carol'),
  idle: user(8, 'idle', { active: false }),
};
/** acme is public: alice owns it, bob is a member. hidden is private, alice's alone. */
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({
  id: 10,
  username: 'acme',
  fullName: 'Acme Inc.',
  description: 'Roadrunner traps',
  website: 'https://acme.example.com',
  location: 'Desert',
  managerEndpoint: 'https://manager.acme.example.com',
  avatarUrl: 'https://avatars.example/acme.png',
  visibility: 'public',
  orgType: 0,
});
const HIDDEN = orgsTeamsOrgsV1.Organization.fromPartial({ id: 11, username: 'hidden', visibility: 'private', orgType: 2 });
const MEMBERS: Record<number, number[]> = { [ACME.id]: [5, 6], [HIDDEN.id]: [5] };
/** What each caller holds on acme: alice everything, bob a member's permissions; root everything anywhere. */
const holds = (userId: number, permission: string, objectId: number) =>
  userId === USERS.root.id ||
  (objectId !== 0 && userId === USERS.alice.id) ||
  (objectId === ACME.id && userId === USERS.bob.id && ['member:org', 'list:team', 'view:team'].includes(permission));

describe('organizations and their members at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
          getUser: userByLogin(USERS),
        },
        organizations: {
          getOrg: async ({ name, viewerId }) => {
            const org = { acme: ACME, hidden: HIDDEN }[name.toLowerCase()];
            if (!org || (org.visibility === 'private' && !MEMBERS[org.id].includes(viewerId) && viewerId !== USERS.root.id))
              throw new NotFoundError(`organization ${name} does not exist`);
            return org;
          },
          createOrg: async ({ username, orgType, visibility }) => {
            if (username.toLowerCase() === 'acme') throw new ConflictError(`the name ${username} is already taken`);
            if (username.includes(' ')) throw new ValidationError('username: letters, digits, `.`, `_` or `-` only');
            if (orgType === 'secret') throw new InputError('orgType must be one of public, limited, private');
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: 20, username, visibility: visibility || orgType || 'public' });
          },
          editOrg: async ({ description }) => ({ ...ACME, description: description ?? ACME.description }),
          deleteOrg: async ({ requesterId }) => {
            if (requesterId === USERS.alice.id)
              throw new NotAllowedError('only the last owner may delete organization acme; 1 other owner(s) remain');
            return {};
          },
          listMembers: async ({ viewerId }) => ({
            members: MEMBERS[ACME.id]
              .map((id) => Object.values(USERS).find((u) => u.id === id)!)
              .filter((u) => viewerId !== 0 || u.id === 6),
            total: 2,
          }),
          getMembership: async ({ viewerId, username }) => ({
            viewerSeesPrivate: [5, 6, 1].includes(viewerId),
            member: ['alice', 'bob'].includes(username),
            public: username === 'bob',
          }),
          setMemberVisibility: async () => ({}),
          removeMember: async ({ userId, username }) => {
            if (userId === USERS.alice.id || username === 'alice')
              throw new InputError('alice is the last owner of acme; add another owner before removing them');
            if (userId === USERS.carol.id || username === 'carol') throw new NotFoundError('carol is not a member of acme');
            return {};
          },
        },
      },
      authz: {
        authz: {
          checkPermission: async ({ userId, permission, objectId }) => ({ allowed: holds(userId, permission, objectId), dependsOn: [] }),
          // The owner relation: alice's on her organizations.
          check: async ({ tuple }) => ({ allowed: tuple?.user === `user:${USERS.alice.id}` && tuple.relation === 'owner', dependsOn: [] }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string | undefined, method: string, path: string, body?: unknown, type = 'application/json') => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(who ? { authorization: `token ${who}` } : {}), ...(body !== undefined ? { 'content-type': type } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, location: res.headers.get('location') };
  };
  const status = async (...args: Parameters<typeof call>) => (await call(...args)).status;
  const asked = (method: 'createOrg' | 'editOrg' | 'deleteOrg' | 'setMemberVisibility' | 'removeMember' | 'listMembers') =>
    backends.orgsTeams.callsTo('organizations', method);

  describe('POST /orgs', () => {
    it('creates one for the caller, passing orgType and visibility on, in Gitea’s shape', async () => {
      const created = await call('carol', 'POST', '/orgs', { username: 'carolcorp', orgType: 'limited', full_name: 'Carol Corp' });
      expect(created).toMatchObject({ status: 201, body: { id: 20, name: 'carolcorp', username: 'carolcorp', visibility: 'limited' } });
      expect(asked('createOrg').at(-1)).toMatchObject({
        creatorId: USERS.carol.id,
        username: 'carolcorp',
        orgType: 'limited',
        fullName: 'Carol Corp',
      });
      expect((await call(undefined, 'GET', '/orgs/acme')).body).toEqual({
        id: ACME.id,
        name: 'acme',
        username: 'acme',
        full_name: 'Acme Inc.',
        email: '',
        avatar_url: 'https://avatars.example/acme.png',
        description: 'Roadrunner traps',
        website: 'https://acme.example.com',
        location: 'Desert',
        managerManagementClusterEndPoint: 'https://manager.acme.example.com',
        visibility: 'public',
        orgType: 0,
      });
    });

    it('answers 401 without a token, 422 for a taken name (as Gitea) or a bad body, and passes 400 on', async () => {
      backends.orgsTeams.reset();
      expect(await status(undefined, 'POST', '/orgs', { username: 'nobody' })).toBe(401);
      expect(await status('bob', 'POST', '/orgs', {})).toBe(422);
      expect(await status('bob', 'POST', '/orgs', { username: 'x', website: 'not a url' })).toBe(422);
      expect(asked('createOrg')).toEqual([]);
      expect(await call('bob', 'POST', '/orgs', { username: 'ACME' })).toMatchObject({
        status: 422,
        body: { message: 'the name ACME is already taken' },
      });
      expect(await status('bob', 'POST', '/orgs', { username: 'no spaces' })).toBe(422);
      expect(await call('bob', 'POST', '/orgs', { username: 'weird', orgType: 'secret' })).toMatchObject({
        status: 400,
        body: { message: 'orgType must be one of public, limited, private' },
      });
    });
  });

  describe('GET, PATCH and DELETE /orgs/{orgname}', () => {
    it('asks orgs-teams as the caller sees it, and hides a private organization behind 404 on every row', async () => {
      backends.orgsTeams.reset();
      expect(await status('carol', 'GET', '/orgs/ACME')).toBe(200);
      expect(backends.orgsTeams.callsTo('organizations', 'getOrg').at(-1)).toEqual({ name: 'ACME', viewerId: USERS.carol.id });
      expect(await status(undefined, 'GET', '/orgs/hidden')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/hidden')).toBe(200);
      expect(await status('root', 'GET', '/orgs/hidden')).toBe(200);
      expect(await status('root', 'GET', '/orgs/no-such-org')).toBe(404);
      expect(await status('carol', 'PATCH', '/orgs/hidden', { description: 'x' })).toBe(404);
      expect(await status('carol', 'GET', '/orgs/hidden/members')).toBe(404);
      expect(await status('carol', 'GET', '/orgs/hidden/teams')).toBe(404);
      expect(await status(undefined, 'GET', '/orgs/hidden/public_members')).toBe(404);
      expect(await status(undefined, 'GET', '/orgs/hidden/members/alice')).toBe(404);
      expect(await status('carol', 'GET', '/orgs/hidden/user/bob')).toBe(404);
      expect(await status('alice', 'GET', '/orgs/%FF')).toBe(400);
    });

    it('edits with edit:org: the fields given passed on; 401, 403, 422 for a bad body, 415 for text, 404 unknown', async () => {
      const edited = await call('alice', 'PATCH', '/orgs/acme', { description: 'Better traps', orgType: 'private' });
      expect(edited).toMatchObject({ status: 200, body: { description: 'Better traps' } });
      expect(asked('editOrg').at(-1)).toMatchObject({
        orgId: ACME.id,
        description: 'Better traps',
        orgType: 'private',
        fullName: undefined,
      });
      backends.orgsTeams.reset();
      expect(await status(undefined, 'PATCH', '/orgs/acme', { description: 'x' })).toBe(401);
      expect(await call('carol', 'PATCH', '/orgs/acme', { description: 'x' })).toMatchObject({
        status: 403,
        body: { message: 'you do not have the edit:org permission' },
      });
      expect(await status('bob', 'PATCH', '/orgs/acme', { description: 'x' })).toBe(403);
      expect(await status('alice', 'PATCH', '/orgs/acme', { description: 42 })).toBe(422);
      expect(await status('alice', 'PATCH', '/orgs/acme', JSON.stringify({ description: 'changed' }), 'text/plain')).toBe(415);
      expect(await status('alice', 'PATCH', '/orgs/nope', { description: 'x' })).toBe(404);
      expect(asked('editOrg')).toEqual([]);
    });

    it('deletes with delete:org, as the caller, passing orgs-teams’ refusal of an owner who is not the last one on', async () => {
      backends.orgsTeams.reset();
      expect(await status(undefined, 'DELETE', '/orgs/acme')).toBe(401);
      expect(await status('bob', 'DELETE', '/orgs/acme')).toBe(403);
      expect(await status('carol', 'DELETE', '/orgs/acme')).toBe(403);
      expect(asked('deleteOrg')).toEqual([]);
      expect(await call('alice', 'DELETE', '/orgs/acme')).toMatchObject({
        status: 403,
        body: { message: expect.stringContaining('only the last owner may delete') },
      });
      expect(await status('root', 'DELETE', '/orgs/acme')).toBe(204);
      expect(asked('deleteOrg').at(-1)).toEqual({ orgId: ACME.id, requesterId: USERS.root.id });
    });
  });

  describe('members and public members', () => {
    it('lists members as the caller may see them, emails to the member and site admins only', async () => {
      backends.orgsTeams.reset();
      expect((await call('bob', 'GET', '/orgs/acme/members')).body.map((u: { email: string }) => u.email)).toEqual(['', 'bob@example.com']);
      expect((await call('root', 'GET', '/orgs/acme/members')).body.map((u: { email: string }) => u.email)).toEqual([
        'alice@example.com',
        'bob@example.com',
      ]);
      expect((await call(undefined, 'GET', '/orgs/acme/members')).body).toEqual([expect.objectContaining({ login: 'bob', email: '' })]);
      expect((await call('carol', 'GET', '/orgs/acme/public_members')).status).toBe(200);
      expect(asked('listMembers').map((r) => [r.viewerId, r.publicOnly])).toEqual([
        [USERS.bob.id, false],
        [USERS.root.id, false],
        [0, false],
        [USERS.carol.id, true],
      ]);
    });

    it('changes one’s own public membership only (a site admin anyone’s): 401, 403, 204', async () => {
      backends.orgsTeams.reset();
      expect(await status(undefined, 'PUT', '/orgs/acme/public_members/bob')).toBe(401);
      expect(await call('alice', 'PUT', '/orgs/acme/public_members/bob')).toMatchObject({
        status: 403,
        body: { message: 'you can only change your own public membership' },
      });
      expect(await call('carol', 'PUT', '/orgs/acme/public_members/carol')).toMatchObject({
        status: 403,
        body: { message: 'you do not have the member:org permission' },
      });
      expect(await status('bob', 'DELETE', '/orgs/acme/public_members/alice')).toBe(403);
      expect(asked('setMemberVisibility')).toEqual([]);
      expect(await status('bob', 'PUT', '/orgs/acme/public_members/bob')).toBe(204);
      expect(await status('bob', 'DELETE', '/orgs/acme/public_members/bob')).toBe(204);
      expect(await status('root', 'PUT', '/orgs/acme/public_members/alice')).toBe(204);
      expect(asked('setMemberVisibility')).toEqual([
        { orgId: ACME.id, userId: USERS.bob.id, public: true },
        { orgId: ACME.id, userId: USERS.bob.id, public: false },
        { orgId: ACME.id, userId: USERS.alice.id, public: true },
      ]);
      expect(await status(undefined, 'GET', '/orgs/acme/public_members/bob')).toBe(204);
      expect(await status(undefined, 'GET', '/orgs/acme/public_members/alice')).toBe(404);
    });

    it('checks a membership: 204 or 404 for members and site admins, a redirect to public_members for others', async () => {
      expect(await status('alice', 'GET', '/orgs/acme/members/bob')).toBe(204);
      expect(await status('alice', 'GET', '/orgs/acme/members/carol')).toBe(404);
      expect(await status('root', 'GET', '/orgs/acme/members/bob')).toBe(204);
      for (const who of ['carol', undefined]) {
        expect(await call(who, 'GET', '/orgs/acme/members/bob')).toMatchObject({
          status: 302,
          location: '/api/v1/orgs/acme/public_members/bob',
        });
      }
      // A non-member asking about themselves learns the plain answer.
      expect(await status('carol', 'GET', '/orgs/acme/members/carol')).toBe(404);
    });

    it("shows an active user's profile, its email to itself and site admins only; 400 otherwise, 401 without a token", async () => {
      expect(await call('carol', 'GET', '/orgs/acme/user/bob')).toMatchObject({
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
      expect((await call('bob', 'GET', '/orgs/acme/user/bob')).body.email).toBe('bob@example.com');
      expect((await call('root', 'GET', '/orgs/acme/user/bob')).body.email).toBe('bob@example.com');
      expect(await status('carol', 'GET', '/orgs/acme/user/nobody')).toBe(400);
      expect(await status('carol', 'GET', '/orgs/acme/user/idle')).toBe(400);
      expect(await status(undefined, 'GET', '/orgs/acme/user/bob')).toBe(401);
    });

    it('is-owner: 200 with an empty body for owners, 403 for everyone else, site admins included', async () => {
      expect(await call('alice', 'GET', '/orgs/acme/is-owner')).toMatchObject({ status: 200, body: undefined });
      expect(await call('bob', 'GET', '/orgs/acme/is-owner')).toMatchObject({
        status: 403,
        body: { message: 'you are not an owner of acme' },
      });
      expect(await status('root', 'GET', '/orgs/acme/is-owner')).toBe(403);
      expect(await status(undefined, 'GET', '/orgs/acme/is-owner')).toBe(401);
    });
  });

  describe('member actions and removal', () => {
    const action = (who: string | undefined, name: string, uid?: number | string) =>
      call(who, 'POST', `/orgs/acme/members/action/${name}${uid === undefined ? '' : `?uid=${uid}`}`);

    it('public and private: one’s own membership, or anyone’s with admin:org', async () => {
      backends.orgsTeams.reset();
      expect((await action('bob', 'public', USERS.bob.id)).status).toBe(200);
      expect((await action('bob', 'private', USERS.bob.id)).status).toBe(200);
      expect(await action('bob', 'public', USERS.alice.id)).toMatchObject({ status: 403 });
      expect((await action('alice', 'public', USERS.bob.id)).status).toBe(200);
      expect(asked('setMemberVisibility')).toEqual([
        { orgId: ACME.id, userId: USERS.bob.id, public: true },
        { orgId: ACME.id, userId: USERS.bob.id, public: false },
        { orgId: ACME.id, userId: USERS.bob.id, public: true },
      ]);
    });

    it('answers 401, 403 for non-members, 400 for a missing or bad uid and an unknown action', async () => {
      backends.orgsTeams.reset();
      expect((await action(undefined, 'public', USERS.bob.id)).status).toBe(401);
      expect((await action('carol', 'public', USERS.carol.id)).status).toBe(403);
      expect((await action('bob', 'public')).status).toBe(400);
      expect((await action('bob', 'public', 'abc')).status).toBe(400);
      expect((await action('bob', 'public', -3)).status).toBe(400);
      expect(await action('bob', 'promote', USERS.bob.id)).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('unknown member action') },
      });
      expect(asked('setMemberVisibility')).toEqual([]);
    });

    it('remove takes manage_owners:org; leave takes the caller only; orgs-teams’ refusals are passed on', async () => {
      backends.orgsTeams.reset();
      expect((await action('bob', 'remove', USERS.alice.id)).status).toBe(403);
      expect((await action('bob', 'leave', USERS.alice.id)).status).toBe(403);
      expect(asked('removeMember')).toEqual([]);
      expect(await action('alice', 'remove', USERS.alice.id)).toMatchObject({
        status: 400,
        body: { message: 'alice is the last owner of acme; add another owner before removing them' },
      });
      expect((await action('alice', 'remove', USERS.carol.id)).status).toBe(404);
      expect((await action('alice', 'remove', USERS.bob.id)).status).toBe(200);
      expect((await action('bob', 'leave', USERS.bob.id)).status).toBe(200);
      expect(asked('removeMember').slice(-2)).toEqual([
        { orgId: ACME.id, userId: USERS.bob.id, username: '' },
        { orgId: ACME.id, userId: USERS.bob.id, username: '' },
      ]);
    });

    it('DELETE /orgs/{orgname}/members/{username} takes manage_owners:org and names the member', async () => {
      backends.orgsTeams.reset();
      expect(await status(undefined, 'DELETE', '/orgs/acme/members/bob')).toBe(401);
      expect(await status('bob', 'DELETE', '/orgs/acme/members/alice')).toBe(403);
      expect(await status('carol', 'DELETE', '/orgs/acme/members/bob')).toBe(403);
      expect(asked('removeMember')).toEqual([]);
      expect(await status('alice', 'DELETE', '/orgs/acme/members/bob')).toBe(204);
      expect(await status('root', 'DELETE', '/orgs/acme/members/bob')).toBe(204);
      expect(asked('removeMember')).toEqual([
        { orgId: ACME.id, userId: 0, username: 'bob' },
        { orgId: ACME.id, userId: 0, username: 'bob' },
      ]);
      expect(await call('alice', 'DELETE', '/orgs/acme/members/alice')).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('last owner') },
      });
      expect(await status('alice', 'DELETE', '/orgs/acme/members/carol')).toBe(404);
    });
  });
});
