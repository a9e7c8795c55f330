import { bootTestPlatform, type Reply, type TestPlatform } from './harness';

// Bounded input (docs/limits.md) over HTTP: an over-long text is refused at once with a short message that
// names the field and its limit, is never stored, and never slows down anyone else. A
// 100,000-character objectType used to be copied into the authz error, whose oversized gRPC trailer stalled
// the gateway's shared connection to authz: the request answered 504 after 10 s, and every other tenant's
// authorization calls waited or failed with it.

describe('bounded input over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let acme: number;
  let globex: number;

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const name of ['olivia', 'otto']) await harness.signUp(name);
    acme = (await api('olivia', 'POST', '/orgs', { username: 'acme' })).body.id;
    globex = (await api('otto', 'POST', '/orgs', { username: 'globex' })).body.id;
    expect([acme, globex]).toEqual([expect.any(Number), expect.any(Number)]);
  }, 120_000);
  afterAll(() => harness?.stop());

  /** A reply's message is short and repeats none of the input. */
  const expectShortMessage = (res: Reply, input: string) => {
    expect(typeof res.body.message).toBe('string');
    expect(res.body.message.length).toBeLessThan(300);
    expect(JSON.stringify(res.body)).not.toContain(input.slice(0, 200));
  };

  describe('a 100,000-character objectType', () => {
    const huge = 'x'.repeat(100_000);

    it('answers 400 at once, quoting none of it, while another tenant’s authz calls all answer 200', async () => {
      const timed = async (call: Promise<Reply>) => {
        const started = Date.now();
        const res = await call;
        return { res, ms: Date.now() - started };
      };
      const big = () => timed(api('olivia', 'POST', '/authz/objects/allowed-permissions?org=acme', [{ objectType: huge, objectID: acme }]));
      // The other tenant keeps checking its own organization the whole time the big requests run.
      const otherTenant = async () => {
        const replies: Reply[] = [];
        for (let i = 0; i < 10; i++) {
          replies.push(
            await api('otto', 'POST', '/authz/objects/allowed-permissions?org=globex', [{ objectType: 'organization', objectID: globex }]),
            await api('otto', 'GET', `/authz/objects/organization/${globex}/allowed-permissions?org=globex`),
            await api('otto', 'GET', '/authz/roles?org=globex'),
          );
        }
        return replies;
      };
      const [others, ...bigs] = await Promise.all([otherTenant(), big(), big(), big(), big(), big()]);

      // One assertion, so a failure shows both sides: what the big requests got and what the other tenant got.
      expect({
        big: bigs.map(({ res, ms }) => ({ status: res.status, message: res.body?.message, fast: ms < 2_000 })),
        otherTenant: others.map((r) => r.status),
      }).toEqual({
        big: bigs.map(() => ({ status: 400, message: 'objectType: at most 32 characters', fast: true })),
        otherTenant: others.map(() => 200),
      });
      for (const { res } of bigs) expectShortMessage(res, huge);
      expect(others[0].body).toEqual([
        { objectType: 'organization', objectID: globex, allowedPermissions: expect.arrayContaining(['owner']) },
      ]);
    }, 60_000);

    it('answers 400 in a batch (naming the element) and in the path form too', async () => {
      const batch = await api('olivia', 'POST', '/authz/objects/allowed-permissions?org=acme', [
        { objectType: 'organization', objectID: acme },
        { objectType: huge.slice(0, 5_000), objectID: acme },
      ]);
      expect(batch).toEqual({
        status: 400,
        body: {
          message: 'objectType[1]: at most 32 characters',
          errors: [{ field: 'objectType[1]', description: 'at most 32 characters' }],
          url: expect.any(String),
        },
      });
      const path = await api('olivia', 'GET', `/authz/objects/${huge.slice(0, 5_000)}/${acme}/allowed-permissions?org=acme`);
      expect(path.status).toBe(400);
      expectShortMessage(path, huge);
      // Just over the limit, the type is named in the message, cut to its start.
      const over = await api('olivia', 'GET', `/authz/objects/${'y'.repeat(33)}/${acme}/allowed-permissions?org=acme`);
      expect(over).toMatchObject({ status: 400, body: { message: 'objectType: at most 32 characters' } });
    });
  });

  describe('custom role texts', () => {
    const roles = () => api('olivia', 'GET', '/authz/roles?org=acme');

    it('refuses a 1 MB description with 400 naming the field and its limit, storing nothing', async () => {
      const description = 'd'.repeat(1_000_000);
      const res = await api('olivia', 'POST', '/authz/roles?org=acme', { name: 'Big', description, permissions: [] });
      expect(res).toEqual({
        status: 400,
        body: {
          message: 'description: at most 255 characters',
          errors: [{ field: 'description', description: 'at most 255 characters' }],
          url: expect.any(String),
        },
      });
      expect(await roles()).toEqual({ status: 200, body: [] });
      // A body over the gateway's 1 MiB JSON limit is 413, before anything is parsed.
      const larger = await api('olivia', 'POST', '/authz/roles?org=acme', {
        name: 'Big',
        description: 'd'.repeat(2 << 20),
        permissions: [],
      });
      expect(larger).toEqual({ status: 413, body: { message: 'request body too large', url: expect.any(String) } });
      expect(await roles()).toEqual({ status: 200, body: [] });
    });

    it('accepts texts at their limits and refuses one character more, on create and on update', async () => {
      const created = await api('olivia', 'POST', '/authz/roles?org=acme', {
        name: 'n'.repeat(255),
        description: 'd'.repeat(255),
        permissions: [],
      });
      expect(created.status).toBe(201);
      const over = { name: 'R', permissions: [] };
      expect((await api('olivia', 'POST', '/authz/roles?org=acme', { ...over, name: 'n'.repeat(256) })).status).toBe(400);
      expect((await api('olivia', 'POST', '/authz/roles?org=acme', { ...over, description: 'd'.repeat(256) })).status).toBe(400);
      const badPermission = await api('olivia', 'POST', '/authz/roles?org=acme', {
        ...over,
        permissions: [{ namespace: 'o'.repeat(100_000), action: 'edit' }],
      });
      expect(badPermission).toMatchObject({ status: 400, body: { message: 'permissions[].namespace: at most 64 characters' } });
      const update = await api('olivia', 'PUT', `/authz/roles/${created.body.id}?org=acme`, { description: 'd'.repeat(1_000_000) });
      expect(update).toMatchObject({ status: 400, body: { message: 'description: at most 255 characters' } });
      expect((await roles()).body).toEqual([created.body]);
    });
  });

  describe('organizations, teams and names in paths', () => {
    it('refuses over-long organization texts with 422 (the route’s status for a malformed body), storing nothing', async () => {
      const create = await api('olivia', 'POST', '/orgs', { username: 'initech', description: 'd'.repeat(1_000_000) });
      expect(create.status).toBe(422);
      expect(create.body.errors).toEqual([{ field: 'body.description', description: expect.stringMatching(/255/) }]);
      expectShortMessage(create, 'd'.repeat(1000));
      expect((await api('olivia', 'GET', '/orgs/initech')).status).toBe(404);
      expect((await api('olivia', 'POST', '/orgs', { username: 'u'.repeat(41) })).status).toBe(422);
      expect((await api('olivia', 'PATCH', '/orgs/acme', { location: 'l'.repeat(51) })).status).toBe(422);
      expect((await api('olivia', 'PATCH', '/orgs/acme', { location: 'l'.repeat(50) })).status).toBe(200);
    });

    it('refuses an over-long team description with 422 and an over-long team name with 400, as the route answers invalid ones', async () => {
      const team = { name: 'devs', type: 'general', permission: 'read' };
      expect((await api('olivia', 'POST', '/orgs/acme/teams', { ...team, description: 'd'.repeat(256) })).status).toBe(422);
      const longName = await api('olivia', 'POST', '/orgs/acme/teams', { ...team, name: 'n'.repeat(100_000) });
      expect(longName).toMatchObject({ status: 400, body: { message: 'name: at most 255 characters' } });
      expect((await api('olivia', 'GET', '/orgs/acme/teams')).body.map((t: { name: string }) => t.name)).toEqual(['Owners']);
    });

    it('answers an organization name longer than any as an unknown one (404 in the path, 403 in ?org=), quoting only its start', async () => {
      const long = 'a'.repeat(10_000);
      for (const path of [`/orgs/${long}`, `/orgs/${long}/teams`]) {
        const res = await api('olivia', 'GET', path);
        expect(res.status).toBe(404);
        expectShortMessage(res, long);
      }
      const refused = await api('olivia', 'GET', `/authz/roles?org=${long}`);
      expect(refused.status).toBe(403);
      expectShortMessage(refused, long);
    });
  });
});
