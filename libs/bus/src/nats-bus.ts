import { AckPolicy, connect, DeliverPolicy, JSONCodec, type NatsConnection, type JetStreamManager } from 'nats';
import { BusTimeoutError, streamOf, type Bus, type ConsumeOptions, type MessageHandler, type ReplyHandler, type Unsubscribe } from './bus';

const codec = JSONCodec();

/** The bus on a real NATS server with JetStream (NATS_URL). */
export class NatsBus implements Bus {
  private readonly ensured = new Set<string>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
  ) {}

  static async create(url: string, name: string): Promise<NatsBus> {
    const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    return new NatsBus(nc, await nc.jetstreamManager());
  }

  async request<T>(subject: string, payload: unknown, timeoutMs = 5_000): Promise<T> {
    try {
      const msg = await this.nc.request(subject, codec.encode(payload), { timeout: timeoutMs });
      return codec.decode(msg.data) as T;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'TIMEOUT' || code === '503') throw new BusTimeoutError(subject);
      throw err;
    }
  }

  async reply(subject: string, handler: ReplyHandler): Promise<Unsubscribe> {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        handler(codec.decode(msg.data)).then(
          (answer) => msg.respond(codec.encode(answer ?? null)),
          () => msg.respond(codec.encode({ error: 'reply handler failed' })),
        );
      },
    });
    return async () => sub.unsubscribe();
  }

  /** Creates the subject's stream once per process; an existing stream is left as it is. */
  private async ensureStream(subject: string): Promise<void> {
    const stream = streamOf(subject);
    if (this.ensured.has(stream.name)) return;
    try {
      await this.jsm.streams.info(stream.name);
    } catch {
      await this.jsm.streams.add({ name: stream.name, subjects: stream.subjects });
    }
    this.ensured.add(stream.name);
  }

  async publish(subject: string, payload: unknown): Promise<void> {
    await this.ensureStream(subject);
    await this.nc.jetstream().publish(subject, codec.encode(payload));
  }

  async consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Unsubscribe> {
    await this.ensureStream(opts.subject);
    const stream = streamOf(opts.subject).name;
    try {
      await this.jsm.consumers.info(stream, opts.durable);
    } catch {
      await this.jsm.consumers.add(stream, {
        durable_name: opts.durable,
        filter_subject: opts.subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30_000_000_000,
      });
    }
    const consumer = await this.nc.jetstream().consumers.get(stream, opts.durable);
    const messages = await consumer.consume();
    void (async () => {
      for await (const m of messages) {
        try {
          await handler(m.subject, codec.decode(m.data));
          m.ack();
        } catch {
          m.nak(500);
        }
      }
    })();
    return async () => {
      await messages.close();
    };
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}
