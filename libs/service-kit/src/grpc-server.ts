import { randomUUID } from 'node:crypto';
import {
  Metadata,
  Server,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status as Status,
  ServerCredentials,
  type ServerInterceptor,
  type ServiceDefinition,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { DomainError, toGrpcStatus, truncate } from '@platform/errors';
import { methodPolicy, PROTO_ROOT, type MethodPolicy } from '@platform/proto';
import { LazyCallContext, type CallContext, type Caller } from './call-context';
import { admit, callerOf, type Admitted, type CallerAccess } from './caller';
import { serveLocally, stopServingLocally, type LocalMethod, type LocalStreamMethod } from './in-process';
import { checkRequestLimits, DEFAULT_GRPC_MAX_MESSAGE_BYTES, grpcMessageOptions, NO_CHANNELZ } from './limits';
import { fullServiceName, REQUEST_ID_KEY, type FieldLimits, type ServiceBinding, type UnaryMethod } from './service-binding';
import type { Logger } from './logger';
import { addReflection } from './reflection';
import { measuredHandlers } from './rpc-telemetry';

export interface GrpcServerOptions {
  name: string;
  port: number;
  /** The interface to listen on (GRPC_HOST); default loopback only. */
  host?: string;
  /** How service accounts are authenticated and authorized; without it only platform apps are admitted. */
  access?: CallerAccess;
  services: ServiceBinding<any>[];
  /** .proto files (relative to the proto root) offered through server reflection; none: no reflection service. */
  protoFiles: string[];
  log: Logger;
  /** Largest message received or sent (GRPC_MAX_MESSAGE_BYTES); default 4 MiB. */
  maxMessageBytes?: number;
}

export interface RunningGrpcServer {
  port: number;
  /**
   * Readiness: the health status of every served service (not of "", the whole server, which stays SERVING
   * while the process runs, so liveness is not affected).
   */
  setServing(serving: boolean): void;
  /** Inflight calls finish (up to graceMs), then the server closes. */
  shutdown(graceMs?: number): Promise<void>;
}

/** The incoming call's context: its request id (x-request-id, else a new one), its deadline, its cancellation. */
function contextOf(call: ServerUnaryCall<unknown, unknown>, log: Logger, rpc: string): LazyCallContext {
  const requestId = String(call.metadata.get(REQUEST_ID_KEY)[0] ?? randomUUID());
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return new LazyCallContext(requestId, log, { rpc }, Number.isFinite(ms) ? new Date(ms) : undefined, call);
}

type Handler = (req: unknown, ctx: CallContext) => Promise<unknown>;
type StreamHandler = (req: unknown, ctx: CallContext) => AsyncIterable<unknown>;

/** The call once its caller is known and admitted by the method's policy, its request within its field limits. */
async function admitted(
  method: Served,
  request: unknown,
  ctx: LazyCallContext,
  caller: (ctx: CallContext) => Caller | Promise<Caller>,
): Promise<Admitted> {
  const who = await caller(ctx);
  ctx.caller = who;
  const named = method.names ? await method.names(request, ctx) : request;
  const call = await admit(method.policy, who, named, method.access, ctx);
  checkRequestLimits(call.request, method.limits);
  return call;
}

/** A failure as the gRPC status it is answered with; only our own faults go to the error log. */
function failed(log: Logger, ctx: LazyCallContext, err: unknown) {
  if (!(err instanceof DomainError) || err.kind === 'internal') ctx.log.error({ err }, 'call failed');
  else if (log.isLevelEnabled('debug')) ctx.log.debug({ kind: err.kind, message: truncate(err.message) }, 'call refused');
  return toGrpcStatus(err);
}

/**
 * Says so when a call ends after its deadline: its caller was answered 504 (or had given up) long before, and only
 * this line, under the request id, tells which method took the time and how long.
 */
function answeredLate(ctx: LazyCallContext): void {
  const deadline = ctx.deadline?.getTime();
  if (deadline === undefined || Date.now() <= deadline) return;
  ctx.log.warn({ tookMs: Math.round(performance.now() - ctx.arrivedAt), lateMs: Date.now() - deadline }, 'call ended after its deadline');
}

/**
 * One call of a method, whichever transport brought it: field limits, the handler, logging, and failures
 * as gRPC statuses (the rejection is the status the client maps back to a DomainError).
 */
function serveCall(
  log: Logger,
  method: Served,
  request: unknown,
  ctx: LazyCallContext,
  caller: (ctx: CallContext) => Caller | Promise<Caller>,
): Promise<unknown> {
  return admitted(method, request, ctx, caller)
    .then(async (call) => call.answer(await (method.handler as Handler)(call.request, ctx)))
    .finally(() => answeredLate(ctx))
    .catch((err: unknown) => {
      throw failed(log, ctx, err);
    })
    .finally(() => ctx.end());
}

/**
 * A streaming method's handler as a grpc-js server-streaming handler: admitted as a unary call is, each message
 * written as the handler yields it, the next asked for only once the stream has room (so what the handler reads
 * from a cursor waits on a slow reader rather than piling up here), a failure ending the stream with its status.
 * A caller that goes away stops the handler's iteration.
 */
function wrapStream(log: Logger, method: Served) {
  return (call: ServerWritableStream<unknown, unknown>) => {
    const ctx = contextOf(call, log, method.rpc);
    const room = () =>
      new Promise<void>((resolve) => {
        const go = () => {
          call.off('drain', go);
          call.off('cancelled', go);
          resolve();
        };
        call.on('drain', go);
        call.on('cancelled', go);
      });
    (async () => {
      const admittedCall = await admitted(method, call.request, ctx, (c) => callerOf(call.metadata, method.access, c));
      for await (const message of (method.handler as StreamHandler)(admittedCall.request, ctx)) {
        if (call.cancelled) return;
        const answer = await admittedCall.answer(message);
        if (call.cancelled) return;
        if (!call.write(answer)) await room();
        if (call.cancelled) return;
      }
      call.end();
    })()
      .catch((err: unknown) => {
        if (!call.cancelled) call.emit('error', failed(log, ctx, err));
      })
      .finally(() => ctx.end());
  };
}

/** What serving one method takes: its handler, field limits, policy, and how service accounts are checked. */
interface Served {
  rpc: string;
  handler: Handler | StreamHandler;
  limits: FieldLimits | undefined;
  /** The request with what it names by another name resolved (ServiceBinding.names). */
  names: ((request: unknown, ctx: CallContext) => Promise<unknown>) | undefined;
  policy: MethodPolicy;
  access: CallerAccess | undefined;
}

/** A promise handler as a grpc-js unary handler; the caller is who its metadata's credential names. */
function wrap(log: Logger, method: Served) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    serveCall(log, method, call.request, contextOf(call, log, method.rpc), (ctx) => callerOf(call.metadata, method.access, ctx)).then(
      (response) => callback(null, response),
      (status) => callback(status),
    );
  };
}

