import * as net from 'node:net';
import pino from 'pino';
import { common, gatewayV1, orgsTeamsV1 } from '@platform/proto';
import { UnavailableError, DeadlineError, ConflictError, InputError } from '@platform/errors';
import { LogLines } from '@platform/testing';
import type { CallContext } from './call-context';
import { createClient as createKitClient, type ClientOptions } from './grpc-client';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { bindService } from './service-binding';
import { MAX_STRING_FIELD, serviceLimits, withLimits } from './limits';
import { createLogger } from './logger';

// The gateway's gRPC service has only GetVersion, which makes it a convenient test subject.
const Service = gatewayV1.GatewayServiceService;

// Every test runs over both transports: the network (separate processes) and the in-process call the kit
// makes when client and server share a process (npm start). They must behave the same.
let inProcess = false;
const createClient = <D>(definition: D, address: string, opts: ClientOptions) =>
  createKitClient(definition, address, { inProcess, ...opts });
const log = createLogger('test', 'silent');

/** A server whose GetVersion behaviour each test sets. */
async function serverWith(impl: (req: common.GetVersionRequest, requestId: string) => Promise<common.GetVersionResponse>, port = 0) {
  return startGrpcServer({
    name: 'test',
    port,
    host: '127.0.0.1',
    services: [bindService(Service, { getVersion: (req, ctx) => impl(req, ctx.requestId) })],
    protoFiles: ['platformadmin/gateway/v1/gateway.proto'],
    log,
  });
}

describe.each([
  ['the network', false],
  ['in process', true],
])('gRPC server and client from the service kit, over %s', (_transport, local) => {
  beforeAll(() => {
    inProcess = local;
  });
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

  it('logs a call that ends after its deadline, under its request id, with how long it took', async () => {
    const lines = new LogLines();
    // The handler ends just after its own deadline: over the network the server counts the call's timeout from when
    // the call reached it, so its deadline falls after the client's, later by the call's way there.
    const pastOwnDeadline = (ctx: CallContext) =>
      new Promise<void>((resolve) => setTimeout(resolve, ctx.deadline!.getTime() - Date.now() + 10));
    server = await startGrpcServer({
      name: 'test',
      port: 0,
      host: '127.0.0.1',
      services: [bindService(Service, { getVersion: async (_req, ctx) => (await pastOwnDeadline(ctx), { version: '1', service: 's' }) })],
      protoFiles: ['platformadmin/gateway/v1/gateway.proto'],
      log: pino({ level: 'info' }, lines.stream),
    });
    // Long enough for the call to reach the server on a busy machine: a call the client gave up before it arrived runs
    // no handler at all.
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams', deadlineMs: 1_000 });
    await expect(client.getVersion({}, { requestId: 'late-1' })).rejects.toBeInstanceOf(DeadlineError);
    const entry = await lines.first((l) => l.msg === 'call ended after its deadline');
    expect(entry).toMatchObject({
      level: 40,
      requestId: 'late-1',
      rpc: 'test.getVersion',
      tookMs: expect.any(Number),
      lateMs: expect.any(Number),
    });
    client.close();
  });

  it('lets an in-flight call finish during graceful shutdown', async () => {
    // The call is in the handler when the shutdown starts, and answers only after it started: events, not sleeps.
    const arrived = deferred<void>();
    const release = deferred<void>();
    server = await serverWith(async () => {
      arrived.resolve();
      await release.promise;
      return { version: 'late', service: 's' };
    });
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'orgs-teams' });
    const pending = client.getVersion({});
    await arrived.promise;
    const stopping = server.shutdown(5_000);
    server = undefined;
    release.resolve();
    await expect(pending).resolves.toMatchObject({ version: 'late' });
    await stopping;
    client.close();
  });
});

/** A GetVersion server whose handler sees the whole call context. */
async function serving(getVersion: (req: common.GetVersionRequest, ctx: CallContext) => Promise<common.GetVersionResponse>) {
  return startGrpcServer({
    name: 'test',
    port: 0,
    host: '127.0.0.1',
    services: [bindService(Service, { getVersion })],
    protoFiles: ['platformadmin/gateway/v1/gateway.proto'],
    log,
  });
}

/** A promise and its resolve function. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when the signal aborts (with how long after `since`), or after `ms` with undefined. */
const abortedWithin = (signal: AbortSignal, since: number, ms: number) =>
  new Promise<{ afterMs: number; reason: unknown } | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve({ afterMs: Date.now() - since, reason: signal.reason })), {
      once: true,
    });
  });

