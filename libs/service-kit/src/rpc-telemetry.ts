import { status as Status } from '@grpc/grpc-js';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { toGrpcStatus } from '@platform/errors';
import { Counter, Histogram, secondsSince, tracingStarted, type CounterChild, type HistogramChild } from '@platform/telemetry';

/**
 * Metrics (and, with tracing on, a span) for every gRPC method served and called. They wrap the promise
 * handlers and the promise client methods, so they count a call whichever transport carries it.
 */

/** gRPC status names by code, as the `grpc_code` label shows them (OK, NOT_FOUND, UNAVAILABLE, ...). */
const CODE_NAMES: string[] = [];
for (const [name, code] of Object.entries(Status)) if (typeof code === 'number') CODE_NAMES[code] = name;

// The labels of go-grpc-prometheus and the other gRPC middlewares, so existing gRPC dashboards and alerts work:
// grpc_type (unary, or server_stream for a method answering a stream), grpc_service, grpc_method, and grpc_code on
// the counters.
const serverHandled = new Counter('grpc_server_handled_total', 'gRPC calls this process answered, by method and status code.', [
  'grpc_type',
  'grpc_service',
  'grpc_method',
  'grpc_code',
]);
const serverSeconds = new Histogram('grpc_server_handling_seconds', 'Time this process took to answer a gRPC call, by method.', [
  'grpc_type',
  'grpc_service',
  'grpc_method',
]);
const clientHandled = new Counter(
  'grpc_client_handled_total',
  'gRPC calls this process made, by method and status code (UNAVAILABLE: the server could not be reached).',
  ['grpc_type', 'grpc_service', 'grpc_method', 'grpc_code'],
);
const clientSeconds = new Histogram('grpc_client_handling_seconds', 'Time a gRPC call this process made took to end, by method.', [
  'grpc_type',
  'grpc_service',
  'grpc_method',
]);

/**
 * The metrics of one method on one side. Its children are made on the method's first call, not when the
 * handler or client is bound: a process binds every RPC of the platform (~180), and a latency child made
 * up front is 16 series per method in every scrape, whether the method is ever called or not.
 */
class RpcMetrics {
  private readonly codes: CounterChild[] = [];
  private seconds: HistogramChild | undefined;
  private readonly service: string;
  private readonly method: string;

  constructor(
    private readonly handled: Counter,
    private readonly histogram: Histogram,
    path: string,
    private readonly type: 'unary' | 'server_stream' = 'unary',
  ) {
    // `/platformadmin.authz.v1.AuthzService/Check` -> service `platformadmin.authz.v1.AuthzService`, method `Check`.
    [this.service, this.method] = path.slice(1).split('/');
  }

  /** Records a call that started at `start` (performance.now()) and ended with `code`. */
  done(code: number, start: number): void {
    (this.seconds ??= this.histogram.child(this.type, this.service, this.method)).observe(secondsSince(start));
    (this.codes[code] ??= this.handled.child(this.type, this.service, this.method, CODE_NAMES[code] ?? String(code))).inc();
  }
}

/** The gRPC status code a failure is answered (or was received) with. */
function codeOf(err: unknown): number {
  const code = (toGrpcStatus(err) as { code?: number }).code;
  return typeof code === 'number' ? code : Status.UNKNOWN;
}

type PromiseFn = (request: any, opts?: any) => Promise<any>;
type StreamFn = (request: any, opts?: any) => AsyncIterable<any>;

/** Whether `key` of a generated service definition answers a stream. */
export function answersStream(definition: unknown, key: string): boolean {
  return (definition as Record<string, { responseStream?: boolean }>)[key].responseStream === true;
}

/**
 * A stream's messages as they come, its end (or failure, or the reader stopping early) recorded as the call's:
 * a stream's time is from the call to its last message.
 */
function measuredStream(metrics: RpcMetrics, fn: StreamFn): StreamFn {
  return async function* (request, opts) {
    const start = performance.now();
    let code: number = Status.CANCELLED;
    try {
      yield* fn(request, opts);
      code = Status.OK;
    } catch (err) {
      code = codeOf(err);
      throw err;
    } finally {
      metrics.done(code, start);
    }
  };
}

/** The method path (`/platformadmin.authz.v1.AuthzService/Check`) of `key` in a generated service definition. */
export function methodPath(definition: unknown, key: string): string {
  return (definition as Record<string, { path: string }>)[key].path;
}

/**
 * A service's handlers, each counted in grpc_server_* by method and code. With tracing on, each call also
 * gets a span named after the method with the serving app in `platform.app`: in the one-process launcher,
 * where all apps share one service name, it says which app served (and a call that never crossed the network
 * still has a span of its own).
 */
export function measuredHandlers<H extends Record<string, PromiseFn | StreamFn>>(app: string, definition: unknown, handlers: H): H {
  const out: Record<string, PromiseFn | StreamFn> = {};
  for (const [key, h] of Object.entries(handlers)) {
    const path = methodPath(definition, key);
    if (answersStream(definition, key)) {
      // Measured, not traced: a span per stream would sit open for as long as its reader takes.
      out[key] = measuredStream(new RpcMetrics(serverHandled, serverSeconds, path, 'server_stream'), h as StreamFn);
      continue;
    }
    const handler = h as PromiseFn;
    const metrics = new RpcMetrics(serverHandled, serverSeconds, path);
    const measured: PromiseFn = (request, ctx) => {
      const start = performance.now();
      return handler(request, ctx).then(
        (response) => {
          metrics.done(Status.OK, start);
          return response;
        },
        (err) => {
          metrics.done(codeOf(err), start);
          throw err;
        },
      );
    };
    out[key] = tracingStarted() ? traced(app, path, measured) : measured;
  }
  return out as H;
}

/** Runs the handler in a span `<method path>` carrying the app's name. */
function traced(app: string, path: string, handler: PromiseFn): PromiseFn {
  const tracer = trace.getTracer('@platform/service-kit');
  const [service, method] = path.slice(1).split('/');
  return (request, ctx) =>
    tracer.startActiveSpan(
      path.slice(1),
      { attributes: { 'platform.app': app, 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } },
      (span) =>
        handler(request, ctx).then(
          (response) => {
            span.end();
            return response;
          },
          (err) => {
            const code = codeOf(err);
            span.setAttribute('rpc.grpc.status_code', code);
            if (code !== Status.NOT_FOUND && code !== Status.INVALID_ARGUMENT && code !== Status.PERMISSION_DENIED)
              span.setStatus({ code: SpanStatusCode.ERROR, message: CODE_NAMES[code] });
            span.end();
            throw err;
          },
        ),
    );
}

/** A client method answering a stream, counted in grpc_client_* as measuredCall counts a promise method. */
export function measuredStreamCall<F extends StreamFn>(path: string, call: F): F {
  return measuredStream(new RpcMetrics(clientHandled, clientSeconds, path, 'server_stream'), call) as F;
}

/** A promise client method counted in grpc_client_* by method and the code its call ended with. */
export function measuredCall<F extends PromiseFn>(path: string, call: F): F {
  const metrics = new RpcMetrics(clientHandled, clientSeconds, path);
  return ((request, opts) => {
    const start = performance.now();
    return call(request, opts).then(
      (response) => {
        metrics.done(Status.OK, start);
        return response;
      },
      (err) => {
        metrics.done(codeOf(err), start);
        throw err;
      },
    );
  }) as F;
}
