import { randomUUID } from 'node:crypto';
import {
  DiscardPolicy,
  headers as natsHeaders,
  JSONCodec,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
  type Subscription,
} from 'nats';
import { withRetries, within, type RetryPolicy } from '@platform/errors';
import { scopedSubject, streamOf, type BusLogger, type NoticeHandler, type Unsubscribe } from './bus';
import { resting } from './bus-telemetry';
import { CoalescedSends } from './coalesced-sends';
import { HEARTBEAT_EVERY_MS, Liveness, SILENT_AFTER_MS } from './liveness';
import { NOTICE_MERGES } from './notices';

const codec = JSONCodec();

/** The JetStream stream that carries notices (and fences) on NATS, and the subject prefix it holds (in no namespace). */
export const NOTICE_STREAM = 'NOTICES';
const PREFIX = 'notices.';
/** Where the stream's leader publishes again each notice it stored, in the stream's order, with its sequence. */
const ORDERED_PREFIX = 'notices-ordered.';
/** The subject of heartbeats and goodbyes (after the prefix); never handed to listeners. */
const ALIVE = '_alive';
/** The header naming the process that stored a message on the stream: a heartbeat, or a notice that counts as one. */
const PROCESS_HEADER = 'Platform-Process';
/**
 * Set on what a process stores once the stream acknowledged nothing of its own for SILENT_AFTER_MS: it was cut off,
 * its notices meanwhile may be lost, and every listener starts over (even one that never heard of it before).
 */
const WAS_SILENT_HEADER = 'Platform-Was-Silent';

/**
 * How long a notice is kept: only for the live caches that follow it (they hear it within milliseconds); the stream
 * is no history, and nothing reads it from the start.
 */
const NOTICE_MAX_AGE_MS = 60_000;
/** At most this much is kept, oldest first out. */
const NOTICE_MAX_BYTES = 256 * 1024 * 1024;
/**
 * How long `publish` keeps trying while the stream cannot take a notice (no leader yet after a node was lost), counted
 * from the send or from the connection's return. The writer waits for it no longer than the bus's bound (outage.ts).
 */
const PUBLISH_DEADLINE_MS = 10_000;
/** One attempt's wait for the stream's acknowledgement, or for the stream to be found (or made). */
const PUBLISH_ATTEMPT_MS = 1_000;
/** How long a notice sent while the connection is away waits for it: as long as the stream would keep it. */
const AWAY_WAIT_MS = NOTICE_MAX_AGE_MS;
// Waits between attempts to store a notice: 50 ms, doubled, never more than 400 ms (the deadline bounds the attempts).
const PUBLISH_RETRY: RetryPolicy = { attempts: Infinity, baseDelayMs: 50, maxDelayMs: 400, jitter: 'none' };
/** Replicas of the stream on a cluster: a notice survives the loss of one node. */
const CLUSTER_REPLICAS = 3;
/** How long a catch-up may take before the kept answers are not trusted for the requests waiting on it. */
const CATCH_UP_TIMEOUT_MS = 1_000;
/**
 * How long after the connection is back catch-ups answer false, so kept answers are trusted again only then. The other
 * processes lost the server too (it restarted) and come back at their next attempt, every half second (NatsBus): a
 * writer still away until then answers its changes at once and sends their notices once it is back, so a reader that
 * came back first must not serve what it kept before those notices are in (docs/decisions.md, D45).
 */
export const TRUST_AFTER_RECONNECT_MS = 2_000;

/**
 * How long a process follows the notices with nobody asking it for a kept answer before it rests: it stops receiving
 * them (heartbeats still, so it knows who fell silent meanwhile) until the next fence, which follows them again and
 * makes every cache start over. Every kept answer's lifetime is at most this long (the longest, an organization's, is
 * 30 s: ORG_CACHE_TTL_MS), so what it starts over from had expired by then anyway; an app no request reaches costs
 * nothing for each write elsewhere (docs/decisions.md, D133).
 */
export const REST_AFTER_MS = 30_000;

