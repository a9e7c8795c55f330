import { NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The audit trail at the edge (docs/audit.md): every successful change is sent to orgs-teams with who made it, the
// operation, the route, the path changed, the status, the request id and the client address, and nothing the request
// carried (so no password or token); a refused change and a read send nothing. Site admins list the trail, filtered
// and paged; nobody else may. orgs-teams' filtering, order and counting: apps/orgs-teams/test/audit.int.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const ALICE = orgsTeamsV1.User.fromPartial({ id: 5, login: 'alice', active: true, allowCreateOrganization: true });
const USERS: Record<string, orgsTeamsV1.User> = { root: ROOT, alice: ALICE };
const TOKEN_SECRET = 'f'.repeat(40);
const AUDITED = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'audited', visibility: 'public' });

describe('the audit trail at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** Every event the gateway sent orgs-teams, one at a time or together, in the order they came. */
  const sent: orgsTeamsV1.AuditEvent[] = [];
  const recorded = () => sent;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        audit: {
          recordAuditEvent: async (event) => {
            sent.push(event);
            return {};
          },
          recordAuditEvents: async ({ events }) => {
            sent.push(...events);
            return {};
          },
        },
        identity: {
          authenticate: tokenIsLogin(USERS),
          authenticateBasic: async ({ username, password }) => {
            if (username !== 'alice' || password !== 'alice-password') throw new NotAuthenticatedError('invalid credentials');
            return orgsTeamsV1.AuthenticateResponse.fromPartial({ user: ALICE });
          },
          createToken: async ({ name }) => ({
            id: 3,
            name,
            sha1: TOKEN_SECRET,
            tokenLastEight: TOKEN_SECRET.slice(-8),
            accessScopes: ['all'],
          }),
          createUser: async ({ username, email }) => orgsTeamsV1.User.fromPartial({ id: 6, login: username, email, active: true }),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (name !== 'audited') throw new NotFoundError(`organization ${name} does not exist`);
            return AUDITED;
          },
          createOrg: async ({ username }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username, visibility: 'public' }),
          editOrg: async () => AUDITED,
          createTeam: async ({ name }) => orgsTeamsOrgsV1.Team.fromPartial({ id: 42, name, organization: AUDITED }),
          getTeam: async ({ teamId }) => orgsTeamsOrgsV1.Team.fromPartial({ id: teamId, name: 'ops', organization: AUDITED }),
        },
      },
      authz: {
        authz: {
          // alice may do anything to her organization, root anything at all; only root holds permissions on the site.
          checkPermission: async ({ userId, objectId }) => ({ allowed: userId === ROOT.id || objectId !== 0, dependsOn: [] }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (
    authorization: string | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const as = (who: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(`token ${who}`, method, path, body, headers);

  it('sends who changed what, with the route, the status, the request id and the client, for each change and nothing else', async () => {
    const basic = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
    expect((await call(basic, 'POST', '/users/alice/tokens', { name: 'cli' })).status).toBe(201);
    expect((await as('alice', 'POST', '/orgs', { username: 'audited' }, { 'x-request-id': 'made-the-org' })).status).toBe(201);
    expect((await as('alice', 'POST', '/orgs/audited/teams', { name: 'ops', type: 'general' })).status).toBe(201);
    expect((await as('alice', 'PATCH', '/orgs/audited', { description: 'now described' })).status).toBe(200);
    expect((await as('alice', 'DELETE', '/teams/42')).status).toBe(204);
    // A refused change and a read send nothing.
    expect((await as('alice', 'DELETE', '/orgs/not-hers')).status).toBe(404);
    expect((await as('alice', 'POST', '/admin/users', { username: 'x', email: 'x@example.com', password: 'x-password' })).status).toBe(403);
    expect((await as('alice', 'GET', '/orgs/audited')).status).toBe(200);
    expect((await as('root', 'POST', '/admin/users', { username: 'bob', email: 'bob@example.com', password: 'bob-password' })).status).toBe(
      201,
    );

    await eventually(async () => recorded().length >= 6, 5_000);
    const events = recorded();
    expect(events.map((e) => [e.actorLogin, e.action, e.method, e.route, e.target, e.status])).toEqual([
      ['alice', 'userCreateToken', 'POST', '/users/{username}/tokens', '/users/alice/tokens', 201],
      ['alice', 'orgCreate', 'POST', '/orgs', '/orgs', 201],
      ['alice', 'orgCreateTeam', 'POST', '/orgs/{orgname}/teams', '/orgs/audited/teams', 201],
      ['alice', 'orgEdit', 'PATCH', '/orgs/{orgname}', '/orgs/audited', 200],
      ['alice', 'orgDeleteTeam', 'DELETE', '/teams/{teamid}', '/teams/42', 204],
      ['root', 'adminCreateUser', 'POST', '/admin/users', '/admin/users', 201],
    ]);
    expect(events[1]).toMatchObject({ requestId: 'made-the-org', actorId: ALICE.id, client: expect.stringMatching(/127\.0\.0\.1/) });
    expect(new Set(events.map((e) => e.id)).size).toBe(6);
    // Nothing the requests carried: no password, no token, neither the one presented nor the one answered.
    const everything = JSON.stringify(events);
    expect(everything).not.toMatch(/alice-password|bob-password|now described/);
    expect(everything).not.toContain(TOKEN_SECRET);
  });

  it('lists the trail for site admins with the filters asked of orgs-teams, X-Total-Count and Link', async () => {
    const at = Date.parse('2026-10-01T12:00:00Z');
    backends.orgsTeams.answer('audit', 'listAuditEvents', async () => ({
      events: [
        orgsTeamsV1.AuditEvent.fromPartial({
          id: 'e1',
          timeUnixMs: at,
          actorId: 5,
          actorLogin: 'alice',
          action: 'orgEdit',
          method: 'PATCH',
          route: '/orgs/{orgname}',
          target: '/orgs/audited',
          status: 200,
          requestId: 'r1',
          client: '127.0.0.1',
        }),
      ],
      total: 5,
    }));
    const since = '2026-10-01T00:00:00Z';
    const listed = await as(
      'root',
      'GET',
      `/admin/audit-events?actor=alice&action=orgEdit&target=/orgs/audited&since=${since}&limit=1&page=2`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      {
        id: 'e1',
        time: '2026-10-01T12:00:00.000Z',
        actor: { id: 5, login: 'alice' },
        action: 'orgEdit',
        method: 'PATCH',
        route: '/orgs/{orgname}',
        target: '/orgs/audited',
        org: '',
        status: 200,
        request_id: 'r1',
        client: '127.0.0.1',
      },
    ]);
    expect(listed.headers.get('x-total-count')).toBe('5');
    expect(listed.headers.get('link')).toMatch(/page=3[^>]*>; rel="next"/);
    expect(backends.orgsTeams.callsTo('audit', 'listAuditEvents').at(-1)).toMatchObject({
      actor: 'alice',
      action: 'orgEdit',
      targetPrefix: '/orgs/audited',
      sinceUnixMs: Date.parse(since),
      untilUnixMs: 0,
      page: 2,
      limit: 1,
    });
  });

  it('refuses a time that is not RFC3339 with 400, before asking orgs-teams', async () => {
    const asked = backends.orgsTeams.callsTo('audit', 'listAuditEvents').length;
    expect((await as('root', 'GET', '/admin/audit-events?since=yesterday')).status).toBe(400);
    expect(backends.orgsTeams.callsTo('audit', 'listAuditEvents')).toHaveLength(asked);
  });

  it('is for site admins only', async () => {
    const asked = backends.orgsTeams.callsTo('audit', 'listAuditEvents').length;
    expect((await call(undefined, 'GET', '/admin/audit-events')).status).toBe(401);
    expect((await as('alice', 'GET', '/admin/audit-events')).status).toBe(403);
    expect(backends.orgsTeams.callsTo('audit', 'listAuditEvents')).toHaveLength(asked);
  });
});
