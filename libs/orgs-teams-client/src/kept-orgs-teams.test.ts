import { ACCOUNTS_CHANGED, keptServiceReads, ORGS_CHANGED, SIGNIN_CHANGED, TUPLES_CHANGED } from '@platform/bus';
import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptOrgsTeams, ORGS_TEAMS_READS } from './clients';

// orgs-teams' read model, as its readers keep it: tokens, accounts, organizations as a caller sees them, teams and an
// organization's list of teams. Each is asked once, asked again by the very next request after the notice that names
// it (even one still on its way), kept through another's notice, and never kept when it is a miss.

const user = (id: number, login = `u${id}`) => orgsTeamsV1.User.fromPartial({ id, login });
const org = (id: number, username: string, description = '', visibility = 'public') =>
  orgsTeamsOrgsV1.Organization.fromPartial({ id, username, description, visibility });
const team = (id: number, orgId: number, name: string) =>
  orgsTeamsOrgsV1.Team.fromPartial({ id, name, organization: orgsTeamsOrgsV1.Organization.fromPartial({ id: orgId }) });

/** orgs-teams as its readers see it: what it holds, and what it was asked. */
function orgsTeams() {
  const tokens = new Map<string, orgsTeamsV1.AuthenticateResponse>();
  const accounts = new Map<number, orgsTeamsV1.User>();
  const orgs = new Map<string, orgsTeamsOrgsV1.Organization>();
  const teams = new Map<number, orgsTeamsOrgsV1.Team>();
  const asked: string[] = [];
  return {
    tokens,
    accounts,
    orgs,
    teams,
    asked,
    identity: {
      authenticate: async (q: orgsTeamsV1.AuthenticateRequest) => (
        asked.push(`token ${q.token}`),
        tokens.get(q.token) ?? orgsTeamsV1.AuthenticateResponse.fromPartial({})
      ),
      getAccounts: async (q: orgsTeamsV1.GetUsersRequest) => (
        asked.push(`accounts ${q.ids.join(',')}`),
        orgsTeamsV1.GetUsersResponse.fromPartial({ users: q.ids.flatMap((id) => accounts.get(Number(id)) ?? []) })
      ),
    },
    organizations: {
      getOrg: async (q: orgsTeamsOrgsV1.GetOrgRequest) => {
        asked.push(`org ${q.name} for ${q.viewerId}`);
        const found = orgs.get(q.name.toLowerCase());
        if (!found) throw new NotFoundError(`organization ${q.name} does not exist`);
        return found;
      },
      getTeam: async (q: orgsTeamsOrgsV1.GetTeamRequest) => {
        asked.push(`team ${q.teamId}${q.withRoles ? ' with roles' : ''}`);
        const found = teams.get(q.teamId);
        if (!found) throw new NotFoundError(`team ${q.teamId} does not exist`);
        return found;
      },
      listTeams: async (q: orgsTeamsOrgsV1.ListTeamsRequest) => {
        asked.push(`teams of ${q.orgId}${q.page ? ` page ${q.page.page} of ${q.page.limit}` : ''}`);
        const all = [...teams.values()].filter((t) => t.organization?.id === q.orgId);
        const shown = q.page ? all.slice((q.page.page - 1) * q.page.limit, q.page.page * q.page.limit) : all;
        return orgsTeamsOrgsV1.ListTeamsResponse.fromPartial({ teams: shown, total: all.length });
      },
      searchTeams: async (q: orgsTeamsOrgsV1.SearchTeamsRequest) => {
        asked.push(`teams of ${q.orgId} named ${q.q}`);
        const found = [...teams.values()].filter((t) => t.organization?.id === q.orgId && t.name.includes(q.q));
        return orgsTeamsOrgsV1.ListTeamsResponse.fromPartial({ teams: found, total: found.length });
      },
    },
  };
}

async function setUp() {
  const app = orgsTeams();
  const { clients, readModel } = keptOrgsTeams(app, { reader: 'test', ttlMs: 60_000, tokenTtlMs: 60_000 });
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { app, clients, readModel, bus, stop };
}

