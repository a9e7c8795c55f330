import {
  AckPolicy,
  connect,
  DeliverPolicy,
  Events,
  headers as natsHeaders,
  JSONCodec,
  type NatsConnection,
  type JetStreamManager,
  type JsMsg,
} from 'nats';
import {
  BusConnectError,
  BusTimeoutError,
  scopedSubject,
  streamOf,
  unscopedSubject,
  type Bus,
  type BusHealth,
  type BusLogger,
  oneByOne,
  type BatchHandler,
  type ConsumeBatchOptions,
  type ConsumeOptions,
  type MessageHandler,
  type NoticeHandler,
  type ReplyHandler,
  type Unsubscribe,
} from './bus';
import { withRetries, type RetryPolicy } from '@platform/errors';
import { consumerCounters, countPublished, inConsumeSpan, inPublishSpan } from './bus-telemetry';
import { Outage } from './outage';
import { NoticeStream, type NoticeStreamOptions } from './notice-stream';

const codec = JSONCodec();

/** A message's JSON payload, or undefined when it is not JSON (the handler refuses it rather than it coming back forever). */
function decoded(data: Uint8Array): unknown {
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}

/** How long the first connection is retried at start before giving up (a pod is restarted anyway). */
export const NATS_STARTUP_TIMEOUT_MS = 5_000;
const RETRY_EVERY_MS = 500;
/** At start, the server (or its JetStream) is asked again every RETRY_EVERY_MS until NATS_STARTUP_TIMEOUT_MS. */
const STARTUP_RETRY: RetryPolicy = { attempts: Infinity, baseDelayMs: RETRY_EVERY_MS, factor: 1, jitter: 'none' };

const silent: BusLogger = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * host:port of each server in a NATS URL (comma-separated servers allowed), for messages and logs:
 * scheme, user, password or token and path are dropped, so credentials never show.
 */
