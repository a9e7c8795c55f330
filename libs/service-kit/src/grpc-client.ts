import { randomUUID } from 'node:crypto';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { DomainError, fromGrpcError, messageSizeError, UnavailableError, DeadlineError } from '@platform/errors';
import { status as Status } from '@grpc/grpc-js';
import { fullServiceName, REQUEST_ID_KEY } from './service-binding';
import { appCredential } from './app-credential';
import { LocalCall, localMethod, type LocalMethod, type LocalStreamMethod } from './in-process';
import { atDeadline } from './call-context';
import { DEFAULT_GRPC_MAX_MESSAGE_BYTES, grpcMessageOptions, NO_CHANNELZ } from './limits';
import { answersStream, measuredCall, measuredStreamCall, methodPath } from './rpc-telemetry';
import { backendState } from './backend-state';
import type { Logger } from './logger';

type RequestOf<M> = M extends { requestSerialize: (v: infer R) => Buffer } ? R : never;
type ResponseOf<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;

/**
 * Per-call options. A handler passes its CallContext here (`client.method(req, ctx)`): the call then carries
 * the incoming request id, ends by the incoming deadline at the latest, and is cancelled with the incoming call.
 */
export interface CallOptions {
  requestId?: string;
  /** Milliseconds before the call fails with 504; default from the client. */
  deadlineMs?: number;
  /** A point in time the call must not outlive (the incoming call's deadline); the earlier of it and deadlineMs wins. */
  deadline?: Date;
  /** Cancels the call when it aborts (the incoming call was cancelled or its deadline passed). */
  signal?: AbortSignal;
  /**
   * Extra metadata (the caller's identity, for example). A call that brings its own goes over the network even to a
   * server of this process: only there is the credential it presents checked.
   */
  metadata?: Record<string, string>;
  /**
   * When the request this call serves arrived (`performance.now()` in this process). Not sent: a client that answers
   * from kept answers reads it, so the request fences at most once (Bus.caughtUp).
   */
  arrivedAt?: number;
}

/**
 * A promise client for a generated service: one method per RPC, answering a promise, or, for a method that
 * answers a stream, an async iterable of its messages (stopping the iteration early cancels the call).
 */
export type PromiseClient<D> = {
  [K in keyof D]: D[K] extends { responseStream: true }
    ? (request: RequestOf<D[K]>, opts?: CallOptions) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, opts?: CallOptions) => Promise<ResponseOf<D[K]>>;
} & { close(): void; readonly target: string };

export interface ClientOptions {
  /** Human name used in "X is unavailable" messages, e.g. "orgs-teams". */
  name: string;
  /** Default deadline per call. */
  deadlineMs?: number;
  /** Method names (as in the definition, e.g. "getVersion") that are safe to retry when the server is unreachable. */
  idempotent?: string[];
  /** Largest request sent and answer accepted (GRPC_MAX_MESSAGE_BYTES); default 4 MiB. Larger ones fail with 413. */
  maxMessageBytes?: number;
  /** Call a server of this same process directly (in-process.ts); default true. False: always the network. */
  inProcess?: boolean;
  /** Where the backend's outages are logged (once when one starts, once when it ends); default a logger of its own. */
  log?: Logger;
}

/**
 * A client of every service in an app's table (its client library's `*_SERVICES`), under the same names: the one
 * list of what an app serves, which its clients and its test stand-ins (@platform/service-testing) are both made from.
 */
export function createClients<S extends Record<string, object>>(
  services: S,
  address: string,
  opts: ClientOptions,
): { [K in keyof S]: PromiseClient<S[K]> } {
  return Object.fromEntries(Object.entries(services).map(([name, definition]) => [name, createClient(definition, address, opts)])) as {
    [K in keyof S]: PromiseClient<S[K]>;
  };
}

/**
 * Creates a client whose methods return promises, carry the request id and a deadline (never later than a
 * `deadline` given with the call), are cancelled when a given `signal` aborts, and turn failures back into
 * DomainErrors. Retries of idempotent calls use grpc-js's own retry policy.
 */
