import { keptServiceReads, ORGS_TEAMS_OTHER_CHANGED, SIGNIN_CHANGED } from '@platform/bus';
import { orgTokensV1, orgsTeamsV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptOrgsTeams, keptSyncTokens, ORGS_TEAMS_READS } from './clients';

// What shows sign-in state, as orgs-teams' readers keep it: a token list, the site admin's user list with lockouts, a
// sync token once its secret is gone. Each is asked again by the very next request after the sign-in notice (even one
// still on its way); who a token belongs to is not; a lockout is shown no longer than it lasts; a secret reaches one
// answer only.

const tokenInfo = (id: number, lastUsedUnix: number) => orgsTeamsV1.TokenInfo.fromPartial({ id, name: `t${id}`, lastUsedUnix });

function orgsTeams() {
  const asked: string[] = [];
  const state = { lastUsed: 0, lockedUntil: 0, secret: 'shown-once' };
  return {
    asked,
    state,
    identity: {
      authenticate: async (q: orgsTeamsV1.AuthenticateRequest) => (
        asked.push(`token ${q.token}`),
        orgsTeamsV1.AuthenticateResponse.fromPartial({ user: orgsTeamsV1.User.fromPartial({ id: 1, login: 'u1' }) })
      ),
      getAccounts: async () => orgsTeamsV1.GetUsersResponse.fromPartial({}),
      listTokens: async (q: orgsTeamsV1.ListTokensRequest) => (
        asked.push(`tokens of ${q.userId}`),
        orgsTeamsV1.ListTokensResponse.fromPartial({ tokens: [tokenInfo(5, state.lastUsed)] })
      ),
      searchUsers: async (q: orgsTeamsV1.SearchUsersRequest) => (
        asked.push(`users${q.withLockout ? ' with lockouts' : ''}`),
        orgsTeamsV1.SearchUsersResponse.fromPartial({
          users: [orgsTeamsV1.User.fromPartial({ id: 1, signInLockedUntilUnix: state.lockedUntil })],
          total: 1,
        })
      ),
    },
    organizations: {
      getOrg: async () => {
        throw new Error('not asked');
      },
      getTeam: async () => {
        throw new Error('not asked');
      },
      listTeams: async () => {
        throw new Error('not asked');
      },
      searchTeams: async () => {
        throw new Error('not asked');
      },
    },
    orgTokens: {
      getSyncToken: async (q: orgTokensV1.OrgTokensRequest) => {
        asked.push(`sync token of ${q.orgId}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        const secretAccessKey = state.secret;
        state.secret = '';
        return orgTokensV1.ManagerApiToken.fromPartial({ orgId: q.orgId, accessKeyId: '9', secretAccessKey });
      },
    },
  };
}

async function setUp() {
  const app = orgsTeams();
  const kept = keptOrgsTeams(app, { reader: 'test', ttlMs: 60_000, tokenTtlMs: 60_000 });
  const sync = keptSyncTokens(app.orgTokens, { reader: 'test', ttlMs: 60_000 });
  const { clients, readModel } = keptServiceReads(
    // The services this test does not read, with no calls.
    { claims: {}, siteSettings: {}, avatars: {}, audit: {}, serviceAccounts: {}, ...kept.clients, orgTokens: sync.client },
    ORGS_TEAMS_READS as never,
    {
      name: 'test.orgs-teams',
      ttlMs: 60_000,
    },
  );
  const bus = new LaterBus();
  const stops = await Promise.all([kept.readModel, sync.readModel, readModel].map((model) => model.follow(bus)));
  return { app, clients, bus, stop: () => Promise.all(stops.map((stop) => stop())) };
}

describe("orgs-teams' sign-in state, as its readers keep it", () => {
  afterEach(() => jest.useRealTimers());

  it('keeps a token list until the sign-in notice, which leaves who a token belongs to kept', async () => {
    const { app, clients, bus, stop } = await setUp();
    const list = () => clients.identity.listTokens({ userId: 1 });
    await clients.identity.authenticate({ token: 'a' });
    expect((await list()).tokens[0].lastUsedUnix).toBe(0);
    expect((await list()).tokens[0].lastUsedUnix).toBe(0);
    expect(app.asked).toEqual(['token a', 'tokens of 1']);
    // The token was used through another replica; its notice is still on its way.
    app.state.lastUsed = 1_700_000_000;
    await bus.notify(SIGNIN_CHANGED, { userIds: [1] });
    expect((await list()).tokens[0].lastUsedUnix).toBe(1_700_000_000);
    await clients.identity.authenticate({ token: 'a' });
    expect(app.asked).toEqual(['token a', 'tokens of 1', 'tokens of 1']);
    await stop();
  });

  it('shows a lockout no longer than it lasts, and its beginning at once', async () => {
    // On fake time (Date for the lockout's end, performance.now() for the cache's own lifetime: both jest's), a
    // moment past a whole second, since the cache takes an answer stamped at 0 for one stamped never.
    jest.useFakeTimers({ now: 1_790_000_000_000, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    jest.advanceTimersByTime(1);
    const { app, clients, bus, stop } = await setUp();
    const users = async () =>
      (await clients.identity.searchUsers(orgsTeamsV1.SearchUsersRequest.fromPartial({ withLockout: true }))).users[0];
    expect((await users()).signInLockedUntilUnix).toBe(0);
    // Locked out through another replica: the failure that locked it is announced.
    app.state.lockedUntil = 1_790_000_001; // 999 ms from now
    await bus.notify(SIGNIN_CHANGED, { userIds: [1] });
    expect((await users()).signInLockedUntilUnix).toBe(app.state.lockedUntil);
    expect((await users()).signInLockedUntilUnix).toBe(app.state.lockedUntil);
    expect(app.asked).toEqual(['users with lockouts', 'users with lockouts']);
    // The lockout ends with no write: the kept answer ends with it, shown to its last millisecond and not after.
    app.state.lockedUntil = 0;
    await jest.advanceTimersByTimeAsync(998);
    expect((await users()).signInLockedUntilUnix).toBe(1_790_000_001);
    await jest.advanceTimersByTimeAsync(2);
    expect((await users()).signInLockedUntilUnix).toBe(0);
    expect(app.asked).toHaveLength(3);
    await stop();
  });

  it("gives a sync token's secret to one answer only, then keeps the token until it is replaced", async () => {
    const { app, clients, bus, stop } = await setUp();
    const read = () => clients.orgTokens.getSyncToken({ orgId: 7 });
    // Two reads at once: each asks, so the secret, dropped by the first, reaches one of them.
    const both = await Promise.all([read(), read()]);
    expect(both.map((t) => t.secretAccessKey).sort()).toEqual(['', 'shown-once']);
    expect((await read()).secretAccessKey).toBe('');
    expect(app.asked).toEqual(['sync token of 7', 'sync token of 7']);
    // Replaced through another replica: a new secret, seen by the very next read.
    app.state.secret = 'new-secret';
    await bus.notify(ORGS_TEAMS_OTHER_CHANGED, {});
    expect((await read()).secretAccessKey).toBe('new-secret');
    expect((await read()).secretAccessKey).toBe('');
    await stop();
  });
});
