import { NOTICE_NAMES } from './notices';
import { deepFreeze, NoticeCache } from './notice-cache';
import { allOf, following, type ReadModel } from './read-model';

/** How one read method's answers are kept, as the service that answers it says. */
export interface KeptRead {
  /**
   * The notice subjects whose every notice makes this method's answers stale: its owner's, which it sends after every
   * write (announcingWrites), and those of the services whose answers it shows.
   */
  stale: readonly string[];
  /**
   * A shorter lifetime for an answer, in ms, when it changes with time alone (a contract that ends, a grant that
   * expires); 0 keeps it not at all. A stream's answer is the array of its messages.
   */
  ttlMs?: (answer: unknown) => number | undefined;
  /** Whether this request's answer may be kept at all (one that shows state kept nowhere a notice covers is asked). */
  keep?: (request: never) => boolean;
  /**
   * What an answer is about, for the subjects whose notices name what they changed (`NOTICE_NAMES`): the names a notice
   * of that subject would give (`org:7`, `account:3`), from the request and the answer. Such an answer is dropped only
   * by a notice naming one of them, or naming everything; for a subject not listed here, by every notice. The subject
   * itself as a name means the answer is about anything that subject names (every notice of it drops the answer).
   */
  about?: { readonly [subject: string]: (request: never, answer: never) => readonly string[] };
}

/**
 * How a method answering a stream (an async iterable of messages) is kept: as a unary answer is, and only when the
 * whole stream came without error and its messages came to at most `maxBytes` (wireBytes: about their serialized
 * size). The first call passes the messages on as they come and collects them while they stay under the bound; past
 * it, what was collected is let go and the rest only passes on, so keeping never holds more than the bound.
 */
export interface KeptStreamRead extends KeptRead {
  /** The largest answer kept, in bytes of its messages (wireBytes); a bigger one is passed on and not kept. */
  maxBytes: number;
}

/** A client method answering a stream (PromiseClient of @platform/service-kit: an async iterable of its messages). */
type StreamingMethod = (request: never, opts?: never) => AsyncIterable<unknown>;

/** The rules of a client's kept methods: a method answering a stream needs its bound (KeptStreamRead). */
export type KeptReads<C> = { readonly [K in keyof C]?: C[K] extends StreamingMethod ? KeptStreamRead : KeptRead };

/** What a reader keeps of a service's read methods, and how long at most (0 keeps nothing). */
export interface KeptReadsOptions {
  /** Names the cache in its metrics (`<name>`; the streams' `<name>.streams`). */
  name: string;
  ttlMs: number;
  maxEntries?: number;
  /**
   * Most bytes of streamed answers kept at once: the streams' cache keeps at most this over the largest `maxBytes`
   * of the stream rules answers (default 64 MiB), so what it holds stays under this whatever their sizes.
   */
  maxStreamBytes?: number;
  /**
   * Whether the service answers, as the reader's client last found it. While it does not, kept answers are not served:
   * the call goes to the service and fails as it would with nothing kept, so a route answers 503 naming it.
   */
  available?: () => boolean;
}

/** The default of KeptReadsOptions.maxStreamBytes. */
const MAX_STREAM_BYTES = 64 * 1024 * 1024;

type CallOpts = { arrivedAt?: number; metadata?: Record<string, string> };
type Method = (request: unknown, opts?: CallOpts) => unknown;

/**
 * A service client whose read methods named in `reads` answer from what this reader kept, keyed by the request and the
 * call's metadata (who asks), until a notice of a subject the method depends on, or the answer's lifetime. The rule is
 * the owner's: it declares each read method next to its calls, with the subjects it depends on, and announces every
 * write by method, so nothing a reader keeps outlives the change that makes it stale. What is kept is frozen: a reader
 * that changed a kept answer would change it for the next request too, so it fails at once instead.
 *
 * A method answering a stream (KeptStreamRead) keeps its messages, under a bound, and a kept stream is answered as a
 * fresh async iterable of the same frozen messages; the fence, the lost bus, `available` and the key are a unary
 * answer's. Streams are kept in a cache of their own, whose entries the bound limits (maxStreamBytes).
 */