export function createClient<D>(definition: D, address: string, opts: ClientOptions): PromiseClient<D> {
  const serviceName = fullServiceName(definition);
  const methods = Object.entries(definition as Record<string, { path: string }>);
  const retryNames = methods
    .filter(([key]) => opts.idempotent?.includes(key))
    .map(([, m]) => ({ service: serviceName, method: m.path.split('/')[2] }));
  const serviceConfig = {
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig:
      retryNames.length === 0
        ? []
        : [
            {
              name: retryNames,
              retryPolicy: {
                maxAttempts: 3,
                initialBackoff: '0.1s',
                maxBackoff: '1s',
                backoffMultiplier: 2,
                retryableStatusCodes: ['UNAVAILABLE'],
              },
            },
          ],
  };
  const Ctor = makeGenericClientConstructor(definition as unknown as ServiceDefinition, serviceName);
  const client: Client = new Ctor(address, credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify(serviceConfig),
    // Reconnect quickly and keep trying every half second at most, so a restarted backend is used again as soon as
    // it is ready rather than after a backoff of seconds (a connection attempt to a loopback or in-cluster address
    // costs next to nothing).
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
    'grpc.keepalive_time_ms': 30_000,
    ...grpcMessageOptions(opts.maxMessageBytes),
    ...NO_CHANNELZ,
  });
  const state = backendState(opts.name, opts.log);
  const maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_GRPC_MAX_MESSAGE_BYTES;
  const defaultDeadline = opts.deadlineMs ?? 5_000;
  const out: Record<string, unknown> = {
    close: () => client.close(),
    target: address,
  };
  /**
   * Whether a call may go to a server of this process without the network: not when the client is told not to, nor
   * when the caller brings its own metadata (a credential of its own): an in-process call is always this process's
   * app, so only the network path can check what the caller presents.
   */
  const inProcess = (callOpts: CallOptions) => opts.inProcess !== false && !callOpts.metadata;

  /** The call's metadata: its request id, the platform's own credential unless the caller brings one. */
  const metadataOf = (requestId: string, callOpts: CallOptions) => {
    const md = new Metadata();
    md.set(REQUEST_ID_KEY, requestId);
    // The platform's own credential; a caller's own metadata (a service account's token, in tests) replaces it.
    md.set('authorization', `Bearer ${appCredential().token()}`);
    for (const [k, v] of Object.entries(callOpts.metadata ?? {})) md.set(k, v);
    return md;
  };
  const deadlineOf = (callOpts: CallOptions) =>
    new Date(Math.min(Date.now() + (callOpts.deadlineMs ?? defaultDeadline), callOpts.deadline?.getTime() ?? Infinity));
  const late = () => new DeadlineError(`${opts.name} did not answer in time`);
  /**
   * Why a call its caller's signal cut short failed: the deadline when the signal says that was its cause (an incoming
   * call's context counts its caller's cancel at the deadline as the deadline) or ours has passed (it is never later
   * than the incoming one), else a cancellation. Not the clock alone: on a loaded machine the caller's cancel at its
   * deadline can arrive before ours passes.
   */
  const abandonedBy = (signal: AbortSignal | undefined, deadline: Date) =>
    signal?.reason instanceof DeadlineError || deadline.getTime() <= Date.now()
      ? late()
      : new UnavailableError(`the call to ${opts.name} was cancelled`);
  /** A failed call's error as callers see it; an unreachable backend also counts in its outage. */
  const failure = (err: ServiceError, call: { requestId: string; method: string }): Error => {
    const ours = !err.metadata?.get('platform-error-bin').length;
    if (err.code === Status.UNAVAILABLE && ours) {
      state.unavailable(err.details);
      return new UnavailableError(`${opts.name} is unavailable`);
    }
    if (err.code === Status.DEADLINE_EXCEEDED && ours) {
      // Our own deadline passed. gRPC's account says where the time went (still waiting for a connection: "Waiting
      // for LB pick"; or sent, to `remote_addr`), which no server logs when the call never reached one.
      state.late(call, err.details);
      return late();
    }
    // Any other answer came from the server, so it is up.
    state.answered();
    if (err.code === Status.DEADLINE_EXCEEDED) return late();
    return messageSizeError(err, opts.name, maxMessageBytes) ?? fromGrpcError(err);
  };
  for (const [key, method] of methods as [string, UnaryDefinition][]) {
    const fn = (client as unknown as Record<string, Function>)[key].bind(client);
    if (answersStream(definition, key)) {
      out[key] = measuredStreamCall(method.path, async function* (request: unknown, callOpts: CallOptions = {}) {
        const deadline = deadlineOf(callOpts);
        const { signal } = callOpts;
        const abandoned = () => abandonedBy(signal, deadline);
        if (signal?.aborted) throw abandoned();
        const requestId = callOpts.requestId ?? randomUUID();
        const local = inProcess(callOpts) ? localMethod<LocalStreamMethod>(address, method.path) : undefined;
        if (local) {
          yield* streamLocally(local, method, request, { requestId, deadline, signal, late, abandoned, name: opts.name, maxMessageBytes });
          return;
        }
        const call: ClientReadableStream<unknown> = fn(request, metadataOf(requestId, callOpts), { deadline });
        const cancel = () => call.cancel();
        signal?.addEventListener('abort', cancel, { once: true });
        let ended = false;
        try {
          for await (const message of call) {
            state.answered();
            yield message;
          }
          ended = true;
        } catch (err) {
          ended = true;
          const e = err as ServiceError;
          if (e.code === Status.CANCELLED && signal?.aborted) throw abandoned();
          throw failure(e, { requestId, method: method.path });
        } finally {
          signal?.removeEventListener('abort', cancel);
          // The reader stopped early: the server stops too.
          if (!ended) call.cancel();
        }
      });
      continue;
    }
    out[key] = (request: unknown, callOpts: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const requestId = callOpts.requestId ?? randomUUID();
        const deadline = deadlineOf(callOpts);
        const { signal } = callOpts;
        const abandoned = () => abandonedBy(signal, deadline);
        if (signal?.aborted) return reject(abandoned());
        const local = inProcess(callOpts) ? localMethod(address, method.path) : undefined;
        if (local)
          return callLocally(local, method, request, {
            requestId,
            deadline,
            signal,
            late,
            abandoned,
            name: opts.name,
            maxMessageBytes,
          }).then(resolve, reject);
        const cancel = () => call.cancel();
        const call: ClientUnaryCall = fn(
          request,
          metadataOf(requestId, callOpts),
          { deadline },
          (err: ServiceError | null, res: unknown) => {
            signal?.removeEventListener('abort', cancel);
            if (!err) {
              state.answered();
              return resolve(res);
            }
            if (err.code === Status.CANCELLED && signal?.aborted) return reject(abandoned());
            reject(failure(err, { requestId, method: method.path }));
          },
        );
        signal?.addEventListener('abort', cancel, { once: true });
      });
    out[key] = measuredCall(methodPath(definition, key), out[key] as never);
  }
  return out as PromiseClient<D>;
}

