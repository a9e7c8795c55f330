import { NotFoundError } from '@platform/errors';
import { authzRolesV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Bounded input at the edge (docs/limits.md): an over-long text is refused at once with a short message naming the
// field and its limit, before any backend is asked, so it is never stored and never slows anyone else down. A
// 100,000-character objectType once reached authz and came back in its error, whose oversized gRPC trailer stalled
// the gateway's shared connection to authz: that request answered 504 after 10 s, and every other tenant's
// authorization calls waited or failed with it. The backends' own limits: apps/authz/src/roles/roles.int.test.ts,
// apps/orgs-teams/test/limits.int.test.ts.

const OLIVIA = orgsTeamsV1.User.fromPartial({ id: 1, login: 'olivia', active: true, allowCreateOrganization: true });
const OTTO = orgsTeamsV1.User.fromPartial({ id: 2, login: 'otto', active: true, allowCreateOrganization: true });
/** olivia owns acme, otto globex. */
const ORGS: Record<string, { id: number; owner: number }> = { acme: { id: 10, owner: OLIVIA.id }, globex: { id: 11, owner: OTTO.id } };
const org = (name: string) => orgsTeamsOrgsV1.Organization.fromPartial({ id: ORGS[name].id, username: name, visibility: 'public' });
const ROLE = authzRolesV1.Role.fromPartial({ id: 5, orgId: ORGS.acme.id, name: 'R', description: '' });

describe('bounded input at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** Every write any backend was asked for, and every question authz was asked about objects. */
  const asked = () => [
    ...backends.authz.callsTo('roles', 'allowedPermissions').flatMap((r) => r.objects.map((o: { objectType: string }) => o.objectType)),
    ...backends.authz.callsTo('roles', 'createRole').map((r) => `createRole ${r.name.length}/${r.description.length}`),
    ...backends.authz.callsTo('roles', 'updateRole').map(() => 'updateRole'),
    ...backends.orgsTeams.callsTo('organizations', 'createOrg').map((r) => `createOrg ${r.username}`),
    ...backends.orgsTeams.callsTo('organizations', 'editOrg').map((r) => `editOrg ${r.location?.length}`),
    ...backends.orgsTeams.callsTo('organizations', 'createTeam').map((r) => `createTeam ${r.name}`),
  ];

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => ({
            user: token === 'otto' ? OTTO : OLIVIA,
            tokenId: 1,
            scope: '',
            scopeAccountId: 0,
            accessScopes: ['all'],
          }),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (!ORGS[name]) throw new NotFoundError(`organization ${name} does not exist`);
            return org(name);
          },
          createOrg: async ({ username }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 12, username, visibility: 'public' }),
          editOrg: async ({ orgId }) => org(orgId === ORGS.acme.id ? 'acme' : 'globex'),
        },
      },
      authz: {
        authz: {
          // Each owner may do anything to its organization; olivia to acme's role too.
          checkPermission: async ({ userId, objectId }) => ({
            allowed:
              Object.values(ORGS).some((o) => o.id === objectId && o.owner === userId) || (objectId === ROLE.id && userId === OLIVIA.id),
            dependsOn: [],
          }),
        },
        roles: {
          allowedPermissions: async ({ objects }) => ({
            objects: objects.map((o) => ({ objectType: o.objectType, objectId: o.objectId, allowedPermissions: ['owner'] })),
          }),
          createRole: async ({ orgId, name, description }) => authzRolesV1.Role.fromPartial({ id: 6, orgId, name, description }),
          getRole: async ({ id }) => {
            if (id !== ROLE.id) throw new NotFoundError(`role ${id} does not exist`);
            return ROLE;
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });
  beforeEach(() => backends.authz.reset());

  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${who}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** A reply's message is short and repeats none of the input. */
  const expectShortMessage = (res: { body: any }, input: string) => {
    expect(typeof res.body.message).toBe('string');
    expect(res.body.message.length).toBeLessThan(300);
    expect(JSON.stringify(res.body)).not.toContain(input.slice(0, 200));
  };

  describe('a 100,000-character objectType', () => {
    const huge = 'x'.repeat(100_000);

    // "At once" is what authz was asked (nothing of it), not a time: a busy machine makes any bound a race.
    it('answers 400 without asking authz, quoting none of it, while another tenant’s authz calls all answer 200', async () => {
      const big = () =>
        call('olivia', 'POST', '/authz/objects/allowed-permissions?org=acme', [{ objectType: huge, objectID: ORGS.acme.id }]);
      const otherTenant = async () => {
        const replies = [];
        for (let i = 0; i < 10; i++) {
          replies.push(
            await call('otto', 'POST', '/authz/objects/allowed-permissions?org=globex', [
              { objectType: 'organization', objectID: ORGS.globex.id },
            ]),
            await call('otto', 'GET', `/authz/objects/organization/${ORGS.globex.id}/allowed-permissions?org=globex`),
            await call('otto', 'GET', '/authz/roles?org=globex'),
          );
        }
        return replies;
      };
      const [others, ...bigs] = await Promise.all([otherTenant(), big(), big(), big(), big(), big()]);

      // One assertion, so a failure shows both sides: what the big requests got and what the other tenant got.
      expect({
        big: bigs.map((res) => ({ status: res.status, message: res.body?.message })),
        otherTenant: others.map((r) => r.status),
      }).toEqual({
        big: bigs.map(() => ({ status: 400, message: 'objectType: at most 32 characters' })),
        otherTenant: others.map(() => 200),
      });
      for (const res of bigs) expectShortMessage(res, huge);
      expect(others[0].body).toEqual([{ objectType: 'organization', objectID: ORGS.globex.id, allowedPermissions: ['owner'] }]);
      // authz was asked only the other tenant's questions.
      expect(new Set(asked())).toEqual(new Set(['organization']));
    }, 30_000);

    it('answers 400 in a batch (naming the element) and in the path form too', async () => {
      const batch = await call('olivia', 'POST', '/authz/objects/allowed-permissions?org=acme', [
        { objectType: 'organization', objectID: ORGS.acme.id },
        { objectType: huge.slice(0, 5_000), objectID: ORGS.acme.id },
      ]);
      expect(batch).toEqual({
        status: 400,
        body: {
          message: 'objectType[1]: at most 32 characters',
          errors: [{ field: 'objectType[1]', description: 'at most 32 characters' }],
          url: expect.any(String),
        },
      });
      const path = await call('olivia', 'GET', `/authz/objects/${huge.slice(0, 5_000)}/${ORGS.acme.id}/allowed-permissions?org=acme`);
      expect(path.status).toBe(400);
      expectShortMessage(path, huge);
      const over = await call('olivia', 'GET', `/authz/objects/${'y'.repeat(33)}/${ORGS.acme.id}/allowed-permissions?org=acme`);
      expect(over).toMatchObject({ status: 400, body: { message: 'objectType: at most 32 characters' } });
      expect(asked()).toEqual([]);
    });
  });

  describe('custom role texts', () => {
    it('refuses a 1 MB description with 400 naming the field and its limit, and a body over 1 MiB with 413, asking authz nothing', async () => {
      const res = await call('olivia', 'POST', '/authz/roles?org=acme', {
        name: 'Big',
        description: 'd'.repeat(1_000_000),
        permissions: [],
      });
      expect(res).toEqual({
        status: 400,
        body: {
          message: 'description: at most 255 characters',
          errors: [{ field: 'description', description: 'at most 255 characters' }],
          url: expect.any(String),
        },
      });
      const larger = await call('olivia', 'POST', '/authz/roles?org=acme', {
        name: 'Big',
        description: 'd'.repeat(2 << 20),
        permissions: [],
      });
      expect(larger).toEqual({ status: 413, body: { message: 'request body too large', url: expect.any(String) } });
      expect(asked()).toEqual([]);
    });

    it('accepts texts at their limits and refuses one character more, on create and on update', async () => {
      expect(
        (await call('olivia', 'POST', '/authz/roles?org=acme', { name: 'n'.repeat(255), description: 'd'.repeat(255), permissions: [] }))
          .status,
      ).toBe(201);
      const over = { name: 'R', permissions: [] };
      expect((await call('olivia', 'POST', '/authz/roles?org=acme', { ...over, name: 'n'.repeat(256) })).status).toBe(400);
      expect((await call('olivia', 'POST', '/authz/roles?org=acme', { ...over, description: 'd'.repeat(256) })).status).toBe(400);
      const badPermission = await call('olivia', 'POST', '/authz/roles?org=acme', {
        ...over,
        permissions: [{ namespace: 'o'.repeat(100_000), action: 'edit' }],
      });
      // authz refuses it when asked whether the caller may give it (apps/authz/test/grants.int.test.ts names its limit).
      expect(badPermission.status).toBe(400);
      expectShortMessage(badPermission, 'o'.repeat(1000));
      const update = await call('olivia', 'PUT', `/authz/roles/${ROLE.id}?org=acme`, { description: 'd'.repeat(1_000_000) });
      expect(update).toMatchObject({ status: 400, body: { message: 'description: at most 255 characters' } });
      // Only the role at the limits was written.
      expect(asked()).toEqual(['createRole 255/255']);
    });
  });

  describe('organizations, teams and names in paths', () => {
    beforeEach(() => backends.orgsTeams.reset());

    it('refuses over-long organization texts with 422 (the route’s status for a malformed body), asking orgs-teams nothing', async () => {
      const create = await call('olivia', 'POST', '/orgs', { username: 'initech', description: 'd'.repeat(1_000_000) });
      expect(create.status).toBe(422);
      expect(create.body.errors).toEqual([{ field: 'body.description', description: expect.stringMatching(/255/) }]);
      expectShortMessage(create, 'd'.repeat(1000));
      expect((await call('olivia', 'POST', '/orgs', { username: 'u'.repeat(41) })).status).toBe(422);
      expect((await call('olivia', 'PATCH', '/orgs/acme', { location: 'l'.repeat(51) })).status).toBe(422);
      expect(asked()).toEqual([]);
      expect((await call('olivia', 'PATCH', '/orgs/acme', { location: 'l'.repeat(50) })).status).toBe(200);
      expect(asked()).toEqual(['editOrg 50']);
    });

    it('refuses an over-long team description with 422 and an over-long team name with 400, as the route answers invalid ones', async () => {
      const team = { name: 'devs', type: 'general', permission: 'read' };
      expect((await call('olivia', 'POST', '/orgs/acme/teams', { ...team, description: 'd'.repeat(256) })).status).toBe(422);
      const longName = await call('olivia', 'POST', '/orgs/acme/teams', { ...team, name: 'n'.repeat(100_000) });
      expect(longName).toMatchObject({ status: 400, body: { message: 'name: at most 255 characters' } });
      expect(asked()).toEqual([]);
    });

    it('answers an organization name longer than any as an unknown one (404 in the path, 403 in ?org=), quoting only its start', async () => {
      const long = 'a'.repeat(10_000);
      for (const path of [`/orgs/${long}`, `/orgs/${long}/teams`]) {
        const res = await call('olivia', 'GET', path);
        expect(res.status).toBe(404);
        expectShortMessage(res, long);
      }
      const refused = await call('olivia', 'GET', `/authz/roles?org=${long}`);
      expect(refused.status).toBe(403);
      expectShortMessage(refused, long);
    });
  });
});
