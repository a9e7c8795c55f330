import { NotFoundError, UnavailableError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Team auto-connect at the edge (docs/organizations-and-teams.md): `autoConnectClusters` on the owner team asks
// orgs-teams to connect (true) or disconnect (false) the member on the organization's clusters in one step with the
// membership; absent, or on another team, nothing is asked; any other value is 400. Leaving the owner team (DELETE, the
// leave action) disconnects; a user not in it is 404 with nothing asked; orgs-teams' refusal when the clusters service
// is down is the answer. orgs-teams' side: apps/orgs-teams/test/cluster-connections.int.test.ts; the clusters service:
// apps/clusters/test/connected-users.int.test.ts; the agent connecting and reporting them on the demo hub:
// deploy/local/test/cluster-sets-features.e2e.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  owner: orgsTeamsV1.User.fromPartial({ id: 1, login: 'owner', active: true }),
  tess: orgsTeamsV1.User.fromPartial({ id: 2, login: 'tess', active: true }),
  uma: orgsTeamsV1.User.fromPartial({ id: 3, login: 'uma', active: true }),
};
const ORG = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'demo', visibility: 'public' });
const OWNERS = orgsTeamsOrgsV1.Team.fromPartial({ id: 100, name: 'Owners', permission: 'owner', organization: ORG });
const OPS = orgsTeamsOrgsV1.Team.fromPartial({ id: 101, name: 'platform-ops', permission: 'write', organization: ORG });
const CONNECT = { connect: true, role: 'cluster-admin' };

describe('team auto-connect at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** Who is in the owner team, as the stand-in orgs-teams keeps it. */
  const owners = new Set(['owner']);

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          getOrg: async () => ORG,
          getTeam: async ({ teamId }) => {
            const team = [OWNERS, OPS].find((t) => t.id === teamId);
            if (!team) throw new NotFoundError(`team ${teamId} does not exist`);
            return team;
          },
          getTeamMember: async ({ teamId, username }) => {
            if (teamId === OWNERS.id && !owners.has(username)) throw new NotFoundError(`user ${username} is not a member of team Owners`);
            return USERS[username];
          },
          addTeamMember: async ({ teamId, username }) => {
            if (teamId === OWNERS.id) owners.add(username);
            return { added: true };
          },
          removeTeamMember: async ({ teamId, userId, username }) => {
            if (teamId === OWNERS.id) owners.delete(username || Object.values(USERS).find((u) => u.id === userId)!.login);
            return {};
          },
        },
      },
      authz: {
        // The owner may do anything in its organization; others may leave a team they are in.
        authz: {
          checkPermission: async ({ userId, permission }) => ({
            allowed: userId === USERS.owner.id || permission === 'leave:team',
            dependsOn: [],
          }),
        },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  beforeEach(() => backends.reset());
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string, method: string, path: string) => {
    const res = await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: `token ${who}` } });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const added = () => backends.orgsTeams.callsTo('organizations', 'addTeamMember').map((r) => [r.teamId, r.username, r.clusterConnection]);
  const removed = () => backends.orgsTeams.callsTo('organizations', 'removeTeamMember');

  it('asks orgs-teams to connect or disconnect a member of the owner team as the flag says, in the same call', async () => {
    expect((await call('owner', 'PUT', `/teams/${OWNERS.id}/members/tess?autoConnectClusters=true`)).status).toBe(204);
    expect((await call('owner', 'PUT', `/teams/${OWNERS.id}/members/tess?autoConnectClusters=false`)).status).toBe(204);
    expect(added()).toEqual([
      [OWNERS.id, 'tess', CONNECT],
      [OWNERS.id, 'tess', { connect: false, role: 'cluster-admin' }],
    ]);
  });

  it('asks nothing of the connection without the flag or on another team, and refuses another value (400)', async () => {
    expect((await call('owner', 'PUT', `/teams/${OWNERS.id}/members/uma`)).status).toBe(204);
    expect((await call('owner', 'PUT', `/teams/${OPS.id}/members/uma?autoConnectClusters=true`)).status).toBe(204);
    const bad = await call('owner', 'PUT', `/teams/${OWNERS.id}/members/uma?autoConnectClusters=yes`);
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining('must be true or false')]);
    expect(added()).toEqual([
      [OWNERS.id, 'uma', undefined],
      [OPS.id, 'uma', undefined],
    ]);
  });

  it('disconnects a member leaving the owner team by DELETE or the leave action; not on another team', async () => {
    owners.add('tess').add('uma');
    expect((await call('owner', 'DELETE', `/teams/${OWNERS.id}/members/tess`)).status).toBe(204);
    expect((await call('uma', 'POST', `/orgs/demo/teams/${OWNERS.id}/action/leave?uid=${USERS.uma.id}`)).status).toBe(200);
    expect((await call('owner', 'DELETE', `/teams/${OPS.id}/members/uma`)).status).toBe(204);
    expect(removed()).toEqual([
      { teamId: OWNERS.id, userId: USERS.tess.id, username: '', disconnectClusters: true },
      { teamId: OWNERS.id, userId: USERS.uma.id, username: '', disconnectClusters: true },
      { teamId: OPS.id, userId: 0, username: 'uma', disconnectClusters: false },
    ]);
  });

  it('answers 404 for a user not in the owner team, asking nothing to be removed', async () => {
    owners.delete('tess');
    expect((await call('owner', 'DELETE', `/teams/${OWNERS.id}/members/tess`)).status).toBe(404);
    expect(removed()).toEqual([]);
  });

  it('answers 503 naming the clusters service when orgs-teams cannot record the connection, at each door', async () => {
    const down = async () => {
      throw new UnavailableError('clusters is unavailable');
    };
    backends.orgsTeams.answer('organizations', 'addTeamMember', down);
    backends.orgsTeams.answer('organizations', 'removeTeamMember', down);
    owners.add('uma');
    for (const [who, method, path] of [
      ['owner', 'PUT', `/teams/${OWNERS.id}/members/tess?autoConnectClusters=true`],
      ['owner', 'DELETE', `/teams/${OWNERS.id}/members/uma`],
      ['uma', 'POST', `/orgs/demo/teams/${OWNERS.id}/action/leave?uid=${USERS.uma.id}`],
    ]) {
      const res = await call(who, method, path);
      expect([path, res.status, res.body.message]).toEqual([path, 503, 'clusters is unavailable']);
    }
  });
});
