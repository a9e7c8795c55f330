import {
  BusTimeoutError,
  streamOf,
  type Bus,
  type BusHealth,
  oneByOne,
  type BatchHandler,
  type ConsumeBatchOptions,
  type ConsumeOptions,
  type MessageHandler,
  type NoticeHandler,
  type ReplyHandler,
  type Unsubscribe,
} from './bus';
import { consumerCounters, countPublished, inConsumeSpan, inPublishSpan } from './bus-telemetry';
import { deepFreeze } from './notice-cache';

interface Consumer {
  filter: RegExp;
  handler: BatchHandler;
  maxBatch: number;
  /** Messages not yet handled, with the trace context of their publisher and how often they were handed over. */
  queue: { subject: string; payload: unknown; headers?: Record<string, string>; deliveries: number }[];
  running: boolean;
  durable: string;
  counters: ReturnType<typeof consumerCounters>;
  stopped: boolean;
}

/** NATS wildcards ("*" one token, ">" the rest) as a regular expression. */
function subjectPattern(filter: string): RegExp {
  const parts = filter.split('.').map((t) => (t === '*' ? '[^.]+' : t === '>' ? '.+' : t.replace(/[-]/g, '\\-')));
  return new RegExp(`^${parts.join('\\.')}$`);
}

/**
 * The embedded bus for a single process (`npm start`): the same contract as NATS. Durable messages
 * are kept in memory per consumer and redelivered after a failed handler; they do not survive a restart.
 */
export class InProcessBus implements Bus {
  private readonly replies = new Map<string, ReplyHandler>();
  private readonly listeners = new Set<{ filter: RegExp; handler: NoticeHandler }>();
  private readonly consumers = new Map<string, Consumer>();
  private retryDelayMs = 200;
  private readonly started = new Date();

  /** Always connected: there is no connection to lose. */
  health(): BusHealth {
    return { connected: true, since: this.started };
  }

  /** Never calls `listener`: every notice is handed over as it is sent. */
  onNoticesMissed(listener: () => void): () => void {
    void listener;
    return () => {};
  }

  /** Never calls `listener`: the state never changes. */
  onHealthChange(listener: (health: BusHealth) => void): () => void {
    void listener;
    return () => {};
  }

  async request<T>(subject: string, payload: unknown, timeoutMs = 5_000): Promise<T> {
    const handler = this.replies.get(subject);
    if (!handler) throw new BusTimeoutError(subject);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BusTimeoutError(subject)), timeoutMs);
    });
    try {
      // A round trip through JSON keeps the in-process contract as strict as the wire one.
      const answer = await Promise.race([handler(JSON.parse(JSON.stringify(payload))), timeout]);
      return JSON.parse(JSON.stringify(answer ?? null)) as T;
    } finally {
      clearTimeout(timer);
    }
  }

  async reply(subject: string, handler: ReplyHandler): Promise<Unsubscribe> {
    this.replies.set(subject, handler);
    return async () => {
      this.replies.delete(subject);
    };
  }

  async publish(subject: string, payload: unknown): Promise<void> {
    const stream = streamOf(subject);
    const copy = JSON.parse(JSON.stringify(payload));
    await inPublishSpan(subject, 'in-process', async (headers) => {
      for (const consumer of this.consumers.values()) {
        if (!consumer.filter.test(subject)) continue;
        consumer.queue.push({ subject, payload: copy, headers, deliveries: 0 });
        void this.drain(consumer);
      }
    });
    countPublished(stream.name);
  }

  async notify(subject: string, payload: unknown): Promise<void> {
    // One copy for every listener, as NATS hands each process one decoded notice for all its listeners: a copy each
    // cost a parse per cache of every app, on every write. Frozen, so a listener that would change what the others
    // read fails here at once.
    const copy: unknown = deepFreeze(JSON.parse(JSON.stringify(payload)));
    for (const l of [...this.listeners]) if (l.filter.test(subject)) l.handler(subject, copy);
  }

  /** Every notice was handed over as it was sent. */
  caughtUp(_arrivedAt?: number): true | Promise<boolean> {
    return true;
  }

  async listen(subject: string, handler: NoticeHandler): Promise<Unsubscribe> {
    const listener = { filter: subjectPattern(subject), handler };
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }

  async consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Unsubscribe> {
    return this.consumeBatches({ ...opts, maxBatch: 1 }, oneByOne(handler));
  }

  async consumeBatches(opts: ConsumeBatchOptions, handler: BatchHandler): Promise<Unsubscribe> {
    streamOf(opts.subject);
    const existing = this.consumers.get(opts.durable);
    const consumer: Consumer = existing ?? {
      filter: subjectPattern(opts.subject),
      handler,
      maxBatch: opts.maxBatch,
      queue: [],
      running: false,
      stopped: false,
      durable: opts.durable,
      counters: consumerCounters(opts.durable),
    };
    consumer.handler = handler;
    consumer.maxBatch = Math.max(1, opts.maxBatch);
    consumer.stopped = false;
    this.consumers.set(opts.durable, consumer);
    void this.drain(consumer);
    return async () => {
      consumer.stopped = true;
    };
  }

  /** Hands the queue to the handler a batch at a time; what it does not finish stays at the front and comes again after a pause. */
  private async drain(consumer: Consumer): Promise<void> {
    if (consumer.running) return;
    consumer.running = true;
    try {
      while (!consumer.stopped && consumer.queue.length > 0) {
        const batch = consumer.queue.slice(0, consumer.maxBatch);
        for (const msg of batch) if (msg.deliveries++ > 0) consumer.counters.redelivered.inc();
        const done = await inConsumeSpan(
          batch[0].subject,
          'in-process',
          consumer.durable,
          (name) => batch[0].headers?.[name],
          () => consumer.handler(batch.map(({ subject, payload }) => ({ subject, payload }))),
        ).catch(() => batch.map(() => false));
        const failed = batch.filter((_, i) => !done[i]);
        consumer.queue.splice(0, batch.length, ...failed);
        consumer.counters.consumed.inc(batch.length - failed.length);
        if (failed.length > 0) {
          consumer.counters.refused.inc(failed.length);
          await new Promise((r) => setTimeout(r, this.retryDelayMs));
        }
      }
    } finally {
      consumer.running = false;
    }
  }

  async close(): Promise<void> {
    for (const c of this.consumers.values()) c.stopped = true;
    this.replies.clear();
  }
}
