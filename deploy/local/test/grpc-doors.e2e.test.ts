/**
 * The gRPC doors of `npm start` as others on this machine or the network find them: every port on loopback only, a
 * stranger's calls refused, and a team's pod calling authz's Check with its own Kubernetes ServiceAccount token, as
 * docs/grpc.md tells it to. An organization's owner makes a service account, a site admin binds it to
 * `team-billing/billing-worker`, and the pod's projected token (a JWT the cluster vouches for through TokenReview:
 * here a stand-in API server) is its credential. No secret is handed over. One platform serves both.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { authzV1, orgsTeamsOrgsV1 } from '@platform/proto';
import { appCredential } from '@platform/service-kit';
import { callAsStranger } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { interrupt, npmStart, type StartedLauncher } from './launcher';

/** One call to authz as another process on this machine would make it: its own metadata only. */
const call = (address: string, method: string, request: unknown, metadata: Record<string, string> = {}) =>
  callAsStranger(address, authzV1.AuthzServiceService, method, request, metadata);

/** Whether anything accepts a TCP connection at host:port. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });

/** An address of this machine other than loopback, if it has one. */
const outsideAddress = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const ADMIN = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
const AUDIENCE = 'platformadmin';
const POD = 'system:serviceaccount:team-billing:billing-worker';