describe("orgs-teams' read model", () => {
  it('knows a token once, keeps its use and scopes with its user, keeps no unknown token, and drops an account’s tokens on its notice', async () => {
    const { app, clients, readModel, bus, stop } = await setUp();
    const answer = orgsTeamsV1.AuthenticateResponse.fromPartial({
      user: user(1),
      tokenId: 2,
      scope: 'license-proxy',
      scopeAccountId: 9,
      accessScopes: ['write:organization'],
    });
    app.tokens.set('a', answer);
    app.tokens.set('c', orgsTeamsV1.AuthenticateResponse.fromPartial({ user: user(2), accessScopes: ['all'] }));
    expect(await clients.identity.authenticate({ token: 'a' })).toEqual(answer);
    expect(await clients.identity.authenticate({ token: 'a' })).toEqual(answer);
    await clients.identity.authenticate({ token: 'bad' });
    await clients.identity.authenticate({ token: 'bad' });
    await clients.identity.authenticate({ token: 'c' });
    expect(app.asked).toEqual(['token a', 'token bad', 'token bad', 'token c']);
    // Account 1's token deleted by another replica; its notice still on the way.
    app.tokens.delete('a');
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [1] });
    expect((await clients.identity.authenticate({ token: 'a' })).user).toBeUndefined();
    await clients.identity.authenticate({ token: 'c' });
    expect(app.asked.slice(4)).toEqual(['token a']);
    // A route that changed account 2 forgets its tokens here at once.
    readModel.forgetTokens([2]);
    await clients.identity.authenticate({ token: 'c' });
    expect(app.asked.slice(5)).toEqual(['token c']);
    await stop();
  });

  it('answers accounts it kept, asks only for the others, and drops one on its account’s or organization’s notice', async () => {
    const { app, clients, bus, stop } = await setUp();
    for (const id of [1, 2, 7]) app.accounts.set(id, user(id));
    expect((await clients.identity.getAccounts({ ids: [1, 7] })).users.map((u) => u.id)).toEqual([1, 7]);
    expect((await clients.identity.getAccounts({ ids: [7, 2, 1, 99] })).users.map((u) => u.id)).toEqual([7, 2, 1]);
    expect(app.asked).toEqual(['accounts 1,7', 'accounts 2,99']);
    app.accounts.set(7, user(7, 'renamed'));
    await bus.notify(ORGS_CHANGED, { orgIds: [7] });
    expect((await clients.identity.getAccounts({ ids: [7] })).users[0].login).toBe('renamed');
    app.accounts.set(1, user(1, 'one'));
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [1] });
    expect((await clients.identity.getAccounts({ ids: [1, 2] })).users.map((u) => u.login)).toEqual(['one', 'u2']);
    expect(app.asked.slice(2)).toEqual(['accounts 7', 'accounts 1']);
    await stop();
  });

  it('keeps an organization as each caller sees it, by slug in any case, no miss, and drops it on its own, a tuple or the caller’s notice', async () => {
    const { app, clients, bus, stop } = await setUp();
    app.orgs.set('acme', org(7, 'acme', 'old'));
    await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
    await clients.organizations.getOrg({ name: 'ACME', viewerId: 1 });
    await clients.organizations.getOrg({ name: 'acme', viewerId: 2 });
    await expect(clients.organizations.getOrg({ name: 'hidden', viewerId: 1 })).rejects.toThrow('does not exist');
    await expect(clients.organizations.getOrg({ name: 'hidden', viewerId: 1 })).rejects.toThrow('does not exist');
    expect(app.asked).toEqual(['org acme for 1', 'org acme for 2', 'org hidden for 1', 'org hidden for 1']);
    app.asked.length = 0;
    for (const [subject, payload] of [
      [ORGS_CHANGED, { orgIds: [7] }],
      [TUPLES_CHANGED, {}],
      [ACCOUNTS_CHANGED, { userIds: [1] }],
    ] as const) {
      await bus.notify(subject, payload);
      await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
    }
    expect(app.asked).toEqual(['org acme for 1', 'org acme for 1', 'org acme for 1']);
    // Another organization's or caller's notice leaves it kept.
    await bus.notify(ORGS_CHANGED, { orgIds: [8] });
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [3] });
    await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
    expect(app.asked).toHaveLength(3);
    await stop();
  });

  it("keeps a team without its roles and an organization's list of teams, dropped on its organization's notice; a list also on any tuple notice", async () => {
    const { app, clients, bus, stop } = await setUp();
    app.teams.set(3, team(3, 7, 'ops'));
    expect((await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false })).name).toBe('ops');
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: true });
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: true });
    await clients.organizations.listTeams({ orgId: 7 });
    await clients.organizations.listTeams({ orgId: 7 });
    expect(app.asked).toEqual(['team 3', 'team 3 with roles', 'team 3 with roles', 'teams of 7']);
    app.teams.set(3, team(3, 7, 'operations'));
    await bus.notify(ORGS_CHANGED, { orgIds: [7] });
    expect((await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false })).name).toBe('operations');
    expect((await clients.organizations.listTeams({ orgId: 7 })).teams.map((t) => t.name)).toEqual(['operations']);
    await bus.notify(TUPLES_CHANGED, {});
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
    await clients.organizations.listTeams({ orgId: 7 });
    expect(app.asked.slice(4)).toEqual(['team 3', 'teams of 7', 'teams of 7']);
    // No miss kept: a team made after a 404 is found by the very next request.
    await expect(clients.organizations.getTeam({ teamId: 4, orgId: 0, withRoles: false })).rejects.toBeInstanceOf(NotFoundError);
    app.teams.set(4, team(4, 7, 'new'));
    expect((await clients.organizations.getTeam({ teamId: 4, orgId: 0, withRoles: false })).name).toBe('new');
    await stop();
  });

  it("keeps each page and each search of an organization's teams, dropped with its whole list", async () => {
    const { app, clients, bus, stop } = await setUp();
    for (const [id, name] of [
      [3, 'ops'],
      [4, 'devs'],
      [5, 'docs'],
    ] as const)
      app.teams.set(id, team(id, 7, name));
    const page2 = () => clients.organizations.listTeams({ orgId: 7, page: { page: 2, limit: 2 } });
    const search = (q: string) => clients.organizations.searchTeams({ orgId: 7, q, includeDesc: true, page: { page: 1, limit: 10 } });
    expect((await page2()).teams.map((t) => t.name)).toEqual(['docs']);
    await page2();
    await clients.organizations.listTeams({ orgId: 7, page: { page: 1, limit: 2 } });
    expect((await search('d')).teams.map((t) => t.name)).toEqual(['devs', 'docs']);
    await search('d');
    await search('o');
    expect(app.asked).toEqual(['teams of 7 page 2 of 2', 'teams of 7 page 1 of 2', 'teams of 7 named d', 'teams of 7 named o']);
    app.asked.length = 0;
    for (const [subject, payload] of [
      [ORGS_CHANGED, { orgIds: [7] }],
      [TUPLES_CHANGED, {}],
    ] as const) {
      await bus.notify(subject, payload);
      await page2();
      await search('d');
    }
    expect(app.asked).toEqual(['teams of 7 page 2 of 2', 'teams of 7 named d', 'teams of 7 page 2 of 2', 'teams of 7 named d']);
    // Another organization's notice leaves them kept.
    await bus.notify(ORGS_CHANGED, { orgIds: [8] });
    await page2();
    expect(app.asked).toHaveLength(4);
    await stop();
  });

  it('drops everything it keeps on the notices meaning every account or every organization (a write that did not record which)', async () => {
    const { app, clients, bus, stop } = await setUp();
    app.tokens.set('a', orgsTeamsV1.AuthenticateResponse.fromPartial({ user: user(1) }));
    app.accounts.set(1, user(1));
    app.orgs.set('acme', org(7, 'acme'));
    app.teams.set(3, team(3, 7, 'ops'));
    const readAll = async () => {
      await clients.identity.authenticate({ token: 'a' });
      await clients.identity.getAccounts({ ids: [1] });
      await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
      await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
      await clients.organizations.listTeams({ orgId: 7 });
    };
    await readAll();
    await readAll();
    const everything = ['token a', 'accounts 1', 'org acme for 1', 'team 3', 'teams of 7'];
    expect(app.asked).toEqual(everything);
    // Every account: who tokens belong to, accounts, and organizations as their callers see them.
    app.asked.length = 0;
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [], all: true });
    await readAll();
    expect(app.asked).toEqual(['token a', 'accounts 1', 'org acme for 1']);
    // Every organization: accounts (organizations are accounts), organizations, teams and lists of teams.
    app.asked.length = 0;
    await bus.notify(ORGS_CHANGED, { orgIds: [], all: true });
    await readAll();
    expect(app.asked).toEqual(['accounts 1', 'org acme for 1', 'team 3', 'teams of 7']);
    await stop();
  });

  it("drops a private organization's views and an organization's lists of teams on a tuple notice naming it; keeps a public one's view and another organization's", async () => {
    const { app, clients, bus, stop } = await setUp();
    app.orgs.set('acme', org(7, 'acme'));
    app.orgs.set('secret', org(9, 'secret', '', 'private'));
    app.teams.set(3, team(3, 7, 'ops'));
    const read = async () => {
      await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
      await clients.organizations.getOrg({ name: 'secret', viewerId: 1 });
      await clients.organizations.listTeams({ orgId: 7 });
    };
    await read();
    app.asked.length = 0;
    // A member joins a team of organization 8, as authz names it.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:80', 'team:*', '@user:2'], orgs: [8] });
    await read();
    expect(app.asked).toEqual([]);
    // Who is in a public organization does not decide who sees it; who is in a private one does.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:3', 'team:*', '@user:2'], orgs: [7, 9] });
    await read();
    expect(app.asked).toEqual(['org secret for 1', 'teams of 7']);
    await stop();
  });

  it("keeps what an organization's row answers across a change of its teams or members alone, and a team across a change of its members", async () => {
    const { app, clients, bus, stop } = await setUp();
    app.accounts.set(7, user(7));
    app.orgs.set('acme', org(7, 'acme'));
    app.orgs.set('secret', org(9, 'secret', '', 'private'));
    app.teams.set(3, team(3, 7, 'ops'));
    app.teams.set(4, team(4, 9, 'spies'));
    const read = async () => {
      await clients.identity.getAccounts({ ids: [7] });
      await clients.organizations.getOrg({ name: 'acme', viewerId: 1 });
      await clients.organizations.getOrg({ name: 'secret', viewerId: 1 });
      await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
      await clients.organizations.getTeam({ teamId: 4, orgId: 0, withRoles: false });
      await clients.organizations.listTeams({ orgId: 7 });
    };
    await read();
    app.asked.length = 0;
    // Someone joins a team of each: the private organization's view goes (who sees it may have changed), and the lists.
    await bus.notify(ORGS_CHANGED, { orgIds: [7, 9], only: 'members' });
    await read();
    expect(app.asked).toEqual(['org secret for 1', 'teams of 7']);
    app.asked.length = 0;
    // A team made or changed in each: their teams go too; what their rows answer stays.
    await bus.notify(ORGS_CHANGED, { orgIds: [7, 9], only: 'teams' });
    await read();
    expect(app.asked).toEqual(['org secret for 1', 'team 3', 'team 4', 'teams of 7']);
    app.asked.length = 0;
    // A change of the rows themselves: everything of them goes.
    await bus.notify(ORGS_CHANGED, { orgIds: [7, 9] });
    await read();
    expect(app.asked).toEqual(['accounts 7', 'org acme for 1', 'org secret for 1', 'team 3', 'team 4', 'teams of 7']);
    await stop();
  });

  it("replaces an organization's views by the newer row an edit's notice brings, for every viewer, and asks nothing", async () => {
    const { app, clients, bus, stop } = await setUp();
    const version = (o: orgsTeamsOrgsV1.Organization, v: number) => ({ ...o, version: v });
    app.orgs.set('acme', version(org(7, 'acme', 'v1'), 1));
    app.orgs.set('secret', version(org(9, 'secret', 'v1', 'private'), 1));
    app.teams.set(3, team(3, 7, 'ops'));
    const views = async () => [
      (await clients.organizations.getOrg({ name: 'acme', viewerId: 1 })).description,
      (await clients.organizations.getOrg({ name: 'ACME', viewerId: 2 })).description,
      (await clients.organizations.getOrg({ name: 'secret', viewerId: 1 })).description,
    ];
    await views();
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
    app.asked.length = 0;

    // Both edited: the rows the notice brings are what every caller is answered, without a call.
    const acme2 = version(org(7, 'acme', 'v2'), 2);
    await bus.notify(ORGS_CHANGED, { orgIds: [7, 9], rows: [acme2, version(org(9, 'secret', 'v2', 'private'), 2)] });
    expect(await views()).toEqual(['v2', 'v2', 'v2']);
    expect(app.asked).toEqual([]);
    // What else shows the organization goes as on any change of its row (a team shows its organization).
    await clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: false });
    expect(app.asked).toEqual(['team 3']);
    app.asked.length = 0;

    // An older row reaching the reader later (notices of two edits stored in the other order) changes nothing.
    await bus.notify(ORGS_CHANGED, { orgIds: [7], rows: [version(org(7, 'acme', 'v1 again'), 1)] });
    expect(await views()).toEqual(['v2', 'v2', 'v2']);
    expect(app.asked).toEqual([]);

    // A row whose visibility changed: who may see it changed, so its views go and are asked again.
    app.orgs.set('acme', version(org(7, 'acme', 'v3', 'private'), 3));
    await bus.notify(ORGS_CHANGED, { orgIds: [7], rows: [app.orgs.get('acme')!] });
    expect(await views()).toEqual(['v3', 'v3', 'v2']);
    expect(app.asked).toEqual(['org acme for 1', 'org ACME for 2']);
    app.asked.length = 0;

    // Named without a row (another change of it): dropped, as before.
    await bus.notify(ORGS_CHANGED, { orgIds: [9], rows: [] });
    await views();
    expect(app.asked).toEqual(['org secret for 1']);
    await stop();
  });
});

