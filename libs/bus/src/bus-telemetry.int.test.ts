import { randomBytes } from 'node:crypto';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { metricsText } from '@platform/telemetry';
import { testNatsUrl } from '@platform/testing';
import { InProcessBus, type Bus } from './index';
import { NatsBus } from './nats-bus';

/**
 * Traces and metrics on the bus: a consumer's handler runs in the trace of the call that published the
 * message (traceparent in the message's headers), and messages published, consumed, refused and redelivered
 * are counted. A tracer provider registered here stands in for the SDK the apps start.
 */
const exporter = new tracing.InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
provider.register();
afterAll(() => provider.shutdown());

/** The value of a sample line, 0 when absent. */
async function count(name: string, label: string, value: string): Promise<number> {
  const line = (await metricsText()).body.split('\n').find((l) => l.startsWith(`${name}{${label}="${value}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

function propagationContract(system: string, open: () => Promise<Bus>) {
  let bus: Bus;
  beforeAll(async () => {
    bus = await open();
  });
  afterAll(() => bus?.close());

  it('runs the consumer in a span whose parent is the publisher’s span, in the publisher’s trace, and counts refusals and redeliveries', async () => {
    const id = randomBytes(4).toString('hex');
    const durable = `traced-${system}-${id}`;
    const seen: { traceId?: string; attempt: number }[] = [];
    let attempts = 0;
    const handled = new Promise<void>((resolve) => {
      void bus.consume({ durable, subject: `billing.${id}.>` }, async () => {
        attempts += 1;
        seen.push({ traceId: trace.getSpan(context.active())?.spanContext().traceId, attempt: attempts });
        if (attempts === 1) throw new Error('transient');
        resolve();
      });
    });
    // Consumers are created asynchronously on NATS; give it a moment before publishing.
    await new Promise((r) => setTimeout(r, 200));
    const publishedBefore = await count('bus_messages_published_total', 'stream', 'BILLING');
    const callerTrace = await trace.getTracer('test').startActiveSpan('caller', async (span) => {
      await bus.publish(`billing.${id}.license`, { n: 1 });
      span.end();
      return span.spanContext().traceId;
    });
    await handled;
    await new Promise((r) => setTimeout(r, 50)); // the span's end and the ack come right after the handler

    // Both deliveries, the refused one and the redelivery, ran in the caller's trace.
    expect(seen).toEqual([
      { traceId: callerTrace, attempt: 1 },
      { traceId: callerTrace, attempt: 2 },
    ]);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === callerTrace);
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER)!;
    expect(producer.name).toBe(`billing.${id}.license publish`);
    expect(producer.attributes['messaging.system']).toBe(system);
    const consumers = spans.filter((s) => s.kind === SpanKind.CONSUMER);
    expect(consumers.map((s) => s.name)).toEqual([`billing.${id}.license process`, `billing.${id}.license process`]);
    for (const c of consumers) expect(c.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);

    expect(await count('bus_messages_published_total', 'stream', 'BILLING')).toBe(publishedBefore + 1);
    expect(await count('bus_messages_refused_total', 'consumer', durable)).toBe(1);
    expect(await count('bus_messages_redelivered_total', 'consumer', durable)).toBe(1);
    expect(await count('bus_messages_consumed_total', 'consumer', durable)).toBe(1);
  }, 20_000);

  it('sends no trace headers for a message published outside any trace', async () => {
    const id = randomBytes(4).toString('hex');
    let inTrace: boolean | undefined;
    const handled = new Promise<void>((resolve) => {
      void bus.consume({ durable: `untraced-${system}-${id}`, subject: `billing.${id}.>` }, async () => {
        inTrace = trace.getSpan(context.active()) !== undefined;
        resolve();
      });
    });
    await new Promise((r) => setTimeout(r, 200));
    await context.with(trace.deleteSpan(context.active()), () => bus.publish(`billing.${id}.x`, {}));
    await handled;
    expect(inTrace).toBe(false);
  });
}

describe('trace context and metrics on NATS', () => {
  propagationContract('nats', async () => NatsBus.create(await testNatsUrl(), 'bus-telemetry-test'));
});

describe('trace context and metrics on the in-process bus', () => {
  propagationContract('in-process', async () => new InProcessBus());
});
