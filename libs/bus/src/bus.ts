/** Stops a subscription or consumer. */
export type Unsubscribe = () => Promise<void>;

/** Handles a request and returns the reply payload. */
export type ReplyHandler = (payload: unknown) => Promise<unknown>;

/** Handles one broadcast (notify/listen); nothing is redelivered. */
export type NoticeHandler = (subject: string, payload: unknown) => void;

/** Handles one durable message; a throw asks for redelivery. */
export type MessageHandler = (subject: string, payload: unknown) => Promise<void>;

export interface ConsumeOptions {
  /** Durable consumer name: a restarted consumer resumes where it stopped. */
  durable: string;
  /** Subject filter, e.g. "billing.license.>". */
  subject: string;
}

/** One durable message of a batch; `payload` is undefined when it is not JSON (the handler refuses it). */
export interface BusMessage {
  subject: string;
  payload: unknown;
}

/**
 * Handles a batch of durable messages, in the order they were delivered, and answers for each whether it is
 * done (`true`: acknowledged) or is to be redelivered (`false`). A throw redelivers the whole batch.
 */
export type BatchHandler = (messages: BusMessage[]) => Promise<boolean[]>;

export interface ConsumeBatchOptions extends ConsumeOptions {
  /**
   * At most this many messages per call of the handler. The handler gets what has arrived while it was busy
   * (up to this many), so a quiet stream still hands over single messages at once.
   */
  maxBatch: number;
}

/** Whether the bus is connected now, and since when (the start, the last loss or the last reconnect). */
export interface BusHealth {
  connected: boolean;
  since: Date;
}

/** Where a bus reports connection changes (a pino logger fits). */
export interface BusLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The message bus: request/reply (cluster-resource fetches from member clusters) and durable
 * publish/consume (JetStream). Payloads are JSON. A subject's stream is named after its first token
 * ("billing.license.received" lives in stream BILLING, which holds "billing.>").
 */
export interface Bus {
  /** The installation's namespace on NATS (its subjects, streams and consumers); none on the in-process bus. */
  readonly namespace?: string;
  request<T = unknown>(subject: string, payload: unknown, timeoutMs?: number): Promise<T>;
  reply(subject: string, handler: ReplyHandler): Promise<Unsubscribe>;
  publish(subject: string, payload: unknown): Promise<void>;
  consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Unsubscribe>;
  /**
   * Consumes a durable subject in batches (ingestion writes a batch in one transaction): one handler call at
   * a time, with the messages that arrived meanwhile. `consume` is this with batches of one.
   */
  consumeBatches(opts: ConsumeBatchOptions, handler: BatchHandler): Promise<Unsubscribe>;
  /**
   * A broadcast to every listener of the subject, for notices such as cache invalidations: resolves once the bus has
   * it in its one order of notices (on NATS: stored on the replicated notice stream), so every listener hands it
   * over before any notice sent after this resolved, whichever server each talks to. Kept only briefly: a listener
   * that was away must assume it missed some.
   */
  notify(subject: string, payload: unknown): Promise<void>;
  /** Listens to notices on a subject from now on (wildcards `*` and `>` as in NATS), in the bus's order of notices. */
  listen(subject: string, handler: NoticeHandler): Promise<Unsubscribe>;
  /**
   * The fence before serving what was kept from notices: true once every notice the bus acknowledged before this
   * call has been handed to this process's listeners, false when that could not be made sure in time. The in-process
   * bus hands notices over as they are sent, so it answers true at once, without a promise; on NATS it asks the notice
   * stream's last sequence once for every caller waiting at that moment (NoticeStream.caughtUp).
   *
   * `arrivedAt`: when the request being served arrived (`performance.now()` in this process). A fence asked after that
   * moment already covers it, so a request fences at most once however many kept answers it reads: true at once.
   */
  caughtUp(arrivedAt?: number): true | Promise<boolean>;
  /**
   * Calls `listener` when notices may have been missed although the connection stayed up (on NATS: the notice
   * stream moved on past some before this process read them); returns how to stop. Followers start over as after
   * a lost connection. The in-process bus never misses one.
   */
  onNoticesMissed(listener: () => void): () => void;
  /** The connection state; the in-process bus is always connected. */
  health(): BusHealth;
  /** Calls `listener` on every change of the connection state; returns how to stop. */
  onHealthChange(listener: (health: BusHealth) => void): () => void;
  close(): Promise<void>;
}

/**
 * An installation's namespace on NATS: lower-case letters, digits and dashes, starting with a letter (one subject
 * token, and a stream name once upper-cased).
 */
export const BUS_NAMESPACE_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Stream holding a subject: its first token, upper-cased. In a namespace (an installation's, on a NATS server that
 * others may share) the stream is `<NAMESPACE>_<TOKEN>` and holds `<namespace>.<token>.>`, so the durable consumers
 * on it are that installation's too; `subject` is named without the namespace.
 */
export function streamOf(subject: string, namespace?: string): { name: string; subjects: string[] } {
  const first = subject.split('.')[0];
  if (!/^[a-z][a-z0-9_-]*$/.test(first)) throw new Error(`subject ${subject} has no stream token`);
  const name = first.toUpperCase().replace(/-/g, '_');
  if (!namespace) return { name, subjects: [`${first}.>`] };
  return { name: `${namespace.toUpperCase().replace(/-/g, '_')}_${name}`, subjects: [`${namespace}.${first}.>`] };
}

/** A subject as it travels on NATS in `namespace` (none: as it is). */
export function scopedSubject(subject: string, namespace?: string): string {
  return namespace ? `${namespace}.${subject}` : subject;
}

/** A subject as it travelled on NATS, without `namespace`. */
export function unscopedSubject(subject: string, namespace?: string): string {
  return namespace && subject.startsWith(`${namespace}.`) ? subject.slice(namespace.length + 1) : subject;
}

/** Raised when nobody answers a request in time. */
export class BusTimeoutError extends Error {
  constructor(subject: string) {
    super(`no reply on ${subject} in time`);
    this.name = 'BusTimeoutError';
  }
}

/** Why the bus could not be opened at start: a server that is not reachable, refuses the credentials, or lacks JetStream. */
export class BusConnectError extends Error {
  constructor(
    /** host:port of the server(s), never credentials. */
    readonly server: string,
    readonly kind: 'unreachable' | 'credentials' | 'no-jetstream',
    /** What happened, in a few words (e.g. "not reachable within 5 s (connection refused)"). */
    readonly reason: string,
  ) {
    super(`cannot use NATS at ${server}: ${reason}`);
    this.name = 'BusConnectError';
  }
}

/** A one-message handler as a batch handler of batches of one: a throw asks for redelivery. */
export function oneByOne(handler: MessageHandler): BatchHandler {
  return async (messages) => {
    const done: boolean[] = [];
    for (const m of messages)
      done.push(
        await handler(m.subject, m.payload).then(
          () => true,
          () => false,
        ),
      );
    return done;
  };
}