// Over the network only: in process there is no connection to wait for, and a backend's state (its logger) is one per
// name and process.
describe('a call its deadline ended, as its caller logs it', () => {
  let server: RunningGrpcServer | undefined;
  afterEach(() => server?.shutdown(100));

  it("logs, on the caller's side, a call its deadline ended, under its request id, with where the time went", async () => {
    const lines = new LogLines();
    const callerLog = pino({ level: 'info' }, lines.stream);
    server = await serverWith(() => new Promise((r) => setTimeout(() => r({ version: '1', service: 's' }), 1_000)));
    const client = createKitClient(Service, `127.0.0.1:${server.port}`, {
      name: 'slow-backend',
      deadlineMs: 100,
      inProcess: false,
      log: callerLog,
    });
    await expect(client.getVersion({}, { requestId: 'sent-1' })).rejects.toBeInstanceOf(DeadlineError);
    // Sent, and not answered: gRPC names the server it went to.
    expect(await lines.first((l) => l.requestId === 'sent-1')).toMatchObject({
      level: 40,
      msg: 'slow-backend did not answer in time',
      backend: 'slow-backend',
      method: '/platformadmin.gateway.v1.GatewayService/GetVersion',
      why: expect.stringContaining(`remote_addr=127.0.0.1:${server.port}`),
    });
    client.close();
    // A server that takes the connection and never speaks HTTP/2: the call never left the client.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    const stuck = createKitClient(Service, `127.0.0.1:${silentPort}`, {
      name: 'silent-backend',
      deadlineMs: 100,
      inProcess: false,
      log: callerLog,
    });
    try {
      await expect(stuck.getVersion({}, { requestId: 'unsent-1' })).rejects.toBeInstanceOf(DeadlineError);
      expect(await lines.first((l) => l.requestId === 'unsent-1')).toMatchObject({
        msg: 'silent-backend did not answer in time',
        why: expect.stringContaining('Waiting for LB pick'),
      });
    } finally {
      stuck.close();
      silent.close();
    }
  });
});

