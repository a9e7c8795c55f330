import { randomUUID } from 'node:crypto';
import { orgsTeamsAuditV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// The audit trail as orgs-teams keeps it (docs/audit.md): events newest first, filtered by actor, action, the start
// of the target path and time, paged with the count of all that match. What the gateway sends and who may list it:
// apps/gateway/test/audit-events.test.ts.

describe('the audit trail in orgs-teams', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let audit: PromiseClient<typeof orgsTeamsAuditV1.AuditServiceService>;
  const start = Date.now() - 60_000;
  const list = (filters: Partial<orgsTeamsAuditV1.ListAuditEventsRequest>) =>
    audit.listAuditEvents({
      actor: '',
      action: '',
      targetPrefix: '',
      org: '',
      sinceUnixMs: 0,
      untilUnixMs: 0,
      page: 1,
      limit: 30,
      ...filters,
    });
  const summary = (events: orgsTeamsV1.AuditEvent[]) => events.map((e) => [e.action, e.target]);

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
    });
    audit = createClient(orgsTeamsAuditV1.AuditServiceService, app.address, { name: 'orgs-teams' });
    const event = (n: number, actorLogin: string, action: string, target: string): orgsTeamsV1.AuditEvent => ({
      id: randomUUID(),
      timeUnixMs: start + n * 1_000,
      actorId: actorLogin === 'root' ? 1 : 5,
      actorLogin,
      action,
      method: 'POST',
      route: '/x',
      target,
      org: '',
      status: 201,
      requestId: `r${n}`,
      client: '127.0.0.1',
    });
    // Stored out of time order, one at a time and together, as the gateway may send them.
    await audit.recordAuditEvent(event(3, 'alice', 'orgCreateTeam', '/orgs/audited/teams'));
    await audit.recordAuditEvents({
      events: [
        event(1, 'alice', 'userCreateToken', '/users/alice/tokens'),
        event(0, 'root', 'adminCreateUser', '/admin/users'),
        event(2, 'alice', 'orgCreate', '/orgs'),
        event(5, 'alice', 'orgDeleteTeam', '/teams/42'),
        event(4, 'alice', 'orgEdit', '/orgs/audited'),
      ],
    });
  });
  afterAll(async () => {
    audit?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it("lists an actor's changes newest first, with every field kept", async () => {
    const { events, total } = await list({ actor: 'alice' });
    expect([summary(events), total]).toEqual([
      [
        ['orgDeleteTeam', '/teams/42'],
        ['orgEdit', '/orgs/audited'],
        ['orgCreateTeam', '/orgs/audited/teams'],
        ['orgCreate', '/orgs'],
        ['userCreateToken', '/users/alice/tokens'],
      ],
      5,
    ]);
    expect(events[3]).toMatchObject({
      actorId: 5,
      actorLogin: 'alice',
      method: 'POST',
      route: '/x',
      status: 201,
      requestId: 'r2',
      client: '127.0.0.1',
    });
    expect(events[3].timeUnixMs).toBe(start + 2_000);
  });

  it('filters by action and by the start of the target path', async () => {
    expect(summary((await list({ action: 'adminCreateUser' })).events)).toEqual([['adminCreateUser', '/admin/users']]);
    expect(summary((await list({ targetPrefix: '/orgs/audited' })).events)).toEqual([
      ['orgEdit', '/orgs/audited'],
      ['orgCreateTeam', '/orgs/audited/teams'],
    ]);
    // The prefix is text, not a pattern: a wildcard in it matches only itself.
    expect((await list({ targetPrefix: '/orgs/%' })).total).toBe(0);
  });

  it('pages with the count of all that match, and keeps to the time asked', async () => {
    const paged = await list({ actor: 'alice', limit: 1, page: 2 });
    expect([summary(paged.events), paged.total]).toEqual([[['orgEdit', '/orgs/audited']], 5]);
    expect(await list({ sinceUnixMs: Date.now() + 60_000 })).toEqual({ events: [], total: 0 });
    expect(summary((await list({ sinceUnixMs: start + 4_000 })).events)).toEqual([
      ['orgDeleteTeam', '/teams/42'],
      ['orgEdit', '/orgs/audited'],
    ]);
    expect(summary((await list({ untilUnixMs: start + 1_000 })).events)).toEqual([['adminCreateUser', '/admin/users']]);
  });
});