/**
 * How many notices a process follows with nobody asking it for a kept answer before it rests sooner than
 * REST_AFTER_MS, and how long it follows them at the least. Each notice wakes the process for a tenth of a millisecond
 * or more; starting over after a rest costs a wake (two round trips) and a call for each kept answer asked again. Under
 * a stream of writes elsewhere, a few hundred unasked notices cost more than starting over: an app that serves a
 * request now and then drops what it kept a little early, rather than spend CPU on every write of the installation.
 */
export const REST_AFTER_NOTICES = 200;
export const REST_AFTER_NOTICES_MIN_MS = 1_000;

/** How a NoticeStream is made: its installation's namespace, its process, and what it sends. */
export interface NoticeStreamOptions {
  /** The installation's namespace (NatsBusOptions.namespace). */
  namespace?: string;
  /** The process's name (its NATS connection name), in its id as the others log it. */
  name?: string;
  /** False for a process that sends no notices of its own: it beats only once it has stored one (see `beats`). */
  beatsFromStart?: boolean;
  /** How long without a fence before it rests (REST_AFTER_MS); tests shorten it. */
  restAfterMs?: number;
  /** How many notices without a fence before it rests sooner (REST_AFTER_NOTICES); tests change it. */
  restAfterNotices?: number;
}

/** JetStream's API subjects (the default prefix, as the bus's JetStreamManager uses), and how long it waits for one. */
const JS_API = '$JS.API.';
const JS_API_TIMEOUT_MS = 5_000;
/** JetStream's error code for a stream that does not exist. */
const STREAM_NOT_FOUND = 10059;

/** What a fence reads of a stream's description (JetStream's StreamInfo). */
interface StreamDescription {
  created: string;
  cluster?: { leader?: string };
  state: { last_seq: number };
}

/** NATS wildcards ("*" one token, ">" the rest) as a regular expression. */
function subjectPattern(filter: string): RegExp {
  const parts = filter.split('.').map((t) => (t === '*' ? '[^.]+' : t === '>' ? '.+' : t.replace(/[-]/g, '\\-')));
  return new RegExp(`^${parts.join('\\.')}$`);
}

/**
 * Notices on a replicated JetStream stream, so that they have one order across a NATS cluster (docs/decisions.md,
 * D45 as amended). `publish` resolves once the stream has stored the notice (on a
 * quorum of its replicas). The stream's leader publishes every notice it stores again, in the stream's order, with
 * its sequence number (JetStream's republish), and each process subscribes to those: one publisher, one path, so
 * they arrive in order.
 *
 * `caughtUp` is the fence a replica takes before serving kept answers: it asks the stream's leader for its last
 * sequence (one request, answered by the leader alone, shared by every request waiting at that moment) and waits
 * until the notices up to it have been handed over here. A notice acknowledged before the request arrived is stored
 * by then, so it has been handled, whichever NATS server the writer and this process talk to; and no message goes to
 * every process, as a fence published on the stream would.
 *
 * A notice can still be lost on the way (the leader died after storing it, or this process was away): the sequence
 * numbers then jump, and `onGap` is called before the next notice is handed over; the listeners must assume they
 * missed some, as after a lost connection. A stream made again (its servers restarted without it) counts from 1, and a
 * new leader may answer before it has applied all its predecessor acknowledged: `caughtUp` sees the new creation
 * time or leader, calls `onGap` and answers false once.
 *
 * A process no fence was asked of for REST_AFTER_MS, or for REST_AFTER_NOTICES notices, rests: it hears heartbeats
 * alone until its next fence, which follows every notice again and calls `onGap` first (D133).
 */
