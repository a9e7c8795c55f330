import { eventually } from '@platform/testing';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The audit trail (docs/audit.md): every successful change made through the API is recorded with who made it, the
 * operation, the path changed, the status, the request id and the client address; site admins list it newest first,
 * filtered and paged; nobody else may; no request body (so no password or token) reaches it.
 */
describe('the audit trail of administrative changes', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform();
    await t.signUp('alice');
  }, 120_000);
  afterAll(() => t?.stop());

  type Event = { action: string; method: string; route: string; target: string; status: number; request_id: string; actor: { login: string }; org: string };
  const trail = async (query: string) => {
    const res = await t.api('root', 'GET', `/admin/audit-events${query}`);
    expect(res.status).toBe(200);
    return { events: res.body as Event[], total: Number(res.headers.get('x-total-count')), link: res.headers.get('link') };
  };

  it('records who created, changed and deleted what, newest first, with the request id', async () => {
    expect((await t.api('alice', 'POST', '/orgs', { username: 'audited' }, { 'x-request-id': 'made-the-org' })).status).toBe(201);
    const team = await t.api('alice', 'POST', '/orgs/audited/teams', { name: 'ops', type: 'general' });
    expect(team.status).toBe(201);
    expect((await t.api('alice', 'PATCH', '/orgs/audited', { description: 'now described' })).status).toBe(200);
    expect((await t.api('alice', 'DELETE', `/teams/${team.body.id}`)).status).toBe(204);
    // A refused change and a read leave nothing.
    expect((await t.api('alice', 'DELETE', '/orgs/not-hers')).status).toBeGreaterThanOrEqual(400);
    expect((await t.api('alice', 'GET', '/orgs/audited')).status).toBe(200);

    await eventually(async () => (await trail('?actor=alice')).total === 5, 5_000);
    const { events } = await trail('?actor=alice');
    expect(events.map((e) => [e.action, e.method, e.route, e.target, e.status])).toEqual([
      ['orgDeleteTeam', 'DELETE', '/teams/{teamid}', `/teams/${team.body.id}`, 204],
      ['orgEdit', 'PATCH', '/orgs/{orgname}', '/orgs/audited', 200],
      ['orgCreateTeam', 'POST', '/orgs/{orgname}/teams', '/orgs/audited/teams', 201],
      ['orgCreate', 'POST', '/orgs', '/orgs', 201],
      // The harness's sign-up: alice made her token with Basic credentials.
      ['userCreateToken', 'POST', '/users/{username}/tokens', '/users/alice/tokens', 201],
    ]);
    expect(events[3]).toMatchObject({ request_id: 'made-the-org', actor: { login: 'alice' }, client: expect.stringMatching(/127\.0\.0\.1/) });
  });

  it('filters by action and target, pages with X-Total-Count and Link, and keeps no secret', async () => {
    // The site admin's user creations (the harness made alice with a password) are in the trail, the password is not.
    const created = await trail('?action=adminCreateUser');
    expect(created.events.map((e) => [e.actor.login, e.target])).toEqual([['root', '/admin/users']]);
    const everything = JSON.stringify((await trail('?limit=50')).events);
    expect(everything).not.toMatch(/alice-password|root-password/);
    for (const token of Object.values(t.tokens)) expect(everything).not.toContain(token);

    const byTarget = await trail('?target=/orgs/audited');
    expect(byTarget.events.map((e) => e.action)).toEqual(['orgEdit', 'orgCreateTeam']);
    const paged = await trail('?actor=alice&limit=1&page=2');
    expect([paged.events.map((e) => e.action), paged.total]).toEqual([['orgEdit'], 5]);
    expect(paged.link).toMatch(/rel="next"/);
    const future = await trail(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect([future.events, future.total]).toEqual([[], 0]);
    expect((await t.api('root', 'GET', '/admin/audit-events?since=yesterday')).status).toBe(400);
  });

  it('is for site admins only', async () => {
    expect((await t.api(undefined, 'GET', '/admin/audit-events')).status).toBe(401);
    expect((await t.api('alice', 'GET', '/admin/audit-events')).status).toBe(403);
  });
});
