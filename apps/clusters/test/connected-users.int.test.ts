import { consumeDesiredState } from '@platform/agent-protocol';
import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { NotFoundError } from '@platform/errors';
import { agentV1, clustersV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createClient, createLogger, startGrpcServer, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { clustersApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// Team auto-connect in the clusters service over real gRPC and Postgres: SetUserConnection records the user on
// every hub of the owner and sends each hub's agent a desired state naming them; disconnecting takes them out;
// repeats send nothing; bad requests are 400; the reconcile pass takes back users no longer in the owner team
// (asked of a stand-in orgs-teams).

/** A stand-in orgs-teams answering the owner team (id 1000 + org id) and its members; unknown organizations are 404. */
async function startOrgsStub(owners: Map<number, number[]>) {
  const server = await startGrpcServer({
    name: 'orgs-stub',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
        async listTeams(req: orgsTeamsOrgsV1.ListTeamsRequest) {
          if (!owners.has(req.orgId)) throw new NotFoundError(`organization ${req.orgId} not found`);
          return orgsTeamsOrgsV1.ListTeamsResponse.fromPartial({
            teams: [orgsTeamsOrgsV1.Team.fromPartial({ id: 1000 + req.orgId, permission: 'owner', name: 'Owners' })],
            total: 1,
          });
        },
        async listTeamMembers(req: orgsTeamsOrgsV1.ListTeamMembersRequest) {
          const members = (owners.get(req.teamId - 1000) ?? []).map((id) => orgsTeamsV1.User.fromPartial({ id, login: `u${id}` }));
          return orgsTeamsOrgsV1.ListTeamMembersResponse.fromPartial({ members, total: members.length });
        },
      } as never),
    ],
    protoFiles: ['platformadmin/orgsteams/v1/orgs.proto'],
    log: createLogger('orgs-stub', 'silent'),
  });
  return { server, address: `127.0.0.1:${server.port}` };
}

describe('ClustersService.SetUserConnection', () => {
  let authz: AuthzStub;
  let orgs: Awaited<ReturnType<typeof startOrgsStub>>;
  /** The owner team members the stand-in orgs-teams answers, by organization; org 77's owners are 5 and 6. */
  const owners = new Map<number, number[]>([
    [77, [5, 6]],
    [78, [9]],
  ]);
  let app: AppUnderTest;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  const hubs: clustersV1.Cluster[] = [];
  const received = new Map<string, agentV1.DesiredState[]>();
  const stops: (() => Promise<void>)[] = [];
  const latest = (hub: clustersV1.Cluster) => received.get(hub.uid)?.at(-1);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const req = (over: Partial<clustersV1.SetUserConnectionRequest> = {}): clustersV1.SetUserConnectionRequest => ({
    ownerType: 'organization',
    ownerId: 77,
    userId: 5,
    login: 'dave',
    role: 'cluster-admin',
    connect: true,
    ...over,
  });

  beforeAll(async () => {
    authz = await startAuthzStub();
    orgs = await startOrgsStub(owners);
    app = await startAppForTest(clustersApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      ORGS_TEAMS_GRPC_ADDR: orgs.address,
      OUTBOX_RELAY_INTERVAL_MS: '200',
      CONNECTION_RECONCILE_INTERVAL_MS: '200',
    });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    for (const [ownerId, name] of [
      [77, 'east'],
      [77, 'west'],
      [78, 'other'],
    ] as const) {
      const hub = await clusters.createHub(hubRequest(ownerId, name));
      hubs.push(hub);
      received.set(hub.uid, []);
      stops.push(await consumeDesiredState(app.running.ctx.bus!, hub.uid, async (s) => void received.get(hub.uid)!.push(s)));
    }
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    clusters?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
    await orgs?.server.shutdown(100);
  });

  it("connects the user on every hub of the owner, and each hub's agent is sent the user with the role", async () => {
    const changed: ClustersChanged[] = [];
    const unlisten = await app.running.ctx.bus!.listen(CLUSTERS_CHANGED, (_s, n) => void changed.push(n as ClustersChanged));
    const { changedHubUids } = await clusters.setUserConnection(req());
    await unlisten();
    expect(changedHubUids.sort()).toEqual([hubs[0].uid, hubs[1].uid].sort());
    // A write method, announced by method before the caller heard back: the hubs its answer names, and their owner.
    expect(changed.map((n) => ({ ...n, uids: [...n.uids].sort() }))).toEqual([{ uids: changedHubUids, owners: ['organization:77'] }]);
    const dave = [{ userId: 5, login: 'dave', role: 'cluster-admin' }];
    await eventually(async () => hubs.slice(0, 2).every((hub) => same(latest(hub)?.connectedUsers, dave)));
    // Another owner's hub is not touched.
    expect(received.get(hubs[2].uid)).toEqual([]);
  });

  it('changes nothing when repeated; a new role is sent', async () => {
    const before = received.get(hubs[0].uid)!.length;
    expect((await clusters.setUserConnection(req())).changedHubUids).toEqual([]);
    expect((await clusters.setUserConnection(req({ role: 'view' }))).changedHubUids).toHaveLength(2);
    await eventually(async () => same(latest(hubs[0])?.connectedUsers, [{ userId: 5, login: 'dave', role: 'view' }]));
    expect(received.get(hubs[0].uid)!.length).toBe(before + 1);
  });

  it('disconnects: the next desired state no longer names the user; disconnecting again changes nothing', async () => {
    await clusters.setUserConnection(req({ userId: 6, login: 'erin' }));
    await clusters.setUserConnection(req({ connect: false, login: '', role: '' }));
    await eventually(async () => same(latest(hubs[1])?.connectedUsers, [{ userId: 6, login: 'erin', role: 'cluster-admin' }]));
    expect((await clusters.setUserConnection(req({ connect: false }))).changedHubUids).toEqual([]);
  });

  it('refuses a bad owner, user, login or role (400)', async () => {
    for (const bad of [
      req({ ownerType: 'team' }),
      req({ userId: 0 }),
      req({ login: '' }),
      req({ role: 'Cluster Admin' }),
      req({ login: 'x'.repeat(256) }),
    ]) {
      await expect(clusters.setUserConnection(bad)).rejects.toMatchObject({ kind: 'input' });
    }
  });

  it('the reconcile pass takes back users who left the owner team some other way, and everyone of a deleted organization', async () => {
    await clusters.setUserConnection(req({ userId: 5, login: 'dave' }));
    await clusters.setUserConnection(req({ ownerId: 78, userId: 9, login: 'gus' }));
    await eventually(async () => latest(hubs[0])!.connectedUsers.length === 2 && latest(hubs[2])?.connectedUsers.length === 1);
    owners.set(77, [5]); // erin (6) left the owner team through an organization route
    await eventually(async () => same(latest(hubs[1])?.connectedUsers, [{ userId: 5, login: 'dave', role: 'cluster-admin' }]));
    expect(latest(hubs[0])!.connectedUsers.map((u) => u.login)).toEqual(['dave']);
    owners.delete(78); // organization 78 was deleted
    await eventually(async () => same(latest(hubs[2])?.connectedUsers, []));
    // Owners still in the team stay connected.
    expect(latest(hubs[0])!.connectedUsers.map((u) => u.login)).toEqual(['dave']);
  });
});