export class NoticeStream {
  private readonly listeners = new Set<{ filter: RegExp; handler: NoticeHandler }>();
  private ready: Promise<void> | undefined;
  private sub: Subscription | undefined;
  /** The stream sequence of the last notice handed over (or skipped at the start). */
  private handled = 0;
  private closed = false;
  /** Set while the connection is away: the next notice's sequence is taken as it comes. */
  private resync = false;
  /** When the stream whose numbers `handled` counts was made (its numbers start over when it is made again). */
  private created: string | undefined;
  /**
   * The server leading the stream at the last question. A leader just elected may not yet have applied every message
   * its predecessor acknowledged (NATS servers before 2.11 answer before that), so its last sequence is not trusted
   * across a change: caches start over instead, and what they keep afterwards was read after every such message's
   * change was committed.
   */
  private leader: string | undefined;
  /** Catch-ups waiting for `handled` to reach their sequence. */
  private readonly waiting = new Set<{ seq: number; settle: (passed: boolean) => void }>();
  /** Set while the connection is away: resolved once it is back (or the stream is closed). */
  private away: { back: Promise<void>; resolve: () => void } | undefined;
  /** Catch-ups whose question is out, to be answered false at once when the connection is lost. */
  private readonly asking = new Set<() => void>();
  /** Catch-ups answer false until then (performance.now()): the connection came back a moment ago. */
  private trustFrom = -Infinity;
  /** When the question of the last catch-up that passed was asked (performance.now()). */
  private passedAskedAt = -Infinity;
  /** The catch-up whose question is out, and the one that follows it for requests that arrived meanwhile. */
  private current: Promise<boolean> | undefined;
  private next: Promise<boolean> | undefined;
  /**
   * A question of a catch-up that timed out, while it is still unanswered: catch-ups answer false at once meanwhile,
   * rather than each request waiting CATCH_UP_TIMEOUT_MS for a stream that does not answer.
   */
  private unanswered: Promise<unknown> | undefined;
  /** Who was heard from on the stream, and when: kept answers are trusted only while none is silent. */
  private readonly liveness: Liveness;
  /** This process on the stream: the id its heartbeats and notices carry, its name first for the others' logs. */
  private readonly id: string;
  /** When the stream last acknowledged a heartbeat or notice of this process (from its start). */
  private ackedAt = performance.now();
  /** Whether a heartbeat is waiting for its acknowledgement (at most one at a time). */
  private beating = false;
  /**
   * Whether this process says it is there (heartbeats, and a goodbye when it stops). A process that sends no notices
   * needs no one to wait on it: one made with `beatsFromStart` false stays unheard until it stores a notice, and beats
   * from then on. Its first notice carries the silence header (nothing was acknowledged since its start), so readers
   * start over once, as they do for a writer that was cut off: a reader never trusted what it kept on its account.
   */
  private beats: boolean;
  private readonly heartbeat: NodeJS.Timeout;
  /** Whether a silence was reported and not yet its end, so that each is logged once. */
  private reportedSilent = false;
  /** When a fence was last asked for (performance.now()): none for `restAfterMs`, and the process rests. */
  private lastAskedAt = performance.now();
  /** Notices handed over since the last fence was asked for: REST_AFTER_NOTICES of them, and the process rests sooner. */
  private unasked = 0;
  /** While resting: the subscription to heartbeats alone, in place of every notice's (see REST_AFTER_MS). */
  private resting: Subscription | undefined;
  /** The wake from a rest under way, shared by the fences that wait on it. */
  private waking: Promise<void> | undefined;
  private readonly restAfterMs: number;
  private readonly restAfterNotices: number;
  /** Removes this stream from `bus_notices_resting` once closed. */
  private readonly unreported: () => void;

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly log: BusLogger,
    private readonly onGap: () => void,
    opts: NoticeStreamOptions = {},
  ) {
    this.beats = opts.beatsFromStart ?? true;
    this.restAfterMs = opts.restAfterMs ?? REST_AFTER_MS;
    this.restAfterNotices = opts.restAfterNotices ?? REST_AFTER_NOTICES;
    this.stream = streamOf(PREFIX, opts.namespace).name;
    this.prefix = scopedSubject(PREFIX, opts.namespace);
    this.ordered = scopedSubject(ORDERED_PREFIX, opts.namespace);
    this.id = `${opts.name ?? ''}/${randomUUID()}`;
    this.liveness = new Liveness();
    this.heartbeat = setInterval(() => {
      this.beat();
      this.restWhenUnasked();
    }, HEARTBEAT_EVERY_MS);
    this.heartbeat.unref();
    this.unreported = resting.source((add) => add({}, this.isResting ? 1 : 0));
  }

  /** Whether it rests: it hears heartbeats alone until its next fence (REST_AFTER_MS). */
  get isResting(): boolean {
    return this.resting !== undefined;
  }

  /** The stream's name and subject prefixes in this installation's namespace. */
  private readonly stream: string;
  private readonly prefix: string;
  private readonly ordered: string;

  /** The headers every message this process stores on the stream carries. */
  private headers() {
    const h = natsHeaders();
    h.set(PROCESS_HEADER, this.id);
    if (performance.now() - this.ackedAt > SILENT_AFTER_MS) h.set(WAS_SILENT_HEADER, '1');
    return h;
  }

  /**
   * Says this process is there; nothing while away. Every second, notices or not: a resting reader hears heartbeats
   * alone, and must not take a writer busy with notices for a silent one.
   */
  private beat(): void {
    if (!this.beats || this.closed || this.away || this.beating) return;
    this.beating = true;
    this.js
      .publish(this.prefix + ALIVE, codec.encode({}), { timeout: PUBLISH_ATTEMPT_MS, headers: this.headers() })
      .then(
        () => (this.ackedAt = performance.now()),
        () => undefined,
      )
      .finally(() => (this.beating = false));
  }

  /**
   * The notices on their way: one at a time per subject, those sent meanwhile merged into the next (NOTICE_MERGES), so
   * that many writes at once cost every process a notice per round trip to the stream rather than one each.
   */
  private readonly sends = new CoalescedSends<unknown>(
    (subject, payload) => this.store(subject, payload),
    (subject) => NOTICE_MERGES[subject],
  );

  /**
   * Stores a notice on the stream (merged with others of its subject sent while one is on its way); resolves once the
   * stream acknowledged the message that carries it.
   */
  publish(subject: string, payload: unknown): Promise<void> {
    return this.sends.send(subject, payload);
  }

  /**
   * Stores one message on the stream; resolves once it is acknowledged, retried while the stream has no leader. While the
   * connection is away nothing is tried: the notice waits for it (at most AWAY_WAIT_MS), and its time to be stored
   * starts again once it is back. No attempt waits more than PUBLISH_ATTEMPT_MS, for the stream to be found or for
   * its acknowledgement: a question asked before the connection was lost is never waited for after it is back.
   */
  private async store(subject: string, payload: unknown): Promise<void> {
    const data = codec.encode(payload);
    let deadline = Date.now() + PUBLISH_DEADLINE_MS;
    let stayedAway: Error | undefined;
    // Tried until the deadline, not a number of times: a stream without a leader is back within seconds.
    const retryable = (err: unknown) => err !== stayedAway && !this.closed && (this.away !== undefined || Date.now() + 100 < deadline);
    await withRetries(PUBLISH_RETRY, retryable, async () => {
      if (this.away) {
        if (!(await this.backWithin(AWAY_WAIT_MS))) throw (stayedAway = new Error('the NATS connection stayed away; notice not sent'));
        deadline = Date.now() + PUBLISH_DEADLINE_MS;
      }
      try {
        await within(this.ensureStream(), PUBLISH_ATTEMPT_MS, 'the notice stream was not found in time', { unref: true });
        await this.js.publish(this.prefix + subject, data, { timeout: PUBLISH_ATTEMPT_MS, headers: this.headers() });
        this.ackedAt = performance.now();
        this.beats = true;
      } catch (err) {
        // Stored twice at worst (an attempt that timed out after all): an eviction twice is the same eviction.
        // No leader yet, or no stream (the servers restarted and it lived in memory): looked for, and made, again by
        // the next attempt.
        this.streamReady = undefined;
        throw err;
      }
    });
  }

  /** Resolves true once the connection is back, false when it is not within `ms` or the stream is closed. */
  private async backWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    });
    await Promise.race([this.away?.back, expired]);
    clearTimeout(timer);
    return !this.away && !this.closed;
  }

  /** Hands every notice stored from now on whose subject matches to `handler`, in the stream's order. */
  async listen(subject: string, handler: NoticeHandler): Promise<Unsubscribe> {
    await (this.ready ??= this.start().catch((err) => {
      this.ready = undefined;
      throw err;
    }));
    const listener = { filter: subjectPattern(subject), handler };
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Resolves true once every notice the stream stored before this call has been handed to the listeners here; false
   * when that could not be made sure in time (the caller then trusts nothing it kept). A call that arrives while a
   * question is out waits for the next one (the one out may have been asked before the call came), so a burst of
   * requests costs at most two questions.
   */
  caughtUp(arrivedAt?: number): true | Promise<boolean> {
    if (!this.ready) return true; // no listener: nothing to hand over
    this.lastAskedAt = performance.now();
    this.unasked = 0;
    // A fence asked after the request arrived, and passed, covers it (see Bus.caughtUp).
    if (arrivedAt !== undefined && this.passedAskedAt >= arrivedAt) return true;
    if (this.resting)
      return this.wake().then(
        () => this.caughtUp(),
        () => false,
      );
    if (!this.current) return (this.current = this.round());
    return (this.next ??= this.current.then(() => {
      this.next = undefined;
      return (this.current = this.round());
    }));
  }

  async close(): Promise<void> {
    // A goodbye, so that the others do not wait for this process's heartbeats (sent with the connection's drain).
    if (this.beats && !this.closed && !this.away && !this.nc.isClosed())
      this.nc.publish(this.prefix + ALIVE, codec.encode({ gone: true }), { headers: this.headers() });
    this.closed = true;
    this.unreported();
    clearInterval(this.heartbeat);
    this.sub?.unsubscribe();
    this.resting?.unsubscribe();
    for (const w of this.waiting) w.settle(false);
    this.away?.resolve();
  }

  private round(): Promise<boolean> {
    const round: Promise<boolean> = this.catchUp().finally(() => {
      if (this.current === round) this.current = undefined;
    });
    return round;
  }

  private async catchUp(): Promise<boolean> {
    // Away: nothing can be made sure, and a question asked now would wait for the connection. Just back: writers that
    // were away too may not be back yet, and their notices not in. A question that timed out still unanswered: the
    // stream does not answer. A process silent: it may be writing without its notices reaching the stream.
    if (this.away || performance.now() < this.trustFrom || this.unanswered || this.anySilent()) return false;
    let timer: NodeJS.Timeout | undefined;
    let lost!: () => void;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), CATCH_UP_TIMEOUT_MS);
      timer.unref();
      // The connection lost while the question is out: its answer would come from before, if at all.
      lost = () => resolve(false);
      this.asking.add(lost);
    });
    const waited = { seq: 0, settle: (_passed: boolean) => {} };
    const askedAt = performance.now();
    const question = this.lastStored();
    try {
      // A question that fails, or answers after the catch-up gave up on it, makes this catch-up false and nothing else.
      const asked = question.then((last) => last !== undefined && this.handedOver(last, waited)).catch(() => false);
      const passed = await Promise.race([late, asked]);
      if (!passed && !this.unanswered) {
        const unanswered: Promise<unknown> = question
          .catch(() => undefined)
          .finally(() => {
            if (this.unanswered === unanswered) this.unanswered = undefined;
          });
        this.unanswered = unanswered;
      }
      // Every process heard from up to the stream's last message, this one included: none is silent now.
      if (passed && this.anySilent()) return false;
      if (passed) this.passedAskedAt = Math.max(this.passedAskedAt, askedAt);
      return passed;
    } finally {
      clearTimeout(timer);
      this.asking.delete(lost);
      this.waiting.delete(waited);
    }
  }

  /** Whether a process heard from lately has fallen silent: logged when the first does, and when all are heard again. */
  private anySilent(): boolean {
    const silent = this.liveness.silent();
    if (silent !== undefined && !this.reportedSilent)
      this.log.warn({ stream: this.stream, process: silent }, 'a process fell silent on the notice stream; kept answers are not trusted');
    else if (silent === undefined && this.reportedSilent)
      this.log.info({ stream: this.stream }, 'every process is heard on the notice stream again; kept answers are trusted');
    this.reportedSilent = silent !== undefined;
    return this.reportedSilent;
  }

  /** The stream's last sequence, as its leader knows it; undefined when the stream was made again (after `onGap`). */
  private async lastStored(): Promise<number | undefined> {
    await this.ready;
    let info = await this.described();
    if (info === 'not found') {
      // Gone (the servers restarted and it lived in memory): made again, and what was on it is lost.
      this.streamReady = undefined;
      await this.ensureStream();
      info = await this.described();
      if (info === 'not found') throw new Error(`the notice stream ${this.stream} was not found`);
    }
    const leader = info.cluster?.leader;
    if (info.created === this.created && leader === this.leader) return info.state.last_seq;
    if (info.created !== this.created) {
      this.created = info.created;
      this.handled = info.state.last_seq;
      this.log.warn({ stream: this.stream }, 'the notice stream was made again; caches start over');
    } else this.log.info({ stream: this.stream, leader }, 'the notice stream has a new leader; caches start over');
    this.leader = leader;
    this.onGap();
    return undefined;
  }

  /**
   * The stream's description, as its leader answers JetStream's STREAM.INFO, read for what a fence needs of it. Every
   * catch-up asks it, so it is asked with a plain request: JetStreamManager's `streams.info` checks and converts more
   * than a fence reads, a third more of this process's CPU a question (docs/benchmarks.md).
   */
  private async described(): Promise<StreamDescription | 'not found'> {
    const answer = await this.nc.request(`${JS_API}STREAM.INFO.${this.stream}`, undefined, { timeout: JS_API_TIMEOUT_MS });
    const info = codec.decode(answer.data) as StreamDescription & { error?: { err_code?: number; description?: string } };
    if (info.error?.err_code === STREAM_NOT_FOUND) return 'not found';
    if (info.error || typeof info.state?.last_seq !== 'number')
      throw new Error(`the notice stream's description was refused: ${info.error?.description ?? 'no sequence in it'}`);
    return info;
  }

  /** Resolves true once the notice numbered `seq` has been handed over here. */
  private handedOver(seq: number, waited: { seq: number; settle: (passed: boolean) => void }): Promise<boolean> | boolean {
    if (this.handled >= seq || this.closed) return !this.closed;
    return new Promise<boolean>((resolve) => {
      waited.seq = seq;
      waited.settle = resolve;
      this.waiting.add(waited);
    });
  }

  private streamReady: Promise<void> | undefined;

  /** Creates the stream once per process when it does not exist; an existing one is left as it is. */
  private ensureStream(): Promise<void> {
    if (this.streamReady) return this.streamReady;
    const ready: Promise<void> = this.createStream().catch((err) => {
      if (this.streamReady === ready) this.streamReady = undefined;
      throw err;
    });
    return (this.streamReady = ready);
  }

  private async createStream(): Promise<void> {
    const existing = await this.jsm.streams.info(this.stream).catch(() => undefined);
    if (existing?.config.republish?.dest === `${this.ordered}>`) return;
    // Made by an earlier version without the ordered republishing its listeners need, which NATS cannot add to a
    // stream: made again. It holds only notices of the last minute; listeners see the numbers start over.
    if (existing) await this.jsm.streams.delete(this.stream).catch(() => false);
    const clustered = Boolean(this.nc.info?.cluster);
    const wanted = clustered ? CLUSTER_REPLICAS : 1;
    // Three replicas on a cluster, fewer only when the cluster cannot place three (it has fewer nodes up); in memory,
    // on disk only where the servers keep no memory for streams.
    for (let replicas = wanted; replicas >= 1; replicas--) {
      for (const storage of [StorageType.Memory, StorageType.File]) {
        try {
          await this.jsm.streams.add({
            name: this.stream,
            subjects: [`${this.prefix}>`],
            storage,
            num_replicas: replicas,
            max_age: NOTICE_MAX_AGE_MS * 1_000_000,
            max_bytes: NOTICE_MAX_BYTES,
            discard: DiscardPolicy.Old,
            republish: { src: `${this.prefix}>`, dest: `${this.ordered}>` },
          });
          if (replicas < wanted || storage !== StorageType.Memory)
            this.log.warn(
              { stream: this.stream, replicas, storage },
              'notice stream made with fewer replicas or other storage than wanted: the servers had no room for it',
            );
          return;
        } catch (err) {
          // Another process made it meanwhile.
          const made = await this.jsm.streams.info(this.stream).catch(() => undefined);
          if (made?.config.republish?.dest === `${this.ordered}>`) return;
          const noRoom = /insufficient (storage )?resources|no suitable peers|storage resources exceeded|memory/i.test(
            String((err as Error).message),
          );
          if (!noRoom || (replicas === 1 && storage === StorageType.File)) throw err;
        }
      }
    }
  }

  /** Subscribes to the notices the stream's leader publishes again, from the next one stored. */
  private async start(): Promise<void> {
    await this.ensureStream();
    this.sub = await this.followFromNow();
  }

  /**
   * A subscription to the notices stored from now on. Subscribed first, so nothing stored after the sequence read below
   * passes by unseen; what arrives meanwhile waits, and what of it the stream had stored by then is left out (it is
   * before the point this process starts from, not a notice missed).
   */
  private async followFromNow(): Promise<Subscription> {
    let early: Msg[] | undefined = [];
    const sub = this.nc.subscribe(`${this.ordered}>`, { callback: (err, m) => !err && (early ? early.push(m) : this.handle(m)) });
    try {
      await this.nc.flush();
      const info = await this.jsm.streams.info(this.stream);
      this.handled = info.state.last_seq;
      this.created = info.created;
      this.leader = info.cluster?.leader;
    } catch (err) {
      sub.unsubscribe();
      throw err;
    }
    const arrived = early;
    early = undefined;
    for (const m of arrived) if (sequenceOf(m) > this.handled) this.handle(m);
    return sub;
  }

  /**
   * Rests when no fence was asked for `restAfterMs` (REST_AFTER_MS), or sooner when `restAfterNotices` notices passed
   * unasked (REST_AFTER_NOTICES): heartbeats alone are received, so that who fell silent meanwhile is known at the wake
   * as if every notice had been; the notices themselves are not, nor handed over.
   */
  private restWhenUnasked(): void {
    const sub = this.sub;
    if (!sub || this.closed || this.current || this.waking || this.waiting.size > 0) return;
    const unaskedFor = performance.now() - this.lastAskedAt;
    const manyUnasked = this.unasked >= this.restAfterNotices && unaskedFor >= REST_AFTER_NOTICES_MIN_MS;
    if (unaskedFor <= this.restAfterMs && !manyUnasked) return;
    this.resting = this.nc.subscribe(`${this.ordered}${ALIVE}`, {
      callback: (err, m) => !err && this.alive(m.headers?.get(PROCESS_HEADER), m),
    });
    this.sub = undefined;
    // Not logged: an install with a request a minute would say so each minute in every app.
    sub.unsubscribe();
  }

  /**
   * A fence after a rest: the notices followed again from the next one stored, and every listener starts over (what it
   * kept is older than the notices it did not hear). Fails when the stream does not answer; it still rests then.
   */
  private wake(): Promise<void> {
    return (this.waking ??= this.followFromNow()
      .then((sub) => {
        if (this.closed) return void sub.unsubscribe();
        this.sub = sub;
        this.resting?.unsubscribe();
        this.resting = undefined;
        this.onGap();
      })
      .finally(() => (this.waking = undefined)));
  }

  /**
   * The connection was lost: notices published meanwhile are not handed over, and the listeners know it (they follow
   * the bus's health), so the jump in sequence numbers when notices come again is no news. Catch-ups whose question is
   * out answer false now, rather than once their time is up; notices being sent wait for the connection.
   */
  connectionLost(): void {
    this.resync = true;
    if (!this.away) {
      let resolve!: () => void;
      const back = new Promise<void>((r) => (resolve = r));
      this.away = { back, resolve };
    }
    for (const lost of this.asking) lost();
    this.asking.clear();
  }

  /**
   * The connection is back. Whether the stream is there is asked again (the servers may have restarted without it,
   * and a question asked while away is never answered: the client drops what it buffered at each attempt to
   * reconnect, so its wait would hold up every notice after it, up to the JetStream API's 5 s timeout twice over),
   * then the notices that waited are sent. Catch-ups answer false for TRUST_AFTER_RECONNECT_MS.
   */
  connectionBack(): void {
    this.streamReady = undefined;
    this.unanswered = undefined;
    this.trustFrom = performance.now() + TRUST_AFTER_RECONNECT_MS;
    const away = this.away;
    this.away = undefined;
    away?.resolve();
  }

  /**
   * A process was heard from. Silent until now (here, or by its own account): notices of its may have been lost on the
   * way, so the listeners start over.
   */
  private heard(from: string, m: Msg): void {
    const startOver = this.liveness.heardFrom(from) === 'back' || m.headers?.get(WAS_SILENT_HEADER);
    // Resting, nothing is kept to start over from: the wake starts over anyway.
    if (startOver && !this.resting) this.onGap();
  }

  /** A heartbeat, or a goodbye (the process no longer waited for). */
  private alive(from: string | undefined, m: Msg): void {
    if (!from) return;
    if (goodbye(m)) this.liveness.gone(from);
    else this.heard(from, m);
  }

  private handle(m: Msg): void {
    const seq = sequenceOf(m);
    if (!Number.isSafeInteger(seq)) return;
    if (this.resync) this.resync = false;
    else if (seq !== this.handled + 1) {
      // A jump: notices were lost on the way. A number already seen: the stream was made again (its servers
      // restarted without it, as it lives in memory) and counts from 1, so what was lost cannot be told.
      this.log.warn({ stream: this.stream, sequence: seq, expected: this.handled + 1 }, 'notices were missed; caches start over');
      this.handled = seq;
      this.onGap();
    }
    this.handled = seq;
    const subject = m.subject.slice(this.ordered.length);
    const from = m.headers?.get(PROCESS_HEADER);
    if (subject === ALIVE) {
      this.alive(from, m);
      for (const w of this.waiting) if (w.seq <= seq) w.settle(true);
      return;
    }
    if (from) this.heard(from, m);
    this.unasked += 1;
    const wanting = [...this.listeners].filter((l) => l.filter.test(subject));
    let payload: unknown;
    try {
      if (wanting.length > 0) payload = codec.decode(m.data);
    } catch {
      wanting.length = 0;
    }
    for (const l of wanting) {
      try {
        l.handler(subject, payload);
      } catch (err) {
        // Thrown into the connection's reader it would end the process; the other listeners still hear the notice.
        this.log.error({ subject, err: String((err as Error)?.message ?? err) }, 'a notice listener failed');
      }
    }
    // After the listeners: a catch-up passes once what it waits for has been handled.
    for (const w of this.waiting) if (w.seq <= seq) w.settle(true);
  }
}

/** The stream sequence the leader republished a message with (NaN when it has none). */
function sequenceOf(m: Msg): number {
  return Number(m.headers?.get('Nats-Sequence'));
}

/** Whether a message on the heartbeats' subject is a goodbye (a process that stopped), rather than a heartbeat. */
function goodbye(m: Msg): boolean {
  try {
    return (codec.decode(m.data) as { gone?: boolean }).gone === true;
  } catch {
    return false; // a heartbeat all the same
  }
}
