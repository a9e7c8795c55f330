import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { authzV1 } from '@platform/proto';
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

describe('npm start: the gRPC ports as a stranger on this machine or the network finds them', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-grpc-doors-'));
  let started: StartedLauncher;
  let authz: string;
  let grpcPorts: number[];

  // GRPC_PORT_BASE fixes the ports: eight consecutive ones from a base drawn below the ephemeral range.
  const base = 30_000 + 10 * Math.floor(Math.random() * 900);

  beforeAll(async () => {
    started = await npmStart({ DATA_DIR: dataDir, PLATFORM_ADMIN_PASSWORD: 'admin-password', GRPC_PORT_BASE: String(base) });
    // The addresses printed once the platform is ready: the public apps' line, then the internal ones'.
    const printed = () => /gRPC for service accounts \(docs\/grpc.md\): (.*)\ngRPC internal to the platform: (.*)\n/.exec(started.logs());
    await eventually(async () => printed() !== null, 10_000);
    const [, publicOnes, internalOnes] = printed()!;
    const addresses = new Map(`${publicOnes}, ${internalOnes}`.split(', ').map((entry) => entry.split(' ') as [string, string]));
    expect([...addresses.keys()].slice(0, 3)).toEqual(['authz', 'orgs-teams', 'contracts-licensing']);
    grpcPorts = [...addresses.values()].map((a) => Number(a.replace('127.0.0.1:', '')));
    authz = addresses.get('authz')!;
  }, 120_000);
  afterAll(async () => {
    if (started) expect(await interrupt(started.child)).toBe(0);
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
    const basic = `Basic ${Buffer.from('admin:admin-password').toString('base64')}`;
    const created = await fetch(`${started.url}api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'doors' }),
    });
    expect(created.status).toBe(201);
    const { sha1 } = (await created.json()) as { sha1: string };
    const me = await fetch(`${started.url}api/v1/user`, { headers: { authorization: `token ${sha1}` } });
    expect(await me.json()).toMatchObject({ login: 'admin', is_admin: true });
  });
});