/**
 * The same handler for callers in this process: encoded request in, encoded response out (in-process.ts),
 * with the server's message-size limits answered as grpc-js answers them.
 */
function wrapLocal(log: Logger, served: Served, method: UnaryMethod, maxBytes: number): LocalMethod {
  const tooLarge = (details: string) => ({ code: Status.RESOURCE_EXHAUSTED, details, metadata: new Metadata() });
  // Only the platform's own code runs in this process, so an in-process call comes from a platform app.
  const caller: Caller = { kind: 'app', app: 'in-process' };
  return async (bytes, call) => {
    if (bytes.length > maxBytes) throw tooLarge(`Received message larger than max (${bytes.length} vs ${maxBytes})`);
    const ctx = new LazyCallContext(call.requestId, log, { rpc: served.rpc }, call.deadline, call);
    const answer = method.responseSerialize((await serveCall(log, served, method.requestDeserialize(bytes), ctx, () => caller)) as never);
    if (answer.length > maxBytes) throw tooLarge(`Sent message larger than max (${answer.length} vs ${maxBytes})`);
    return answer;
  };
}

/**
 * A streaming handler for callers in this process: encoded messages yielded as the caller asks for them (so the
 * same backpressure as on the wire: the handler runs only as far as the caller reads), each within the message
 * limit, a failure as the gRPC status the network would carry.
 */