describe.each([
  ['the network', false],
  ['in process', true],
])('call context: request id, deadline and cancellation through every hop, over %s', (_transport, local) => {
  beforeAll(() => {
    inProcess = local;
  });
  const servers: RunningGrpcServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.shutdown(100)));
    servers.length = 0;
  });

  it('hands a handler the incoming deadline, and a signal that aborts when it passes', async () => {
    const seen = deferred<{ deadline?: Date; at: number; aborted?: { afterMs: number; reason: unknown } }>();
    let started = 0;
    const server = await serving(async (_req, ctx) => {
      const at = Date.now();
      seen.resolve({ deadline: ctx.deadline, at, aborted: await abortedWithin(ctx.signal, started, 2_000) });
      return { version: '1', service: 's' };
    });
    servers.push(server);
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'a' });
    started = Date.now();
    await expect(client.getVersion({}, { deadlineMs: 200 })).rejects.toBeInstanceOf(DeadlineError);
    const { deadline, at, aborted } = await seen.promise;
    // The call's 200 ms, not the client's default 5 s: gRPC sends what is left of it, which the server counts from
    // when the call reached it, so it ends no later than 200 ms (and a millisecond of rounding) after the handler ran.
    expect(deadline!.getTime()).toBeGreaterThan(started);
    expect(deadline!.getTime()).toBeLessThanOrEqual(at + 201);
    // Aborted by the deadline, not by the 2 s wait giving up (how long it took is the machine's business).
    expect(aborted?.reason).toBeInstanceOf(DeadlineError);
    client.close();
  });

  it('makes the per-call child logger only for a handler that logs', async () => {
    const child = jest.spyOn(log, 'child');
    let logs = false;
    const server = await serving(async (_req, ctx) => {
      if (logs) ctx.log.info('hello');
      return { version: '1', service: 's' };
    });
    servers.push(server);
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'a' });
    await client.getVersion({}, { requestId: 'quiet' });
    expect(child).not.toHaveBeenCalled();
    logs = true;
    await client.getVersion({}, { requestId: 'loud' });
    expect(child).toHaveBeenCalledWith({ requestId: 'loud', rpc: 'test.getVersion' });
    child.mockRestore();
    client.close();
  });

  it('cuts a chain client → A → B at the deadline A was given: B is cancelled, and B saw the request id', async () => {
    const atB = deferred<{ requestId: string; deadline?: Date; at: number; aborted?: { afterMs: number; reason: unknown } }>();
    const atA = deferred<{ err: unknown }>();
    let started = 0;
    // B is slow: it would take 20 s, far beyond A's deadline, and its own client's default of 5 s.
    const b = await serving(async (_req, ctx) => {
      const at = Date.now();
      atB.resolve({ requestId: ctx.requestId, deadline: ctx.deadline, at, aborted: await abortedWithin(ctx.signal, started, 20_000) });
      return { version: 'b', service: 'b' };
    });
    servers.push(b);
    const toB = createClient(Service, `127.0.0.1:${b.port}`, { name: 'b' });
    const a = await serving(async (_req, ctx) => {
      try {
        return await toB.getVersion({}, ctx);
      } catch (err) {
        atA.resolve({ err });
        throw err;
      }
    });
    servers.push(a);
    const toA = createClient(Service, `127.0.0.1:${a.port}`, { name: 'a' });

    started = Date.now();
    // 2 s: A counts its deadline from when it read the call, so under load the client's cancel at its own deadline
    // reaches A up to however long the call waited to be read before A's; within a quarter of the call's time, A
    // takes it for the deadline (call-context.ts).
    await expect(toA.getVersion({}, { requestId: 'chain-1', deadlineMs: 2_000 })).rejects.toBeInstanceOf(DeadlineError);
    const fromA = await atA.promise;
    expect(fromA.err).toBeInstanceOf(DeadlineError);
    const fromB = await atB.promise;
    expect(fromB.requestId).toBe('chain-1');
    // B's deadline is A's (what is left of the 2 s, counted from each hop's arrival; a millisecond of rounding a
    // hop), not B's client default of 5 s.
    expect(fromB.deadline!.getTime()).toBeLessThanOrEqual(fromB.at + 2_002);
    // Cancelled when A's deadline passed, not after its own 20 s.
    expect(fromB.aborted).toBeDefined();
    toA.close();
    toB.close();
  });

  it('takes the earlier of its own deadline and a given one, and cancels a call whose signal aborts', async () => {
    // The handler answers once its call is given up, or else after 2 s: a call that fails sooner failed by its
    // deadline or its signal, not by the client's own 5 s.
    let arrived = deferred<{ deadline?: Date; at: number }>();
    const server = await serving(async (_req, ctx) => {
      arrived.resolve({ deadline: ctx.deadline, at: Date.now() });
      await abortedWithin(ctx.signal, Date.now(), 2_000);
      return { version: '1', service: 's' };
    });
    servers.push(server);
    const client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'slow', deadlineMs: 5_000 });
    await expect(client.getVersion({}, { deadline: new Date(Date.now() + 100) })).rejects.toBeInstanceOf(DeadlineError);
    // The handler was given the 100 ms (what was left of them when the call arrived, and a millisecond of rounding).
    const { deadline, at } = await arrived.promise;
    expect(deadline!.getTime()).toBeLessThanOrEqual(at + 101);

    // Cancelled once the call is in the handler.
    arrived = deferred();
    const controller = new AbortController();
    const pending = client.getVersion({}, { signal: controller.signal });
    await arrived.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'unavailable', message: 'the call to slow was cancelled' });
    await expect(client.getVersion({}, { signal: controller.signal })).rejects.toBeInstanceOf(UnavailableError);
    client.close();
  });
});