describe("orgs-teams' other kept reads, by what they are about", () => {
  function members() {
    const asked: string[] = [];
    const of = (orgId: number) => [
      orgsTeamsV1.User.fromPartial({ id: orgId * 10 + 1 }),
      orgsTeamsV1.User.fromPartial({ id: orgId * 10 + 2 }),
    ];
    return {
      asked,
      organizations: {
        getTeam: async (q: orgsTeamsOrgsV1.GetTeamRequest) => (asked.push(`team ${q.teamId} with roles`), team(q.teamId, 7, 'ops')),
        listMembers: async (q: orgsTeamsOrgsV1.ListMembersRequest) => (
          asked.push(`members of ${q.orgId}`),
          orgsTeamsOrgsV1.ListMembersResponse.fromPartial({ members: of(q.orgId), total: 2 })
        ),
      },
      identity: {
        listTokens: async (q: orgsTeamsV1.ListTokensRequest) => (
          asked.push(`tokens of ${q.userId}`),
          orgsTeamsV1.ListTokensResponse.fromPartial({})
        ),
      },
    };
  }

  it("drops an organization's members only on a notice naming the organization, one of its members or the viewer", async () => {
    const app = members();
    const services = { orgTokens: {}, claims: {}, siteSettings: {}, avatars: {}, audit: {}, serviceAccounts: {}, ...app };
    const { clients, readModel } = keptServiceReads(services, ORGS_TEAMS_READS as never, { name: 'test.about', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    const read = async () => {
      await clients.organizations.listMembers({ orgId: 7, viewerId: 1, publicOnly: false });
      await clients.identity.listTokens({ userId: 71 });
    };
    await read();
    app.asked.length = 0;
    // Another organization, its member, a tuple there, another user's sign-in: all kept.
    for (const [subject, payload] of [
      [ORGS_CHANGED, { orgIds: [8] }],
      [ACCOUNTS_CHANGED, { userIds: [81] }],
      [TUPLES_CHANGED, { tags: ['team:80'], orgs: [8] }],
      [SIGNIN_CHANGED, { userIds: [81] }],
    ] as const) {
      await bus.notify(subject, payload);
      await read();
    }
    expect(app.asked).toEqual([]);
    // Organization 7, a member's account, the viewer's account, a tuple of organization 7: the members go each time.
    for (const [subject, payload] of [
      [ORGS_CHANGED, { orgIds: [7] }],
      [ACCOUNTS_CHANGED, { userIds: [72] }],
      [ACCOUNTS_CHANGED, { userIds: [1] }],
      [TUPLES_CHANGED, { tags: ['team:70'], orgs: [7] }],
    ] as const) {
      await bus.notify(subject, payload);
      await clients.organizations.listMembers({ orgId: 7, viewerId: 1, publicOnly: false });
    }
    expect(app.asked).toEqual(['members of 7', 'members of 7', 'members of 7', 'members of 7']);
    // The token list of user 71 goes with its account's or its sign-in notice, or one naming every account.
    app.asked.length = 0;
    for (const [subject, payload] of [
      [SIGNIN_CHANGED, { userIds: [71] }],
      [ACCOUNTS_CHANGED, { userIds: [71] }],
      [SIGNIN_CHANGED, { userIds: [] }],
    ] as const) {
      await bus.notify(subject, payload);
      await clients.identity.listTokens({ userId: 71 });
    }
    expect(app.asked).toEqual(['tokens of 71', 'tokens of 71', 'tokens of 71']);
    await stop();
  });

  it('drops a team with its roles, asked without its organization, on a notice naming the organization the answer names', async () => {
    const app = members();
    const services = { orgTokens: {}, claims: {}, siteSettings: {}, avatars: {}, audit: {}, serviceAccounts: {}, ...app };
    const { clients, readModel } = keptServiceReads(services, ORGS_TEAMS_READS as never, { name: 'test.about', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    const read = () => clients.organizations.getTeam({ teamId: 3, orgId: 0, withRoles: true });
    await read();
    await bus.notify(ORGS_CHANGED, { orgIds: [8] });
    await bus.notify(TUPLES_CHANGED, { tags: ['role:80', 'role:*', '@team:80'], orgs: [8] });
    await read();
    expect(app.asked).toEqual(['team 3 with roles']);
    // A role assigned to it (the notice names the team's tuples as a user, and its organization).
    await bus.notify(TUPLES_CHANGED, { tags: ['role:70', 'role:*', '@team:3'], orgs: [7] });
    await read();
    await bus.notify(ORGS_CHANGED, { orgIds: [7] });
    await read();
    expect(app.asked).toEqual(['team 3 with roles', 'team 3 with roles', 'team 3 with roles']);
    await stop();
  });
});