export function keptReads<C extends object>(
  client: C,
  reads: KeptReads<C>,
  options: KeptReadsOptions,
): { client: C; readModel: ReadModel } {
  const rules = (Object.entries(reads) as [string, KeptRead | KeptStreamRead][]).filter(
    // A reader holding only some of the service's calls (a narrower client, a test's) keeps those.
    ([method]) => typeof (client as Record<string, unknown>)[method] === 'function',
  );
  const streamRules = rules.filter(([, rule]) => 'maxBytes' in rule && rule.maxBytes !== undefined) as [string, KeptStreamRead][];
  const unaryRules = rules.filter(([, rule]) => !('maxBytes' in rule) || rule.maxBytes === undefined);
  const maxEntries = options.maxEntries ?? 10_000;
  const cache = new NoticeCache<unknown>({ name: options.name, ttlMs: options.ttlMs, maxEntries });
  // Only a client with streams kept has a cache for them (and its metrics).
  const largest = Math.max(1, ...streamRules.map(([, rule]) => rule.maxBytes));
  const streams =
    streamRules.length > 0
      ? new NoticeCache<readonly unknown[]>({
          name: `${options.name}.streams`,
          ttlMs: options.ttlMs,
          maxEntries: Math.min(maxEntries, Math.floor((options.maxStreamBytes ?? MAX_STREAM_BYTES) / largest)),
        })
      : undefined;
  const kept = { ...client } as C;
  const keyOf = (method: string, request: unknown, opts?: CallOpts) =>
    `${method}|${JSON.stringify(request)}|${JSON.stringify(opts?.metadata ?? {})}`;
  const asked = (rule: KeptRead, request: unknown) =>
    (rule.keep && !rule.keep(request as never)) || (options.available && !options.available());

  for (const [method, rule] of unaryRules) {
    const call = ((client as Record<string, Method>)[method] as Method).bind(client);
    const tags = answerTags(rule);
    (kept as Record<string, Method>)[method] = (request, opts) =>
      asked(rule, request)
        ? call(request, opts)
        : cache.through(
            keyOf(method, request, opts),
            async () => {
              const answer = await call(request, opts);
              if (isAsyncIterable(answer)) throw new TypeError(`${options.name}: ${method} answers a stream; its kept rule needs maxBytes`);
              return deepFreeze(answer);
            },
            { tags: (answer: unknown) => tags(request, answer), ttlMs: rule.ttlMs },
            opts?.arrivedAt,
          );
  }

  if (streams)
    for (const [method, rule] of streamRules) {
      const call = ((client as Record<string, Method>)[method] as Method).bind(client);
      const tags = answerTags(rule);
      const ttlMs = rule.ttlMs as ((answer: readonly unknown[]) => number | undefined) | undefined;
      const source = (request: unknown, opts?: CallOpts): AsyncIterable<unknown> => {
        const answer = call(request, opts);
        if (!isAsyncIterable(answer))
          throw new TypeError(`${options.name}: ${method} does not answer a stream; its kept rule has maxBytes`);
        return answer;
      };
      (kept as Record<string, Method>)[method] = (request, opts) => {
        if (asked(rule, request)) return call(request, opts);
        // As the service's own client: nothing happens until the caller reads, and each call is a stream of its own.
        return (async function* () {
          if (!(await streams.ready(opts?.arrivedAt))) return yield* source(request, opts);
          const key = keyOf(method, request, opts);
          const found = streams.lookup(key);
          if (found) return yield* found;
          // Taken before the service is asked: a notice while the stream comes means what came is not kept.
          const since = streams.snapshot();
          let collected: unknown[] | undefined = [];
          let bytes = 0;
          for await (const message of source(request, opts)) {
            const frozen = deepFreeze(message);
            if (collected) {
              bytes += wireBytes(frozen);
              // Past the bound nothing more is collected, and what was is let go.
              if (bytes > rule.maxBytes) collected = undefined;
              else collected.push(frozen);
            }
            yield frozen;
          }
          // Only a stream read to its end without error gets here (a failure throws, a reader stopping early returns).
          if (collected) streams.keep(since, key, Object.freeze(collected), { tags: (answer) => tags(request, answer), ttlMs });
        })();
      };
    }

  const models = [following(cache, subjectRules(unaryRules)), ...(streams ? [following(streams, subjectRules(streamRules))] : [])];
  return { client: kept, readModel: allOf(models) };
}

/** The tag of the answers a notice of `subject` drops when it names everything (those kept by what they are about). */
const everythingOf = (subject: string) => `${subject}!all`;

/**
 * The tags an answer of `rule` is kept under: for a subject it says what the answer is about, those names and the
 * subject's everything-tag; for any other subject, the subject itself.
 */
function answerTags(rule: KeptRead): (request: unknown, answer: unknown) => readonly string[] {
  return (request, answer) =>
    rule.stale.flatMap((subject) => {
      const about = rule.about?.[subject];
      return about ? [everythingOf(subject), ...about(request as never, answer as never)] : [subject];
    });
}

/**
 * One notice rule per subject the methods depend on: its notice drops the answers of methods that do not say what they
 * are about, and of those that do, the answers about what it names (or all of them when it names everything).
 */
function subjectRules(rules: [string, KeptRead][]) {
  const subjects = new Set(rules.flatMap(([, rule]) => rule.stale));
  return [...subjects].map((subject) => ({
    subject,
    stale: (payload: unknown) => {
      const named = NOTICE_NAMES[subject]?.(payload) ?? 'all';
      return named === 'all' ? [subject, everythingOf(subject)] : [subject, ...named];
    },
  }));
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return !!value && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/**
 * About the serialized size of a message, in bytes: its bytes and strings (UTF-8) at their length, 8 bytes for any
 * other value; for a stream of JSON pieces (`{ json: bytes }`), the pieces' bytes.
 */
export function wireBytes(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (typeof value === 'object') {
    let bytes = 0;
    for (const inner of Object.values(value)) bytes += wireBytes(inner);
    return bytes;
  }
  return 8;
}

/** keptReads for each service of an app's clients, one cache per service (`<name>.<service>`). */
export function keptServiceReads<C extends object>(
  clients: C,
  reads: { readonly [S in keyof C]?: KeptReads<C[S]> },
  options: KeptReadsOptions,
): { clients: C; readModel: ReadModel } {
  const kept = { ...clients };
  const models: ReadModel[] = [];
  for (const service of Object.keys(reads) as (keyof C & string)[]) {
    const { client, readModel } = keptReads(clients[service] as object, reads[service] as never, {
      ...options,
      name: `${options.name}.${service}`,
    });
    kept[service] = client as C[typeof service];
    models.push(readModel);
  }
  return { clients: kept, readModel: allOf(models) };
}
