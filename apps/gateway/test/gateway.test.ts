import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import { startTestGateway } from './test-gateway';

const log = createLogger('gateway-test', 'silent');

/** A stand-in orgs-teams backend: a real gRPC server answering GetVersion. */
const startOrgsTeams = (port = 0) =>
  startGrpcServer({
    name: 'orgs-teams',
    port,
    host: '127.0.0.1',
    // Only GetVersion is needed here; the other methods answer UNIMPLEMENTED.
    services: [
      bindService(orgsTeamsV1.OrgsTeamsServiceService, { getVersion: async () => ({ version: '9.9.9', service: 'orgs-teams' }) } as never),
    ],
    protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
    log,
  });

/** A stand-in webhook listener HTTP server. */
async function startListener(): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ version: 'listener', path: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

// No built console (CONSOLE_DIR names an empty folder): the start page lists the services.
const noConsole = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-no-console-'));
const gateway = (env: Record<string, string>) => startTestGateway({ CONSOLE_DIR: noConsole, ...env }, log);

describe('gateway', () => {
  let orgsTeams: RunningGrpcServer;
  let listener: { url: string; close(): void };
  beforeAll(async () => {
    orgsTeams = await startOrgsTeams();
    listener = await startListener();
  });
  afterAll(async () => {
    await orgsTeams.shutdown(100);
    listener.close();
  });

  describe('on a hosted deployment', () => {
    let gw: Awaited<ReturnType<typeof gateway>>;
    beforeAll(async () => {
      gw = await gateway({
        DEPLOYMENT_TYPE: 'Hosted',
        ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.port}`,
        MARKETPLACE_LISTENER_HTTP_URL: listener.url,
      });
    });
    afterAll(() => gw.close());

    it('answers GET /api/v1/version from the backend over gRPC', async () => {
      const res = await fetch(`${gw.base}/api/v1/version`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ version: '9.9.9' });
      expect(res.headers.get('x-request-id')).toMatch(/[0-9a-f-]{36}/);
    });

    it('answers unknown API routes with 404 JSON', async () => {
      const res = await fetch(`${gw.base}/api/v1/no/such/route`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: 'no route for GET /api/v1/no/such/route', url: expect.any(String) });
    });

    it('answers a malformed JSON body with 422, never 500', async () => {
      const res = await fetch(`${gw.base}/api/v1/version`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":',
      });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({ message: 'malformed JSON body', url: expect.any(String) });
    });

    it('lets the marketplace path fall through to the web frontend (200 text/html)', async () => {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(`${gw.base}/marketplace/api/v1/version`, { method });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      }
    });

    it('serves the API document listing the registered routes', async () => {
      const doc = (await (await fetch(`${gw.base}/api/v1/openapi.json`)).json()) as { openapi: string; paths: object };
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths)).toContain('/version');
    });

    it('shows service status on the start page when no console is built', async () => {
      const html = await (await fetch(`${gw.base}/`)).text();
      expect(html).toContain('<td>orgs-teams</td><td class="up">up</td>');
      expect(html).toContain('<td>clusters</td><td class="unreachable">unreachable</td>');
    });
  });

  describe('on a marketplace deployment', () => {
    let gw: Awaited<ReturnType<typeof gateway>>;
    let backend: RunningGrpcServer | undefined;
    beforeAll(async () => {
      backend = await startOrgsTeams();
      gw = await gateway({
        DEPLOYMENT_TYPE: 'ProviderBMarketplace',
        ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${backend.port}`,
        MARKETPLACE_LISTENER_HTTP_URL: listener.url,
      });
    });
    afterAll(async () => {
      gw.close();
      await backend?.shutdown(100);
    });

    it('routes /marketplace/api/v1 to the webhook listener, path intact', async () => {
      const res = await fetch(`${gw.base}/marketplace/api/v1/version`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ version: 'listener', path: '/marketplace/api/v1/version' });
    });

    it('answers 503 only for the routes of an unreachable backend, and recovers when it returns', async () => {
      const port = backend!.port;
      await backend!.shutdown(100);
      backend = undefined;
      const down = await fetch(`${gw.base}/api/v1/version`);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('2');
      expect(await down.json()).toEqual({ message: 'orgs-teams is unavailable', url: expect.any(String) });
      // Routes of other apps are unaffected.
      expect((await fetch(`${gw.base}/marketplace/api/v1/version`)).status).toBe(200);
      expect((await fetch(`${gw.base}/`)).status).toBe(200);

      backend = await startOrgsTeams(port);
      await eventually(async () => (await fetch(`${gw.base}/api/v1/version`)).status === 200, 10_000, 200);
    });

    it('answers 503 JSON when the webhook listener is unreachable', async () => {
      const other = await gateway({ DEPLOYMENT_TYPE: 'ProviderAMarketplace', MARKETPLACE_LISTENER_HTTP_URL: 'http://127.0.0.1:1' });
      try {
        const res = await fetch(`${other.base}/marketplace/api/v1/version`);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        expect(await res.json()).toEqual({ message: 'marketplace-listener is unavailable', url: expect.any(String) });
      } finally {
        other.close();
      }
    });
  });
});

