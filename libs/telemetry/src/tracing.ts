import { context, trace } from '@opentelemetry/api';

/**
 * OpenTelemetry tracing, on only when an OTLP endpoint is configured.
 *
 * `startTracing` must run before the modules it instruments (http, express, @grpc/grpc-js, pg, knex) are
 * first required: the instrumentations patch them as they load. So it is called from `./register`, the first
 * import of every app's main.ts and of the one-process launcher (deploy/local/start.mjs), and the SDK is
 * required here only when it is started: without `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) no SDK module is even loaded, and nothing is patched.
 *
 * Spans go out over OTLP HTTP/JSON (`@opentelemetry/exporter-trace-otlp-http`), to `<endpoint>/v1/traces`;
 * the standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
 * OTEL_BSP_SCHEDULE_DELAY, OTEL_EXPORTER_OTLP_HEADERS, ...) apply. The W3C `traceparent` propagates over
 * HTTP and gRPC through the instrumentations, and over the bus by hand (libs/bus).
 */

interface Sdk {
  shutdown(): Promise<void>;
}

let sdk: Sdk | undefined;

/** Paths of the operational endpoints: probes and scrapes are not traced. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** True when the environment asks for traces. */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/** True once `startTracing` started the SDK in this process. */
export function tracingStarted(): boolean {
  return sdk !== undefined;
}

/**
 * Starts the SDK for this process when the environment asks for traces (once; later calls do nothing) and
 * answers whether it runs. `serviceName` is used unless OTEL_SERVICE_NAME is set.
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (sdk) return true;
  if (!tracingConfigured(env)) return false;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { KnexInstrumentation } = require('@opentelemetry/instrumentation-knex') as typeof import('@opentelemetry/instrumentation-knex');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const started = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ? undefined : serviceName,
    traceExporter: new OTLPTraceExporter(),
    // Traces only: no OTLP logs or metrics (metrics are Prometheus, logs are pino on stdout).
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]),
      }),
      new ExpressInstrumentation(),
      // The gateway's readiness probe asks every backend's health service; those calls are not traced.
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      // Only queries made while serving something: the outbox relay's polling would be a root span every few seconds.
      new PgInstrumentation({ requireParentSpan: true }),
      new KnexInstrumentation({ requireParentSpan: true }),
    ],
  });
  started.start();
  sdk = started;
  return true;
}

/** Sends the spans still buffered and stops the SDK (on shutdown); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown().catch(() => undefined);
}

/**
 * pino `mixin`: the active span's trace and span ids on every log line written while serving a traced call
 * (`trace_id`, `span_id`, as the OpenTelemetry log data model names them); nothing otherwise.
 */
export function traceLogFields(): object {
  const span = trace.getSpan(context.active());
  // A new object each time: pino merges the line's fields into what the mixin returns.
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags };
}

/**
 * The app name an entry script belongs to: `apps/<name>/src/main.ts` (tsx) or `dist/apps/<name>/main.js`
 * (the image); undefined for anything else.
 */
export function appOfEntry(entry: string | undefined): string | undefined {
  return entry ? /[\\/]apps[\\/]([a-z0-9-]+)[\\/]/.exec(entry)?.[1] : undefined;
}