function wrapLocalStream(log: Logger, served: Served, method: UnaryMethod, maxBytes: number): LocalStreamMethod {
  const tooLarge = (details: string) => ({ code: Status.RESOURCE_EXHAUSTED, details, metadata: new Metadata() });
  const caller: Caller = { kind: 'app', app: 'in-process' };
  return async function* (bytes, call) {
    if (bytes.length > maxBytes) throw tooLarge(`Received message larger than max (${bytes.length} vs ${maxBytes})`);
    const ctx = new LazyCallContext(call.requestId, log, { rpc: served.rpc }, call.deadline, call);
    try {
      const admittedCall = await admitted(served, method.requestDeserialize(bytes), ctx, () => caller);
      for await (const message of (served.handler as StreamHandler)(admittedCall.request, ctx)) {
        if (call.cancelled) return;
        const answer = method.responseSerialize((await admittedCall.answer(message)) as never);
        if (answer.length > maxBytes) throw tooLarge(`Sent message larger than max (${answer.length} vs ${maxBytes})`);
        yield answer;
      }
    } catch (err) {
      throw (err as { code?: unknown }).code === Status.RESOURCE_EXHAUSTED ? err : failed(log, ctx, err);
    } finally {
      ctx.end();
    }
  };
}

/** Starts a gRPC server with the standard health service and reflection. */
export async function startGrpcServer(opts: GrpcServerOptions): Promise<RunningGrpcServer> {
  // Both limits explicit: a larger message is refused with RESOURCE_EXHAUSTED, which clients map to 413.
  const server = new Server({
    ...grpcMessageOptions(opts.maxMessageBytes),
    ...NO_CHANNELZ,
    interceptors: [authenticatedReflection(opts.access, opts.log)],
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- with reflection below: loaded by a serving process only
  const { HealthImplementation } = require('grpc-health-check') as typeof import('grpc-health-check');
  const health = new HealthImplementation({ '': 'SERVING' });
  health.addToServer(server);
  const serviceNames: string[] = [];
  const local = new Map<string, LocalMethod | LocalStreamMethod>();
  for (const svc of opts.services) {
    const impl: UntypedServiceImplementation = {};
    const serviceName = fullServiceName(svc.definition);
    serviceNames.push(serviceName);
    for (const [method, handler] of Object.entries(measuredHandlers(opts.name, svc.definition, svc.handlers))) {
      const definition = (svc.definition as Record<string, UnaryMethod>)[method];
      const policy = methodPolicy(definition.path);
      // A method nobody declared a policy for is not served at all (libs/proto method-policy.ts).
      if (!policy) throw new Error(`${definition.path} has no policy in the method-policy table`);
      const names = (svc.names as Record<string, Served['names']> | undefined)?.[method];
      const served: Served = { rpc: `${opts.name}.${method}`, handler, limits: svc.limits?.[method], names, policy, access: opts.access };
      const maxBytes = opts.maxMessageBytes ?? DEFAULT_GRPC_MAX_MESSAGE_BYTES;
      impl[method] = definition.responseStream ? wrapStream(opts.log, served) : wrap(opts.log, served);
      local.set(
        definition.path,
        definition.responseStream
          ? wrapLocalStream(opts.log, served, definition, maxBytes)
          : wrapLocal(opts.log, served, definition, maxBytes),
      );
    }
    server.addService(svc.definition as unknown as ServiceDefinition, impl);
    health.setStatus(serviceName, 'SERVING');
  }
  // A stand-in server with no .proto files to offer has no reflection, and never loads its modules.
  if (opts.protoFiles.length > 0) addReflection(server, opts.protoFiles, PROTO_ROOT);

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host ?? '127.0.0.1'}:${opts.port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  serveLocally(port, local);
  return {
    port,
    setServing(serving) {
      for (const name of serviceNames) health.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
    },
    async shutdown(graceMs = 10_000) {
      stopServingLocally(port, local);
      health.setStatus('', 'NOT_SERVING');
      for (const name of serviceNames) health.setStatus(name, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/**
 * Server reflection answers only callers with credentials (an app or a service account): the list of methods
 * is no secret, but nothing on this port answers a stranger. Health stays open for probes.
 */
function authenticatedReflection(access: CallerAccess | undefined, log: Logger): ServerInterceptor {
  return (method, call) => {
    if (!method.path.startsWith('/grpc.reflection.')) return new ServerInterceptingCall(call);
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next(
          new ServerListenerBuilder()
            .withOnReceiveMetadata((metadata, pass) => {
              const ctx = new LazyCallContext(randomUUID(), log, { rpc: 'reflection' });
              callerOf(metadata, access, ctx).then(
                () => pass(metadata),
                (err: unknown) => {
                  const status = toGrpcStatus(err);
                  call.sendStatus({
                    code: status.code ?? Status.UNAUTHENTICATED,
                    details: status.details ?? '',
                    metadata: status.metadata,
                  });
                },
              );
            })
            .build(),
        ),
    });
  };
}
