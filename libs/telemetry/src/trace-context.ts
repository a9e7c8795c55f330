import { context, propagation, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';

/**
 * W3C trace context for transports no instrumentation covers (the message bus): `traceparent` (and
 * `tracestate`) written into a message's headers by the publisher and read back by the consumer. With
 * tracing off no propagator is registered, so both are no-ops that allocate nothing.
 */

const tracer = () => trace.getTracer('@platform/bus');

/** A carrier getter/setter for plain header records. */
type Carrier = Record<string, string>;

/** The current trace context as message headers, or undefined when there is none to send. */
export function traceHeaders(): Carrier | undefined {
  const ctx = context.active();
  if (!trace.getSpan(ctx)) return undefined;
  const carrier: Carrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The trace context carried by a message's headers (the active context when it carries none). */
export function contextFromHeaders(get: (name: string) => string | undefined): Context {
  const traceparent = get('traceparent');
  if (!traceparent) return context.active();
  const carrier: Carrier = { traceparent };
  const tracestate = get('tracestate');
  if (tracestate) carrier.tracestate = tracestate;
  return propagation.extract(context.active(), carrier);
}

/** True when spans are recorded (an SDK is registered); false makes the wrappers below plain calls. */
function tracing(): boolean {
  // The no-op propagator of an unconfigured API has no fields; the SDK's W3C propagator has `traceparent`.
  return propagation.fields().length > 0;
}

/**
 * Runs `fn` in a PRODUCER span `<subject> publish` and hands it the headers carrying that span, to send
 * with the message. Without tracing `fn(undefined)` is called directly.
 */
export async function inPublishSpan<T>(subject: string, system: string, fn: (headers: Carrier | undefined) => Promise<T>): Promise<T> {
  if (!tracing() || !trace.getSpan(context.active())) return fn(undefined);
  return tracer().startActiveSpan(
    `${subject} publish`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': system, 'messaging.destination.name': subject, 'messaging.operation.type': 'send' },
    },
    async (span) => {
      try {
        return await fn(traceHeaders());
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Runs a consumer's handler in a CONSUMER span `<subject> process` whose parent is the trace context the
 * message carries (its publisher's span). Without tracing, or for a message that carries none, it is a
 * plain call.
 */
export async function inConsumeSpan<T>(
  subject: string,
  system: string,
  consumer: string,
  header: (name: string) => string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing()) return fn();
  const parent = contextFromHeaders(header);
  if (!trace.getSpan(parent)) return fn();
  return tracer().startActiveSpan(
    `${subject} process`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': system,
        'messaging.destination.name': subject,
        'messaging.consumer.group.name': consumer,
        'messaging.operation.type': 'process',
      },
    },
    parent,
    async (span) => {
      try {
        return await fn();
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