/** A projected ServiceAccount token as the kubelet mounts it (a JWT; only the API server reads its signature). */
function projectedToken(sub: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'RS256', kid: 'cluster' })}.${part({ iss: 'https://kubernetes.default.svc', sub, aud: [AUDIENCE], iat: now, exp: now + 3600 })}.${'s'.repeat(43)}`;
}

/** A stand-in Kubernetes API server answering TokenReview for the tokens in `vouched` (token → username). */
function startCluster(vouched: Map<string, string>): Promise<http.Server> {
  const cluster = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const review = JSON.parse(body) as { spec: { token: string; audiences: string[] } };
      const username = vouched.get(review.spec.token);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          status: username ? { authenticated: true, user: { username }, audiences: review.spec.audiences } : { authenticated: false },
        }),
      );
    });
  });
  return new Promise((resolve) => cluster.listen(0, '127.0.0.1', () => resolve(cluster)));
}

describe('npm start: the gRPC ports as a stranger on this machine or the network finds them', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-grpc-doors-'));
  const podToken = projectedToken(POD);
  let cluster: http.Server;
  let started: StartedLauncher;
  /** gRPC address by app, as the launcher printed them. */
  let addresses: Map<string, string>;
  let grpcPorts: number[];

  // GRPC_PORT_BASE fixes the ports: eight consecutive ones from a base drawn below the ephemeral range (32768 on
  // Linux), where another file's platform on port 0 never lands; 30000-38990 once met one.
  const base = 20_000 + 10 * Math.floor(Math.random() * 1_200);

  /** Calls /api/v1 with `authorization` (a Basic or token header value) and a JSON body. */
  async function api(authorization: string, method: string, route: string, json?: unknown) {
    const res = await fetch(`${started.url}api/v1${route}`, {
      method,
      headers: { authorization, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  beforeAll(async () => {
    cluster = await startCluster(new Map([[podToken, POD]]));
    fs.writeFileSync(path.join(dataDir, 'kubernetes-token'), 'orgs-teams-own-token\n');
    started = await npmStart({
      DATA_DIR: dataDir,
      PLATFORM_ADMIN_PASSWORD: 'admin-password',
      GRPC_PORT_BASE: String(base),
      KUBERNETES_TOKEN_AUDIENCE: AUDIENCE,
      KUBERNETES_API_URL: `http://127.0.0.1:${(cluster.address() as net.AddressInfo).port}`,
      KUBERNETES_API_TOKEN_FILE: path.join(dataDir, 'kubernetes-token'),
    });
    // The addresses printed once the platform is ready: the public apps' line, then the internal ones'.
    const printed = () => /gRPC for service accounts \(docs\/grpc.md\): (.*)\ngRPC internal to the platform: (.*)\n/.exec(started.logs());
    await eventually(async () => printed() !== null, 10_000);
    const [, publicOnes, internalOnes] = printed()!;
    addresses = new Map(`${publicOnes}, ${internalOnes}`.split(', ').map((entry) => entry.split(' ') as [string, string]));
    expect([...addresses.keys()].slice(0, 3)).toEqual(['authz', 'orgs-teams', 'contracts-licensing']);
    grpcPorts = [...addresses.values()].map((a) => Number(a.replace('127.0.0.1:', '')));
  }, 180_000);
  afterAll(async () => {
    if (started) expect(await interrupt(started.child)).toBe(0);
    cluster?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints every app’s gRPC address once ready, from GRPC_PORT_BASE, each on loopback only', async () => {
    expect([...grpcPorts].sort()).toEqual(Array.from({ length: 8 }, (_, i) => base + i));
    // The apps' own start lines say the same. They are written by each app's logger on its own stream, which may
    // reach the output a moment after the launcher's lines: waited for, not assumed to be there already.
    const logged = () => [...started.logs().matchAll(/"grpcPort":(\d+)/g)].map((m) => Number(m[1]));
    await eventually(async () => logged().length >= grpcPorts.length, 10_000);
    expect(logged().sort()).toEqual([...grpcPorts].sort());
    const outside = outsideAddress();
    for (const port of grpcPorts) {
      expect(await accepts('127.0.0.1', port)).toBe(true);
      if (outside) expect({ port, outside: await accepts(outside, port) }).toEqual({ port, outside: false });
    }
  });

  it("refuses a stranger's WriteTuples making a user site admin, and its ReadTuples, with UNAUTHENTICATED", async () => {
    const authz = addresses.get('authz')!;
    const makeAdmin = { writes: [{ user: 'user:2', relation: 'admin', object: 'site:platform' }], deletes: [] };
    expect(await call(authz, 'writeTuples', makeAdmin)).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await call(authz, 'readTuples', {})).toMatchObject({ code: status.UNAUTHENTICATED });
    // A platform credential of another process (this test's own key) is a stranger's too.
    const ownKey = { authorization: `Bearer ${appCredential().token()}` };
    expect(await call(authz, 'writeTuples', makeAdmin, ownKey)).toMatchObject({ code: status.UNAUTHENTICATED });
    const check = { tuple: { user: 'user:2', relation: 'admin', object: 'site:platform' }, contextualTuples: [] };
    expect(await call(authz, 'check', check, { authorization: 'Bearer guessed' })).toMatchObject({ code: status.UNAUTHENTICATED });
  });

  it('still serves the API to its users, on the HTTP port', async () => {
    const created = await api(ADMIN, 'POST', '/users/admin/tokens', { name: 'doors' });
    expect(created.status).toBe(201);
    const me = await api(`token ${created.body.sha1}`, 'GET', '/user');
    expect(me.body).toMatchObject({ login: 'admin', is_admin: true });
  });

  it('answers a pod’s Check once a site admin binds its ServiceAccount, and no more once unbound', async () => {
    // An owner with an organization whose team has a member, `dev`.
    const ids: Record<string, number> = {};
    for (const login of ['owner', 'dev']) {
      const user = await api(ADMIN, 'POST', '/admin/users', {
        username: login,
        email: `${login}@example.com`,
        password: `${login}-password`,
      });
      expect(user.status).toBe(201);
      ids[login] = user.body.id;
    }
    const basicOwner = `Basic ${Buffer.from('owner:owner-password').toString('base64')}`;
    const owner = `token ${(await api(basicOwner, 'POST', '/users/owner/tokens', { name: 'owner' })).body.sha1}`;
    const acme = await api(owner, 'POST', '/orgs', { username: 'acme', visibility: 'private' });
    expect(acme.status).toBe(201);
    const team = await api(owner, 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general' });
    expect((await api(owner, 'PUT', `/teams/${team.body.id}/members/dev`)).status).toBe(204);

    const check = { tuple: { user: `user:${ids.dev}`, relation: 'member', object: `organization:${acme.body.id}` }, contextualTuples: [] };
    const asPod = { authorization: `Bearer ${podToken}` };
    const authz = addresses.get('authz')!;

    // The owner makes the account; only a site admin binds the pod's ServiceAccount to it.
    const account = await api(owner, 'POST', '/orgs/acme/service-accounts', { name: 'billing-worker' });
    expect(account.status).toBe(201);
    const bind = { kubernetes_subjects: ['team-billing/billing-worker'] };
    expect((await api(owner, 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, bind)).status).toBe(403);
    // Not bound yet: the cluster vouches for the pod, but it is nobody here.
    expect((await call(authz, 'check', check, asPod)).code).toBe(status.UNAUTHENTICATED);
    expect((await api(ADMIN, 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, bind)).status).toBe(200);

    expect(await call(authz, 'check', check, asPod)).toMatchObject({ code: status.OK, response: { allowed: true } });
    const org = await callAsStranger(
      addresses.get('orgs-teams')!,
      orgsTeamsOrgsV1.OrganizationsServiceService,
      'getOrg',
      { name: 'acme', viewerId: 0 },
      asPod,
    );
    expect(org).toMatchObject({ code: status.OK, response: { username: 'acme' } });
    // Outside what it holds, and internal methods: refused.
    const siteCheck = { tuple: { user: `user:${ids.dev}`, relation: 'admin', object: 'site:platform' }, contextualTuples: [] };
    expect((await call(authz, 'check', siteCheck, asPod)).code).toBe(status.PERMISSION_DENIED);
    expect((await call(authz, 'readTuples', {}, asPod)).code).toBe(status.PERMISSION_DENIED);
    // A token the cluster does not vouch for, and one for another pod.
    const stranger = { authorization: `Bearer ${projectedToken('system:serviceaccount:team-b:other')}` };
    expect((await call(authz, 'check', check, stranger)).code).toBe(status.UNAUTHENTICATED);

    // Unbound: the very next call is refused.
    expect((await api(ADMIN, 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, { kubernetes_subjects: [] })).status).toBe(200);
    expect((await call(authz, 'check', check, asPod)).code).toBe(status.UNAUTHENTICATED);
  });
});
