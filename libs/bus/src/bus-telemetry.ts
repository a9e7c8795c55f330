import { Counter, Gauge, inConsumeSpan, inPublishSpan, type CounterChild } from '@platform/telemetry';

/**
 * Bus metrics (by stream for what is published, by durable consumer for what is consumed) and the trace
 * context a message carries: `traceparent` in its headers, written by the publisher and read by the
 * consumer (NATS has no OpenTelemetry instrumentation of its own).
 */

const published = new Counter('bus_messages_published_total', 'Durable messages published, by stream.', ['stream']);
const consumed = new Counter('bus_messages_consumed_total', 'Durable messages a consumer handled and acknowledged, by consumer.', [
  'consumer',
]);
const redelivered = new Counter(
  'bus_messages_redelivered_total',
  'Durable messages delivered again to a consumer (after a refusal or an acknowledgement that did not come in time), by consumer.',
  ['consumer'],
);
const refused = new Counter(
  'bus_messages_refused_total',
  "Durable messages a consumer's handler failed on, handed back for redelivery, by consumer.",
  ['consumer'],
);

/**
 * Each notice stream of the process adds 1 while it rests (REST_AFTER_MS in notice-stream.ts): an app's pod has one, the
 * one process of `npm start` on NATS one per app.
 */
export const resting = new Gauge(
  'bus_notices_resting',
  "How many of this process's apps rest: no kept answer was asked of them for 30 s, so they hear heartbeats alone until their next request (an app's pod: 1 or 0).",
);

const publishedBy = new Map<string, CounterChild>();

/** Counts one published message of `stream`. */
export function countPublished(stream: string): void {
  let child = publishedBy.get(stream);
  if (!child) publishedBy.set(stream, (child = published.child(stream)));
  child.inc();
}

/** The counters of one durable consumer, made when it starts consuming. */
export function consumerCounters(consumer: string): { consumed: CounterChild; redelivered: CounterChild; refused: CounterChild } {
  return { consumed: consumed.child(consumer), redelivered: redelivered.child(consumer), refused: refused.child(consumer) };
}

export { inConsumeSpan, inPublishSpan };
