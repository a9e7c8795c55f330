import { clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';

/**
 * Team auto-connect (docs/organizations-and-teams.md) on the demo seed, in-process bus: a user put in the demo
 * organization's owner team with `autoConnectClusters=true` is sent to the demo hub's agent in its desired state;
 * the simulated agent connects them (cluster-admin) on the hub and every spoke and reports it, and the hub's answer
 * in `GET /orgs/{org}/clusters` shows them in `connectedUsers`. `autoConnectClusters=false`, and leaving the owner
 * team (through the teams routes at once, through the organization's member routes by the reconcile pass),
 * disconnect them again; other teams and an absent flag connect nobody. A change the clusters service cannot record
 * changes no membership either.
 */
describe('team auto-connect on the demo seed', () => {
  let demo: DemoPlatform;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  let owner: string;
  let org: string;
  let ownersTeam: number;
  let otherTeam: number;
  const api = (...args: Parameters<DemoPlatform['t']['api']>) => demo.t.api(...args);
  /** The users the demo hub's agent last reported connected, as the cluster answer shows them. */
  const hubConnected = async () => {
    const res = await api(owner, 'GET', `/orgs/${org}/clusters`);
    expect(res.status).toBe(200);
    const hub = (res.body as { name: string; connectedUsers: { login: string; role: string }[] }[]).find(
      (c) => c.name === demo.manifest.hub.name,
    )!;
    return hub.connectedUsers;
  };
  /** Waits until the agent reports exactly these logins connected on the hub and on every spoke. */
  const reported = async (logins: string[]) => {
    const everywhere = async () => {
      const { clusters: spokes } = await clusters.listSpokes({ hubUid: demo.manifest.hub.uid });
      expect(spokes.length).toBeGreaterThan(1);
      const lists = [await hubConnected(), ...spokes.map((s) => s.connectedUsers)];
      return lists.every((l) => JSON.stringify(l.map((u) => u.login)) === JSON.stringify(logins));
    };
    await eventually(everywhere, 20_000);
  };

  beforeAll(async () => {
    // The reconcile pass often, so a removal through the organization's routes is followed within the test.
    demo = await bootDemoPlatform({ CONNECTION_RECONCILE_INTERVAL_MS: '300' });
    owner = demo.manifest.owner.username;
    org = demo.manifest.owner.org;
    clusters = createClient(clustersV1.ClustersServiceService, demo.t.grpcAddress('clusters'), { name: 'clusters' });
    for (const login of ['tess', 'uma']) await demo.t.signUp(login);
    const teams = (await api(owner, 'GET', `/orgs/${org}/teams`)).body as { id: number; permission: string }[];
    ownersTeam = teams.find((t) => t.permission === 'owner')!.id;
    const made = await api(owner, 'POST', `/orgs/${org}/teams`, { name: 'platform-ops', type: 'kubernetes', permission: 'write' });
    expect(made.status).toBe(201);
    otherTeam = made.body.id;
  }, 180_000);
  afterAll(async () => {
    clusters?.close();
    await demo?.stop();
  });

  it('nobody is connected on the demo clusters at first; the cluster answer carries connectedUsers', async () => {
    expect(await hubConnected()).toEqual([]);
  });

  it('connects a new owner: the agent reports them cluster-admin on the hub and every spoke', async () => {
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/tess?autoConnectClusters=true`)).status).toBe(204);
    await reported(['tess']);
    expect(await hubConnected()).toEqual([{ login: 'tess', role: 'cluster-admin' }]);
    // Again: still one connection.
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/tess?autoConnectClusters=true`)).status).toBe(204);
    await reported(['tess']);
  });

  it('connects nobody without the flag, on another team, or for a bad flag (400)', async () => {
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/uma`)).status).toBe(204);
    expect((await api(owner, 'PUT', `/teams/${otherTeam}/members/uma?autoConnectClusters=true`)).status).toBe(204);
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/uma?autoConnectClusters=yes`)).status).toBe(400);
    // A later change of tess's connection is reported without uma: she was never connected.
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/tess?autoConnectClusters=false`)).status).toBe(204);
    await reported([]);
    // The flag false keeps the membership: tess is still an owner.
    expect((await api(owner, 'GET', `/teams/${ownersTeam}/members/tess`)).status).toBe(200);
  });

  it('disconnects an owner who leaves the owner team (DELETE, or the leave action)', async () => {
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/tess?autoConnectClusters=true`)).status).toBe(204);
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/uma?autoConnectClusters=true`)).status).toBe(204);
    await reported(['tess', 'uma']);
    expect((await api(owner, 'DELETE', `/teams/${ownersTeam}/members/tess`)).status).toBe(204);
    await reported(['uma']);
    const leave = await api('uma', 'POST', `/orgs/${org}/teams/${ownersTeam}/action/leave?uid=${demo.t.ids.uma}`);
    expect(leave.status).toBe(200);
    await reported([]);
    expect((await api(owner, 'GET', `/teams/${ownersTeam}/members/uma`)).status).toBe(404);
  });

  it('a user not in the team cannot be removed (404) and nothing is sent', async () => {
    expect((await api(owner, 'DELETE', `/teams/${ownersTeam}/members/tess`)).status).toBe(404);
    expect(await hubConnected()).toEqual([]);
  });

  it('disconnects an owner removed from the organization through its member routes (the reconcile pass)', async () => {
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/uma?autoConnectClusters=true`)).status).toBe(204);
    await reported(['uma']);
    expect((await api(owner, 'DELETE', `/orgs/${org}/members/uma`)).status).toBe(204);
    await reported([]);
  });

  it('leaves the membership as it was when the clusters service cannot record the connection (503)', async () => {
    expect((await api(owner, 'PUT', `/teams/${ownersTeam}/members/uma?autoConnectClusters=true`)).status).toBe(204);
    await reported(['uma']);
    await demo.t.platform.stopApp('clusters');
    try {
      // Not made an owner: tess stays out of the team and the organization.
      const put = await api(owner, 'PUT', `/teams/${ownersTeam}/members/tess?autoConnectClusters=true`);
      expect([put.status, put.body.message]).toEqual([503, 'clusters is unavailable']);
      expect((await api(owner, 'GET', `/teams/${ownersTeam}/members/tess`)).status).toBe(404);
      expect((await api(owner, 'GET', `/orgs/${org}/members/tess`)).status).toBe(404);
      // Not removed: uma stays an owner, as does her connection.
      const del = await api(owner, 'DELETE', `/teams/${ownersTeam}/members/uma`);
      expect([del.status, del.body.message]).toEqual([503, 'clusters is unavailable']);
      const leave = await api('uma', 'POST', `/orgs/${org}/teams/${ownersTeam}/action/leave?uid=${demo.t.ids.uma}`);
      expect([leave.status, leave.body.message]).toEqual([503, 'clusters is unavailable']);
      expect((await api(owner, 'GET', `/teams/${ownersTeam}/members/uma`)).status).toBe(200);
    } finally {
      await demo.t.platform.startApp('clusters');
    }
    await reported(['uma']);
    expect((await api(owner, 'GET', `/teams/${ownersTeam}/members/tess`)).status).toBe(404);
    // Stopping and starting an app takes a few seconds here, and many more late in a long in-band suite run.
  }, 120_000);
});
