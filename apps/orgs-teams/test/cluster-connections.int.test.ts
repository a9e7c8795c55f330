import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as path from 'node:path';
import { InputError, UnavailableError } from '@platform/errors';
import { clustersV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import {
  bindService,
  createClient,
  createLogger,
  startApp,
  startGrpcServer,
  type PromiseClient,
  type RunningService,
} from '@platform/service-kit';
import { healthStatus, startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { appBundles, eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// Team auto-connect from orgs-teams' side: a change of owner-team membership that asks for a cluster connection
// calls the clusters service's SetUserConnection (here a stand-in that keeps the connections and can refuse) in
// one step with the membership: a refusal leaves the membership as it was and is the caller's answer, and a
// process killed between the commit and the call has the call made by the outbox relay of the next start.

const ROOT = path.resolve(__dirname, '../../..');
const ROLE = 'cluster-admin';

/** A stand-in clusters service: the users connected per organization, as SetUserConnection leaves them. */
async function startClustersStub() {
  const connected = new Map<string, { login: string; role: string }>();
  const state = { refuse: false, down: false, calls: 0, log: [] as string[] };
  const server = await startGrpcServer({
    name: 'clusters-stub',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(clustersV1.ClustersServiceService, {
        async setUserConnection(req: clustersV1.SetUserConnectionRequest) {
          state.calls += 1;
          if (state.down) throw new UnavailableError('clusters is down');
          if (state.refuse) throw new InputError('the organization has no hub that takes connections');
          state.log.push(`${req.connect ? 'connect' : 'disconnect'} ${req.login}`);
          const key = `${req.ownerType}:${req.ownerId} ${req.userId}`;
          if (req.connect) connected.set(key, { login: req.login, role: req.role });
          else connected.delete(key);
          return { changedHubUids: [] };
        },
      } as never),
    ],
    protoFiles: ['platformadmin/clusters/v1/clusters.proto'],
    log: createLogger('clusters-stub', 'silent'),
  });
  return { server, connected, state, address: `127.0.0.1:${server.port}` };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe('team auto-connect: the cluster connection goes with the owner-team membership', () => {
  let authz: AuthzStub;
  let clusters: Awaited<ReturnType<typeof startClustersStub>>;
  let app: AppUnderTest;
  let restarted: RunningService | undefined;
  let child: ChildProcess | undefined;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let orgId: number;
  let owners: number;
  let devs: number;
  const users: Record<string, number> = {};
  /** The connection the clusters service holds for a user of the organization. */
  const connection = (login: string) => clusters.connected.get(`organization:${orgId} ${users[login]}`);
  const ownerLogins = async () => (await orgs.listTeamMembers({ teamId: owners })).members.map((u) => u.login);
  const hasTuple = (login: string, teamId: number) => authz.tuples.has(`user:${users[login]} member team:${teamId}`);
  const connect = (connect: boolean) => ({ connect, role: ROLE });

  beforeAll(async () => {
    authz = await startAuthzStub();
    clusters = await startClustersStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      CLUSTERS_GRPC_ADDR: clusters.address,
      // The release's key: the stubs of this process and the orgs-teams process started below call each other.
      PLATFORM_APP_KEYS: randomBytes(32).toString('base64'),
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      // An entry left by a killed process is the relay's after a second.
      OUTBOX_LEASE_MS: '1000',
    });
    orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
    const identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    for (const login of ['alice', 'bob', 'carol', 'dave']) {
      const u = await identity.createUser({
        username: login,
        email: `${login}@example.com`,
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      });
      users[login] = u.id;
    }
    identity.close();
    const org = await orgs.createOrg(orgRequest(users.alice, 'acme'));
    orgId = org.id;
    owners = (await orgs.listTeams({ orgId })).teams[0].id;
    devs = (await orgs.createTeam({ orgId, name: 'devs', description: '', permission: 'write', type: 'general' })).id;
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    orgs?.close();
    await restarted?.stop();
    await app?.stop();
    await clusters?.server.shutdown(100);
    await authz?.server.shutdown(100);
  });

  it('connects a user put in the owner team, and disconnects them when they leave it', async () => {
    expect(
      await orgs.addTeamMember({ teamId: owners, userId: 0, username: 'bob', conflictIfMember: false, clusterConnection: connect(true) }),
    ).toEqual({
      added: true,
    });
    expect(connection('bob')).toEqual({ login: 'bob', role: ROLE });
    expect(hasTuple('bob', owners)).toBe(true);
    // false on a member already in the team takes the connection back and keeps the membership.
    await orgs.addTeamMember({ teamId: owners, userId: 0, username: 'bob', conflictIfMember: false, clusterConnection: connect(false) });
    expect(connection('bob')).toBeUndefined();
    expect(await ownerLogins()).toEqual(['alice', 'bob']);
    await orgs.addTeamMember({
      teamId: owners,
      userId: users.bob,
      username: '',
      conflictIfMember: false,
      clusterConnection: connect(true),
    });
    expect(connection('bob')).toEqual({ login: 'bob', role: ROLE });

    await orgs.removeTeamMember({ teamId: owners, userId: users.bob, username: '', disconnectClusters: true });
    expect(connection('bob')).toBeUndefined();
    expect(await ownerLogins()).toEqual(['alice']);
  });

  it('asks nothing of the clusters service on other teams, or when no connection is asked for', async () => {
    const before = clusters.state.calls;
    await orgs.addTeamMember({ teamId: devs, userId: 0, username: 'bob', conflictIfMember: false, clusterConnection: connect(true) });
    await orgs.removeTeamMember({ teamId: devs, userId: users.bob, username: '', disconnectClusters: true });
    await orgs.addTeamMember({ teamId: owners, userId: 0, username: 'bob', conflictIfMember: false });
    await orgs.removeTeamMember({ teamId: owners, userId: users.bob, username: '' });
    expect(clusters.state.calls).toBe(before);
    expect(connection('bob')).toBeUndefined();
  });

  it('leaves the membership as it was when the clusters service refuses, and answers its refusal', async () => {
    clusters.state.refuse = true;
    try {
      await expect(
        orgs.addTeamMember({ teamId: owners, userId: 0, username: 'carol', conflictIfMember: false, clusterConnection: connect(true) }),
      ).rejects.toMatchObject({ kind: 'input', message: 'the organization has no hub that takes connections' });
      expect(await ownerLogins()).toEqual(['alice']);
      expect(hasTuple('carol', owners)).toBe(false);
      // Not a member of the organization either.
      expect(await orgs.getMembership({ orgId, viewerId: 0, username: 'carol' })).toMatchObject({ member: false });
    } finally {
      clusters.state.refuse = false;
    }

    await orgs.addTeamMember({ teamId: owners, userId: 0, username: 'carol', conflictIfMember: false, clusterConnection: connect(true) });
    clusters.state.refuse = true;
    try {
      await expect(
        orgs.removeTeamMember({ teamId: owners, userId: users.carol, username: '', disconnectClusters: true }),
      ).rejects.toMatchObject({
        kind: 'input',
        message: 'the organization has no hub that takes connections',
      });
      await expect(
        orgs.addTeamMember({ teamId: owners, userId: 0, username: 'carol', conflictIfMember: false, clusterConnection: connect(false) }),
      ).rejects.toMatchObject({ kind: 'input' });
    } finally {
      clusters.state.refuse = false;
    }
    expect(await ownerLogins()).toEqual(['alice', 'carol']);
    expect(hasTuple('carol', owners)).toBe(true);
    expect(connection('carol')).toEqual({ login: 'carol', role: ROLE });
  });

  it('takes a new owner out again when the clusters service is down, and disconnects them once it is back', async () => {
    clusters.state.down = true;
    try {
      await expect(
        orgs.addTeamMember({ teamId: owners, userId: 0, username: 'bob', conflictIfMember: false, clusterConnection: connect(true) }),
      ).rejects.toMatchObject({ kind: 'unavailable', message: 'clusters is down' });
      expect(await ownerLogins()).toEqual(['alice', 'carol']);
      expect(hasTuple('bob', owners)).toBe(false);
    } finally {
      clusters.state.down = false;
    }
    // The connection may have been recorded before the failure: the undo takes it back, by the relay meanwhile.
    await eventually(async () => clusters.state.log.at(-1) === 'disconnect bob');
    expect(connection('bob')).toBeUndefined();
  });

  it('has the relay of the next start connect a user whose process was killed between the membership and the call', async () => {
    // The same orgs-teams, as its own process run from its bundle as its image runs it (made fresh first), killed
    // right after a change commits (the outbox's test-only fault).
    const bundle = appBundles(['orgs-teams'])['orgs-teams'];
    await app.running.stop();
    const port = await freePort();
    child = spawn(process.execPath, [bundle], {
      cwd: ROOT,
      env: { ...process.env, ...app.env, GRPC_PORT: String(port), PLATFORM_TEST_FAULT: 'outbox-after-commit' },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code, signal) => resolve(signal ? -1 : code)));
    const address = `127.0.0.1:${port}`;
    // Until it serves, however long a busy machine takes: the bound is the test's, not "long enough"; an exit before
    // it serves fails at once.
    await Promise.race([
      eventually(async () => (await healthStatus(address).catch(() => '')) === 'SERVING', 150_000),
      exited.then((code) => {
        throw new Error(`orgs-teams exited (${code}) before it served`);
      }),
    ]);
    const killed = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, address, { name: 'orgs-teams', inProcess: false });
    try {
      await expect(
        killed.addTeamMember({ teamId: owners, userId: 0, username: 'dave', conflictIfMember: false, clusterConnection: connect(true) }),
      ).rejects.toThrow();
    } finally {
      killed.close();
    }
    expect(await exited).toBe(-1);
    child = undefined;
    // The membership committed; the connection was never asked for.
    expect(connection('dave')).toBeUndefined();

    restarted = await startApp(orgsTeamsApp, { ...app.env, GRPC_PORT: '0' });
    const again = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, `127.0.0.1:${restarted.grpcPort}`, { name: 'orgs-teams' });
    try {
      await eventually(async () => connection('dave')?.login === 'dave', 20_000);
      expect(connection('dave')).toEqual({ login: 'dave', role: ROLE });
      expect((await again.listTeamMembers({ teamId: owners })).members.map((u) => u.login)).toEqual(['alice', 'carol', 'dave']);
      expect(hasTuple('dave', owners)).toBe(true);
    } finally {
      again.close();
    }
  }, 240_000);
});