describe('a write whose backend does not answer in time', () => {
  let backend: RunningGrpcServer;
  let gw: Awaited<ReturnType<typeof gateway>>;
  beforeAll(async () => {
    // Signs `ann` in, then never answers the token she asks for (the change may have been made all the same), nor her list.
    backend = await startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(orgsTeamsV1.OrgsTeamsServiceService, {
          authenticateBasic: async () => orgsTeamsV1.AuthenticateResponse.fromPartial({ user: { id: 7, login: 'ann', active: true } }),
          createToken: () => new Promise(() => {}),
          listTokens: () => new Promise(() => {}),
        } as never),
      ],
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
      log,
    });
    gw = await gateway({ DEPLOYMENT_TYPE: 'Hosted', ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${backend.port}`, BACKEND_DEADLINE_MS: '500' });
  });
  afterAll(async () => {
    gw.close();
    await backend.shutdown(100);
  });

  it('answers 504 saying the outcome is unknown and how to find out, never that the change failed; a read says it was late', async () => {
    const res = await fetch(`${gw.base}/api/v1/users/ann/tokens`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli' }),
    });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      message: 'orgs-teams did not answer in time: whether the change was made is unknown; read it back before repeating the request',
      url: expect.any(String),
    });
    // A read changes nothing: its 504 says only that the backend was late.
    const read = await fetch(`${gw.base}/api/v1/users/ann/tokens`, {
      headers: { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` },
    });
    expect(read.status).toBe(504);
    expect(await read.json()).toEqual({ message: 'orgs-teams did not answer in time', url: expect.any(String) });
  });
});

describe('NUL characters in requests', () => {
  let gw: Awaited<ReturnType<typeof gateway>>;
  beforeAll(async () => {
    gw = await gateway({ DEPLOYMENT_TYPE: 'Hosted', ORGS_TEAMS_GRPC_ADDR: '127.0.0.1:1' });
  });
  afterAll(() => gw.close());

  it('answers 400 for a NUL in the path, the query or the body, before any backend is asked', async () => {
    for (const [path, init] of [
      ['/api/v1/orgs/%00', {}],
      ['/api/v1/version?org=%00', {}],
      ['/api/v1/orgs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"a\\u0000"}' }],
    ] as const) {
      const res = await fetch(`${gw.base}${path}`, init);
      expect([path, res.status]).toEqual([path, 400]);
    }
  });
});

describe('over-long path parameters, query values and bodies', () => {
  // No backend is reachable: any request that got past the edge would answer 503.
  let gw: Awaited<ReturnType<typeof gateway>>;
  beforeAll(async () => {
    gw = await gateway({ DEPLOYMENT_TYPE: 'Hosted', ORGS_TEAMS_GRPC_ADDR: '127.0.0.1:1', AUTHZ_GRPC_ADDR: '127.0.0.1:1' });
  });
  afterAll(() => gw.close());

  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${gw.base}/api/v1${path}`, init);
    return { status: res.status, body: (await res.json()) as { message: string; errors?: unknown[] } };
  };

  it('answers 404 for an organization or user name longer than any login, quoting only its start', async () => {
    const long = 'a'.repeat(10_000);
    for (const path of [`/orgs/${long}`, `/orgs/${long}/members`, `/orgs/acme/members/${long}`]) {
      const res = await get(path);
      expect([path.slice(0, 30), res.status]).toEqual([path.slice(0, 30), 404]);
      expect(res.body.message).toMatch(/does not exist$/);
      expect(res.body.message.length).toBeLessThan(200);
    }
    // One character over the limit: still 404, and short enough to be quoted whole.
    expect((await get(`/orgs/${'a'.repeat(41)}`)).body.message).toBe(`organization "${'a'.repeat(41)}" does not exist`);
    // `?org=` is the org context's: 403 or 404 depends on who asks (edge-org-context.test.ts), so it comes after
    // authentication, and is never the 400 of an over-long query value.
    expect(await get(`/authz/roles?org=${long}`)).toEqual({ status: 401, body: { message: 'token is required', url: expect.any(String) } });
  });

  it('answers 400 naming the parameter and its limit for any other long path parameter or query value', async () => {
    expect(await get(`/teams/${'1'.repeat(300)}`)).toEqual({
      status: 400,
      body: {
        message: 'path parameter teamid: at most 255 characters',
        errors: [{ field: 'path.teamid', description: 'at most 255 characters' }],
        url: expect.any(String),
      },
    });
    expect(await get(`/version?q=${'x'.repeat(2000)}`)).toEqual({
      status: 400,
      body: {
        message: 'query parameter q: at most 1024 characters',
        errors: [{ field: 'query.q', description: 'at most 1024 characters' }],
        url: expect.any(String),
      },
    });
    expect((await get(`/version?q[a][b]=${'x'.repeat(2000)}`)).status).toBe(400);
  });

  it('answers 413 for a JSON body over 1 MB, without echoing it', async () => {
    const res = await get('/orgs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'acme', description: 'd'.repeat(2 * 1024 * 1024) }),
    });
    expect(res).toEqual({ status: 413, body: { message: 'request body too large', url: expect.any(String) } });
  });
});
