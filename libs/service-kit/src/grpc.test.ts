import { common, gatewayV1 } from '@platform/proto';
import { UnavailableError, DeadlineError, ConflictError } from '@platform/errors';
import { createClient } from './grpc-client';
import { bindService, startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { createLogger } from './logger';

// The gateway's gRPC service has only GetVersion, which makes it a convenient test subject.
const Service = gatewayV1.GatewayServiceService;
const log = createLogger('test', 'silent');

/** A server whose GetVersion behaviour each test sets. */
async function serverWith(impl: (req: common.GetVersionRequest, requestId: string) => Promise<common.GetVersionResponse>, port = 0) {
  return startGrpcServer({
    name: 'test',
    port,
    host: '127.0.0.1',
    services: [bindService(Service, { getVersion: (req, ctx) => impl(req, ctx.requestId) })],
    protoFiles: ['platform/gateway/v1/gateway.proto'],
    log,
  });
}

describe('gRPC server and client from the service kit', () => {
  let server: RunningGrpcServer | undefined;
  afterEach(() => server?.shutdown(100));

  it('carries the request id from client to handler', async () => {
    let seen = '';
    server = await serverWith(async (_req, requestId) => ((seen = requestId), { version: '1', service: 's' }));
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams' });
    await client.getVersion({}, { requestId: 'req-123' });
    expect(seen).toBe('req-123');
    client.close();
  });

  it('turns thrown domain errors into the same errors on the client', async () => {
    server = await serverWith(async () => {
      throw new ConflictError('already a member');
    });
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams' });
    await expect(client.getVersion({})).rejects.toMatchObject({ kind: 'conflict', message: 'already a member' });
    client.close();
  });

  it('reports an unreachable server as 503 naming the service', async () => {
    const client = createClient(Service, '127.0.0.1:1', { name: 'orgs-teams', idempotent: ['getVersion'] });
    const err = await client.getVersion({}).catch((e) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toBe('orgs-teams is unavailable');
    client.close();
  });

  it('fails a slow call with a deadline error', async () => {
    server = await serverWith(() => new Promise((r) => setTimeout(() => r({ version: '1', service: 's' }), 500)));
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams', deadlineMs: 50 });
    await expect(client.getVersion({})).rejects.toBeInstanceOf(DeadlineError);
    client.close();
  });

  it('lets an in-flight call finish during graceful shutdown', async () => {
    server = await serverWith(() => new Promise((r) => setTimeout(() => r({ version: 'late', service: 's' }), 200)));
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams' });
    const pending = client.getVersion({});
    await new Promise((r) => setTimeout(r, 50));
    const stopping = server.shutdown(5_000);
    server = undefined;
    await expect(pending).resolves.toMatchObject({ version: 'late' });
    await stopping;
    client.close();
  });
});