describe.each([
  ['the network', false],
  ['in process', true],
])('gRPC message-size limits and bounded errors, over %s', (_transport, local) => {
  beforeAll(() => {
    inProcess = local;
  });
  const Users = orgsTeamsV1.OrgsTeamsServiceService;
  const user = (login: string) => orgsTeamsV1.User.fromPartial({ id: 1, login });
  let server: RunningGrpcServer | undefined;
  afterEach(() => server?.shutdown(100));
  /** What authenticate's 'slow' token waits for before it answers. */
  let slowAnswers = Promise.resolve();

  /** An orgs-teams stand-in: getUser echoes the login it is given, padded to `pad` characters. */
  async function usersServer(opts: { maxMessageBytes?: number; pad?: number; limits?: boolean } = {}) {
    const binding = bindService(Users, {
      getUser: async (req: orgsTeamsV1.GetUserRequest) => user(req.login.padEnd(opts.pad ?? 0, '.')),
      authenticate: async (req: orgsTeamsV1.AuthenticateRequest) => {
        if (req.token === 'slow') await slowAnswers;
        // As allowed-permissions once did: the whole input copied into the message (here 100,000 characters).
        if (req.token === 'echo') throw new InputError(`objectType '${'x'.repeat(100_000)}' is invalid`);
        if (req.token !== 'ok' && req.token !== 'slow') throw new InputError('invalid token');
        return { user: user('ok'), tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: [] };
      },
    } as never);
    const limited = opts.limits ? withLimits([serviceLimits(Users, { getUser: { login: 40 } })], [binding]) : [binding];
    return startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: limited,
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
      log,
      maxMessageBytes: opts.maxMessageBytes,
    });
  }

  it('refuses a request over the limit with 413 "request too large"; the channel keeps working', async () => {
    server = await usersServer({ maxMessageBytes: 64 * 1024 });
    const client = createClient(Users, `127.0.0.1:${server.port}`, { name: 'orgs-teams', maxMessageBytes: 64 * 1024 });
    const err = await client.getUser({ id: 0, login: 'x'.repeat(100_000) }).catch((e) => e);
    expect(err).toMatchObject({ httpStatus: 413, message: expect.stringMatching(/^request too large: the call to orgs-teams/) });
    expect(err.message).not.toContain('xxxx');
    await expect(client.getUser({ id: 0, login: 'alice' })).resolves.toMatchObject({ login: 'alice' });
    client.close();
  });

  it('refuses an answer over the limit with 413 "response too large"', async () => {
    server = await usersServer({ maxMessageBytes: 64 * 1024, pad: 100_000 });
    const client = createClient(Users, `127.0.0.1:${server.port}`, { name: 'orgs-teams', maxMessageBytes: 64 * 1024 });
    await expect(client.getUser({ id: 0, login: 'alice' })).rejects.toMatchObject({
      httpStatus: 413,
      message: expect.stringMatching(/^response too large: the answer of orgs-teams/),
    });
    client.close();
  });

  it('maps a message refused by a server with a lower limit than its client to 413 as well', async () => {
    server = await usersServer({ maxMessageBytes: 16 * 1024 });
    const client = createClient(Users, `127.0.0.1:${server.port}`, { name: 'orgs-teams', maxMessageBytes: 1024 * 1024 });
    await expect(client.getUser({ id: 0, login: 'x'.repeat(100_000) })).rejects.toMatchObject({
      httpStatus: 413,
      message: expect.stringMatching(/^message too large/),
    });
    client.close();
  });

  it('answers an error quoting 100,000 characters of input at once, cut short, while a concurrent call is unaffected', async () => {
    // Before errors were bounded, a 100,000-character status message overflowed the HTTP/2 header-list limit
    // and stalled the shared connection: this call and every other one waited for their deadlines.
    // A stalled connection would show as deadline errors: the other call, in flight on the same connection until
    // this one's error has arrived, and this one.
    server = await usersServer();
    const client = createClient(Users, `127.0.0.1:${server.port}`, { name: 'orgs-teams', deadlineMs: 3_000 });
    let echoAnswered!: () => void;
    slowAnswers = new Promise((resolve) => (echoAnswered = resolve));
    const other = client.authenticate({ token: 'slow' });
    const err = await client.authenticate({ token: 'echo' }).catch((e) => e);
    echoAnswered();
    expect(err).toBeInstanceOf(InputError);
    expect(err.message.length).toBeLessThanOrEqual(1024);
    await expect(other).resolves.toMatchObject({ tokenId: 1 });
    client.close();
  });

  it('checks the declared field limits, and MAX_STRING_FIELD for any other string, before the handler runs', async () => {
    server = await usersServer({ limits: true });
    const client = createClient(Users, `127.0.0.1:${server.port}`, { name: 'orgs-teams' });
    await expect(client.getUser({ id: 0, login: 'x'.repeat(41) })).rejects.toMatchObject({
      kind: 'input',
      message: 'login: at most 40 characters',
      fieldViolations: [{ field: 'login', description: 'at most 40 characters' }],
    });
    await expect(client.getUser({ id: 0, login: 'x'.repeat(40) })).resolves.toMatchObject({ login: 'x'.repeat(40) });
    await expect(client.authenticate({ token: 'x'.repeat(MAX_STRING_FIELD + 1) })).rejects.toMatchObject({
      kind: 'input',
      message: `token: at most ${MAX_STRING_FIELD} characters`,
    });
    client.close();
  });
});