/** A method of a generated definition, as both transports use it. */
interface UnaryDefinition {
  path: string;
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

/** What an in-process call needs of its caller. */
interface LocalCallOptions {
  requestId: string;
  deadline: Date;
  signal?: AbortSignal;
  late(): Error;
  abandoned(): Error;
  name: string;
  maxMessageBytes: number;
}

/** A gRPC status (or a DomainError already) as the error the caller sees, as the network path maps it. */
function localFailure(err: unknown, c: LocalCallOptions): Error {
  if (err instanceof DomainError) return err;
  const status = { metadata: new Metadata(), ...(err as object) } as ServiceError;
  return messageSizeError(status, c.name, c.maxMessageBytes) ?? fromGrpcError(status);
}

/**
 * A stream from a server of this process: the messages decoded as on the wire, asked for as the caller reads (the
 * handler runs only that far), ended by the deadline or the caller's signal (the handler is told), a failure as
 * the same error the network path gives.
 */
async function* streamLocally(
  local: LocalStreamMethod,
  method: UnaryDefinition,
  request: unknown,
  c: LocalCallOptions,
): AsyncGenerator<unknown> {
  const call = new LocalCall(c.requestId, c.deadline);
  const stopTimer = atDeadline(c.deadline, () => call.cancel());
  const onAbort = () => call.cancel();
  c.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const bytes of local(method.requestSerialize(request), call)) {
      if (Date.now() >= c.deadline.getTime()) throw c.late();
      if (c.signal?.aborted) throw c.abandoned();
      yield method.responseDeserialize(bytes);
    }
    if (call.cancelled) throw Date.now() >= c.deadline.getTime() ? c.late() : c.abandoned();
  } catch (err) {
    throw localFailure(err, c);
  } finally {
    stopTimer();
    c.signal?.removeEventListener('abort', onAbort);
    // The reader stopped early: the handler is told, as a cancelled call on the wire tells it.
    call.cancel();
  }
}

/**
 * A call to a server of this process (in-process.ts): the request is encoded and the answer decoded as on the
 * wire, size limits and deadlines hold as on the wire, and a failure comes back as the same gRPC status.
 */
async function callLocally(local: LocalMethod, method: UnaryDefinition, request: unknown, c: LocalCallOptions): Promise<unknown> {
  const bytes = method.requestSerialize(request);
  const tooLarge = (details: string) =>
    messageSizeError({ code: Status.RESOURCE_EXHAUSTED, details, metadata: new Metadata() } as ServiceError, c.name, c.maxMessageBytes);
  if (bytes.length > c.maxMessageBytes) throw tooLarge(`Attempted to send message with a size larger than ${c.maxMessageBytes}`);
  const call = new LocalCall(c.requestId, c.deadline);
  let stopTimer: (() => void) | undefined;
  let onAbort: (() => void) | undefined;
  // The caller stops waiting at its deadline or when its signal aborts; the server's handler is told so.
  const gaveUp = new Promise<never>((_resolve, reject) => {
    stopTimer = atDeadline(c.deadline, () => {
      call.cancel();
      reject(c.late());
    });
    onAbort = () => {
      call.cancel();
      reject(c.abandoned());
    };
    c.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answer = await Promise.race([local(bytes, call), gaveUp]);
    // An answer that comes when the caller has stopped waiting is not seen, as on the wire.
    if (Date.now() >= c.deadline.getTime()) throw c.late();
    if (c.signal?.aborted) throw c.abandoned();
    if (answer.length > c.maxMessageBytes) throw tooLarge(`Received message larger than max (${answer.length} vs ${c.maxMessageBytes})`);
    return method.responseDeserialize(answer);
  } catch (err) {
    throw localFailure(err, c);
  } finally {
    stopTimer?.();
    if (onAbort) c.signal?.removeEventListener('abort', onAbort);
  }
}