export function natsServerAddress(url: string): string {
  return natsServers(url)
    .map(({ rest }) => {
      const hostPort = rest.replace(/[/?#].*$/, '');
      return /:\d+$/.test(hostPort) ? hostPort : `${hostPort}:4222`;
    })
    .join(',');
}

/** Each server of a NATS URL (comma-separated): its scheme (`nats://`, or none), its credentials as written, the rest. */
function natsServers(url: string): { scheme: string; userinfo: string | undefined; rest: string }[] {
  return url
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((part) => {
      const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(part)?.[0] ?? '';
      const at = part.lastIndexOf('@');
      return at < 0
        ? { scheme, userinfo: undefined, rest: part.slice(scheme.length) }
        : { scheme, userinfo: part.slice(scheme.length, at), rest: part.slice(at + 1) };
    });
}

/**
 * What `connect` is given for a NATS_URL: its servers, one by one and without credentials, and the credentials the URL
 * carries as options (`nats://user:password@host`, or `nats://token@host`). nats.js reads neither from a URL: it took
 * a list as one address (the last node's port, the first node's host) and dropped the credentials, which the server
 * then refused. A cluster's URL lists every node with the same credentials; the first given are used.
 */
export function natsConnectOptions(url: string): { servers: string[]; user?: string; pass?: string; token?: string } {
  const servers = natsServers(url);
  const userinfo = servers.find((s) => s.userinfo)?.userinfo;
  const colon = userinfo?.indexOf(':') ?? -1;
  const credentials =
    userinfo === undefined
      ? {}
      : colon < 0
        ? { token: decodeURIComponent(userinfo) }
        : { user: decodeURIComponent(userinfo.slice(0, colon)), pass: decodeURIComponent(userinfo.slice(colon + 1)) };
  return { servers: servers.map(({ scheme, rest }) => scheme + rest), ...credentials };
}

/** A failed connect attempt in a few words. */
function describeConnectError(err: unknown): string {
  const code = String((err as { code?: string }).code ?? '');
  if (code === 'CONNECTION_REFUSED' || code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'TIMEOUT') return 'timed out';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  return code || 'connection failed';
}

const isCredentialError = (err: unknown) =>
  /^(AUTHORIZATION_VIOLATION|AUTHENTICATION_)/.test(String((err as { code?: string }).code ?? ''));

export interface NatsBusOptions {
  /** Where connection losses, reconnects and errors are logged. */
  log?: BusLogger;
  /** How long the first connection is retried before create() fails; default NATS_STARTUP_TIMEOUT_MS. */
  startupTimeoutMs?: number;
  /**
   * The installation's namespace (BUS_NAMESPACE_PATTERN): every subject travels as `<namespace>.<subject>` and every
   * stream is `<NAMESPACE>_<TOKEN>`, so installations sharing a NATS server never see each other's messages. Left out:
   * the names as given (tests and tools of one stream).
   */
  namespace?: string;
  /**
   * The installation's id: kept on the server beside its namespace at the first start, so that another installation
   * found using the same namespace (the same BUS_NAMESPACE set twice) is said at once.
   */
  installation?: string;
  /**
   * False for a process that sends no notices of its own (nothing it writes is kept by another): it sends no
   * heartbeats on the notice stream until it does, so the others do not receive one a second from each of its
   * replicas (NoticeStream's `beatsFromStart`). Default true.
   */
  sendsNotices?: boolean;
  /** How long without a fence before the notices rest (REST_AFTER_MS in notice-stream.ts); tests shorten it. */
  restAfterMs?: number;
}

/**
 * Streams that tell an installation: the claim every installation in a namespace keeps (`KV_<NAMESPACE>_INSTALLATION`,
 * see claimNamespace), and the notice stream of an earlier version, which had no namespace (`NOTICES`).
 */
const STREAM_OF_AN_INSTALLATION = /^(?:KV_(.+)_INSTALLATION|NOTICES)$/;
/** Servers and namespaces this process has looked at for other installations: said once, not once per app. */
const othersLookedAt = new Set<string>();

/**
 * The bus on a real NATS server with JetStream (NATS_URL). At start an unreachable server is retried for a
 * few seconds, then create() fails with a BusConnectError. After start a lost connection is retried forever
 * (every 0.5 s); health() says whether it is up, and every loss and reconnect is logged.
 */
export class NatsBus implements Bus {
  private readonly ensured = new Set<string>();
  private readonly outage: Outage;
  private state: BusHealth = { connected: true, since: new Date() };
  private readonly listeners = new Set<(health: BusHealth) => void>();
  private readonly missedListeners = new Set<() => void>();
  private closing = false;
  private readonly notices: NoticeStream;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly server: string,
    private readonly log: BusLogger,
    readonly namespace: string | undefined,
    notices: Omit<NoticeStreamOptions, 'namespace'>,
  ) {
    this.outage = new Outage(log);
    this.notices = new NoticeStream(
      nc,
      jsm,
      nc.jetstream(),
      log,
      () => {
        for (const listener of this.missedListeners) listener();
      },
      { ...notices, namespace },
    );
  }

  static async create(url: string, name: string, opts: NatsBusOptions = {}): Promise<NatsBus> {
    const server = natsServerAddress(url);
    const log = opts.log ?? silent;
    const timeoutMs = opts.startupTimeoutMs ?? NATS_STARTUP_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    // Quietly: the one line the caller reports when this gives up says what happened.
    const nc = await withRetries(
      STARTUP_RETRY,
      (err) => !isCredentialError(err) && Date.now() + RETRY_EVERY_MS < deadline,
      () =>
        connect({
          ...natsConnectOptions(url),
          // The servers tried in the order NATS_URL lists them (nats.js shuffles them otherwise).
          noRandomize: true,
          name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: RETRY_EVERY_MS,
          timeout: Math.min(Math.max(deadline - Date.now(), RETRY_EVERY_MS), 2_000),
          // No stack captured up front for every request and publish in case it times out (two errors made per
          // notice and fence, 1-2% of a busy process); a timeout still fails with its error, made when it happens.
          noAsyncTraces: true,
        }),
    ).catch((err: unknown) => {
      if (isCredentialError(err)) throw new BusConnectError(server, 'credentials', 'the server refused the credentials');
      throw new BusConnectError(server, 'unreachable', `not reachable within ${timeoutMs / 1000} s (${describeConnectError(err)})`);
    });
    // A cluster still electing its JetStream leader (just started, or a node just lost) does not answer in time: asked
    // again until the deadline. No responders (503) is JetStream turned off: said at once.
    const codeOf = (err: unknown) => String((err as { code?: string }).code ?? '');
    const jsm = await withRetries(
      STARTUP_RETRY,
      (err) => codeOf(err) !== '503' && Date.now() + RETRY_EVERY_MS < deadline,
      () => nc.jetstreamManager(),
    ).catch(async (err: unknown) => {
      await nc.close();
      const code = codeOf(err);
      throw new BusConnectError(
        server,
        'no-jetstream',
        code === '503' ? 'JetStream is not enabled' : `JetStream did not answer (${code || 'error'})`,
      );
    });
    const bus = new NatsBus(nc, jsm, server, log, opts.namespace, {
      name,
      beatsFromStart: opts.sendsNotices ?? true,
      restAfterMs: opts.restAfterMs,
    });
    bus.watch();
    log.info({ server, namespace: opts.namespace }, 'NATS connected');
    if (opts.namespace) void bus.reportOtherInstallations(opts.namespace, opts.installation);
    return bus;
  }

  /**
   * Says once, at start, that the server also holds another installation's streams (another namespace, or the
   * namespace-less names of an earlier version): harmless, since this one never reads them, but worth knowing.
   */
  private async reportOtherInstallations(namespace: string, installation: string | undefined): Promise<void> {
    const key = `${this.server} ${namespace} ${installation}`;
    if (othersLookedAt.has(key)) return;
    othersLookedAt.add(key);
    if (installation) await this.claimNamespace(namespace, installation);
    const own = namespace.toUpperCase().replace(/-/g, '_');
    const others = new Set<string>();
    try {
      for await (const name of this.jsm.streams.names()) {
        const other = STREAM_OF_AN_INSTALLATION.exec(name);
        if (other && other[1] !== own) others.add(other[1]?.toLowerCase().replace(/_/g, '-') ?? '(no namespace)');
      }
    } catch {
      return; // a listing that fails says nothing either way
    }
    if (others.size === 0) return;
    this.log.warn(
      { server: this.server, namespace, otherNamespaces: [...others].sort() },
      "this NATS server also carries another installation's messages; this one uses its own namespace and never reads theirs",
    );
  }

  /** Keeps the installation's id under its namespace on the server; another id found there is said, loudly. */
  private async claimNamespace(namespace: string, installation: string): Promise<void> {
    try {
      const kv = await this.nc.jetstream().views.kv(streamOf('installation', namespace).name, { history: 1 });
      const claimed = await kv.create('id', codec.encode(installation)).then(
        () => installation,
        async () => String(codec.decode((await kv.get('id'))!.value)),
      );
      if (claimed !== installation)
        this.log.error(
          { server: this.server, namespace, installation, otherInstallation: claimed },
          "another installation uses this namespace on this NATS server: the two take each other's messages; give one " +
            'of them another BUS_NAMESPACE',
        );
    } catch {
      // A server that cannot keep it says nothing either way.
    }
  }

  health(): BusHealth {
    return { ...this.state };
  }

  /** Whether its notice stream rests, nobody having asked it for a kept answer lately (`bus_notices_resting`). */
  get resting(): boolean {
    return this.notices.isResting;
  }

  onHealthChange(listener: (health: BusHealth) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onNoticesMissed(listener: () => void): () => void {
    this.missedListeners.add(listener);
    return () => this.missedListeners.delete(listener);
  }

  private setConnected(connected: boolean): void {
    if (this.state.connected === connected) return;
    this.state = { connected, since: new Date() };
    for (const listener of this.listeners) listener(this.health());
  }

  /** Follows the connection's status events: losses, reconnects and errors, logged without credentials. */
  private watch(): void {
    void (async () => {
      for await (const status of this.nc.status()) {
        const server = typeof status.data === 'string' && status.data ? natsServerAddress(status.data) : this.server;
        if (status.type === Events.Disconnect) {
          this.notices.connectionLost();
          this.setConnected(false);
          this.outage.begin(server);
        } else if (status.type === Events.Reconnect) {
          // Before the listeners hear of it: their first catch-up must not find the stream still away.
          this.notices.connectionBack();
          this.setConnected(true);
          this.outage.end(server);
        } else if (status.type === Events.Error) {
          this.log.error({ server: this.server, code: String(status.data) }, 'NATS reported an error');
        } else if (status.type === Events.LDM) {
          this.log.warn({ server }, 'NATS server is shutting down (lame duck mode); will reconnect elsewhere or later');
        }
      }
    })();
    void this.nc.closed().then((err) => {
      this.setConnected(false);
      if (!this.closing)
        this.log.error({ server: this.server, reason: err ? describeConnectError(err) : 'closed' }, 'NATS connection closed for good');
    });
  }

  /** Fails only this request (BusTimeoutError when nobody answered in time), logged once with its subject. */
  async request<T>(subject: string, payload: unknown, timeoutMs = 5_000): Promise<T> {
    try {
      const msg = await this.nc.request(scopedSubject(subject, this.namespace), codec.encode(payload), { timeout: timeoutMs });
      return codec.decode(msg.data) as T;
    } catch (err) {
      const code = String((err as { code?: string }).code ?? (err as Error).name);
      this.log.warn({ subject, code }, 'bus request failed');
      if (code === 'TIMEOUT' || code === '503') throw new BusTimeoutError(subject);
      throw err;
    }
  }

  async reply(subject: string, handler: ReplyHandler): Promise<Unsubscribe> {
    const failed = () => ({ error: 'reply handler failed' });
    const sub = this.nc.subscribe(scopedSubject(subject, this.namespace), {
      // Never throws into the connection's reader: a request that cannot be answered fails alone.
      callback: (err, msg) => {
        if (err) return;
        const answered = (answer: unknown) => {
          try {
            msg.respond(codec.encode(answer ?? null));
          } catch (respondErr) {
            this.log.warn({ subject, err: String((respondErr as Error).message) }, 'bus reply not sent');
          }
        };
        Promise.resolve()
          .then(() => handler(codec.decode(msg.data)))
          .then(answered, () => answered(failed()));
      },
    });
    return async () => sub.unsubscribe();
  }

  /** Creates the subject's stream once per process; an existing stream is left as it is. */
  private async ensureStream(subject: string): Promise<void> {
    const stream = streamOf(subject, this.namespace);
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
    await inPublishSpan(subject, 'nats', async (trace) => {
      const headers = trace ? natsHeaders() : undefined;
      for (const [k, v] of Object.entries(trace ?? {})) headers!.set(k, v);
      await this.nc.jetstream().publish(scopedSubject(subject, this.namespace), codec.encode(payload), headers ? { headers } : undefined);
    });
    countPublished(streamOf(subject, this.namespace).name);
  }

  /**
   * Resolves once the notice stream has stored it (a quorum of its replicas): a change is not answered before its
   * notice has its place in the one order every listener follows (see NoticeStream). While NATS is away, at once; and
   * after NOTICE_WAIT_MS at most while the stream does not acknowledge it: the notice is then sent on (outage.ts), so a
   * change that committed is answered as such within its caller's deadline.
   */
  async notify(subject: string, payload: unknown): Promise<void> {
    await this.outage.notice(() => this.notices.publish(subject, payload));
  }

  async listen(subject: string, handler: NoticeHandler): Promise<Unsubscribe> {
    return this.notices.listen(subject, handler);
  }

  caughtUp(arrivedAt?: number): true | Promise<boolean> {
    return this.notices.caughtUp(arrivedAt);
  }

  async consume(opts: ConsumeOptions, handler: MessageHandler): Promise<Unsubscribe> {
    return this.consumeBatches({ ...opts, maxBatch: 1 }, oneByOne(handler));
  }

  async consumeBatches(opts: ConsumeBatchOptions, handler: BatchHandler): Promise<Unsubscribe> {
    await this.ensureStream(opts.subject);
    const stream = streamOf(opts.subject, this.namespace).name;
    try {
      await this.jsm.consumers.info(stream, opts.durable);
    } catch {
      await this.jsm.consumers.add(stream, {
        durable_name: opts.durable,
        filter_subject: scopedSubject(opts.subject, this.namespace),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30_000_000_000,
      });
    }
    const consumer = await this.nc.jetstream().consumers.get(stream, opts.durable);
    // Up to two batches in hand: one being handled, the next arriving meanwhile.
    const limit = Math.max(1, opts.maxBatch) * 2;
    const messages = await consumer.consume({ max_messages: limit });
    const counters = consumerCounters(opts.durable);
    const pending: JsMsg[] = [];
    let ended = false;
    // The reader waits for room while the buffer is full, the worker for messages while it is empty: never both.
    let waiting: (() => void) | undefined;
    const signal = () => {
      const wake = waiting;
      waiting = undefined;
      wake?.();
    };
    const wait = () => new Promise<void>((resolve) => (waiting = resolve));
    const reader = (async () => {
      for await (const m of messages) {
        pending.push(m);
        signal();
        while (pending.length >= limit && !ended) await wait();
      }
    })()
      // The consumer gone (deleted on the server, its stream lost): this consumer stops, the process goes on.
      .catch((err: unknown) =>
        this.log.error({ stream, durable: opts.durable, err: String((err as Error)?.message ?? err) }, 'bus consumer stopped'),
      )
      .finally(() => {
        ended = true;
        signal();
      });
    const worker = (async () => {
      for (;;) {
        while (pending.length === 0 && !ended) await wait();
        if (pending.length === 0) return;
        const batch = pending.splice(0, opts.maxBatch);
        signal();
        const done = await inConsumeSpan(
          batch[0].subject,
          'nats',
          opts.durable,
          (name) => batch[0].headers?.get(name) || undefined,
          () => handler(batch.map((m) => ({ subject: unscopedSubject(m.subject, this.namespace), payload: decoded(m.data) }))),
        ).catch(() => batch.map(() => false));
        batch.forEach((m, i) => {
          if (m.redelivered) counters.redelivered.inc();
          try {
            if (done[i]) {
              m.ack();
              counters.consumed.inc();
            } else {
              counters.refused.inc();
              m.nak(500);
            }
          } catch {
            // The connection closed under it: the message comes again after its acknowledgement wait.
          }
        });
      }
    })();
    return async () => {
      await messages.close();
      ended = true;
      signal();
      // The batch in hand is finished (and acknowledged) before this resolves; the rest is redelivered later.
      pending.splice(0);
      await Promise.allSettled([reader, worker]);
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    this.outage.close();
    await this.notices.close();
    // Draining needs the server; without a connection there is nothing in flight to finish.
    if (this.state.connected) await this.nc.drain();
    else await this.nc.close();
  }
}
