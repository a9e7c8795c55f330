import { consumeDesiredState } from '@platform/agent-protocol';
import { agentV1, clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { clustersApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Team auto-connect in the clusters service over real gRPC and Postgres: SetUserConnection records the user on
// every hub of the owner and sends each hub's agent a desired state naming them; disconnecting takes them out;
// repeats send nothing; bad requests are 400.

describe('ClustersService.SetUserConnection', () => {
  let authz: AuthzStub;
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
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, OUTBOX_RELAY_INTERVAL_MS: '200' });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    for (const [ownerId, name] of [
      [77, 'east'],
      [77, 'west'],
      [78, 'other'],
    ] as const) {
      const hub = await clusters.createHub({
        ownerType: 'organization',
        ownerId,
        name,
        uid: '',
        displayName: '',
        provider: '',
        kubernetesVersion: '',
        nodeCount: 0,
        statusJson: '',
        managerEndpoint: '',
      });
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
  });

  it("connects the user on every hub of the owner, and each hub's agent is sent the user with the role", async () => {
    const { changedHubUids } = await clusters.setUserConnection(req());
    expect(changedHubUids.sort()).toEqual([hubs[0].uid, hubs[1].uid].sort());
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
});
