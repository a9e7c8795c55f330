import { NoticeCache } from './notice-cache';
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
   * expires); 0 keeps it not at all.
   */
  ttlMs?: (answer: unknown) => number | undefined;
  /** Whether this request's answer may be kept at all (one that shows state kept nowhere a notice covers is asked). */
  keep?: (request: never) => boolean;
}

/** What a reader keeps of a service's read methods, and how long at most (0 keeps nothing). */
export interface KeptReadsOptions {
  /** Names the cache in its metrics (`<name>`). */
  name: string;
  ttlMs: number;
  maxEntries?: number;
  /**
   * Whether the service answers, as the reader's client last found it. While it does not, kept answers are not served:
   * the call goes to the service and fails as it would with nothing kept, so a route answers 503 naming it.
   */
  available?: () => boolean;
}

type Method = (request: unknown, opts?: { arrivedAt?: number; metadata?: Record<string, string> }) => unknown;

/**
 * A service client whose read methods named in `reads` answer from what this reader kept, keyed by the request and the
 * call's metadata (who asks), until a notice of a subject the method depends on, or the answer's lifetime. The rule is
 * the owner's: it declares each read method next to its calls, with the subjects it depends on, and announces every
 * write by method, so nothing a reader keeps outlives the change that makes it stale. What is kept is frozen: a reader
 * that changed a kept answer would change it for the next request too, so it fails at once instead.
 */
export function keptReads<C extends object>(
  client: C,
  reads: { readonly [K in keyof C]?: KeptRead },
  options: KeptReadsOptions,
): { client: C; readModel: ReadModel } {
  const cache = new NoticeCache<unknown>({ name: options.name, ttlMs: options.ttlMs, maxEntries: options.maxEntries ?? 10_000 });
  const kept = { ...client } as C;
  const subjects = new Set<string>();
  for (const [method, rule] of Object.entries(reads) as [string, KeptRead][]) {
    const own = (client as Record<string, Method | undefined>)[method];
    // A reader holding only some of the service's calls (a narrower client, a test's) keeps those.
    if (typeof own !== 'function') continue;
    const call = own.bind(client);
    for (const subject of rule.stale) subjects.add(subject);
    const how = { tags: rule.stale, ttlMs: rule.ttlMs };
    (kept as Record<string, Method>)[method] = (request, opts) =>
      (rule.keep && !rule.keep(request as never)) || (options.available && !options.available())
        ? call(request, opts)
        : cache.through(`${method}|${JSON.stringify(request)}|${JSON.stringify(opts?.metadata ?? {})}`, async () => deepFreeze(await call(request, opts)), how, opts?.arrivedAt);
  }
  const rules = [...subjects].map((subject) => ({ subject, stale: () => [subject] }));
  return { client: kept, readModel: following(cache, rules) };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** keptReads for each service of an app's clients, one cache per service (`<name>.<service>`). */
export function keptServiceReads<C extends object>(
  clients: C,
  reads: { readonly [S in keyof C]?: { readonly [M in keyof C[S]]?: KeptRead } },
  options: KeptReadsOptions,
): { clients: C; readModel: ReadModel } {
  const kept = { ...clients };
  const models: ReadModel[] = [];
  for (const service of Object.keys(reads) as (keyof C & string)[]) {
    const { client, readModel } = keptReads(clients[service] as object, reads[service] as never, { ...options, name: `${options.name}.${service}` });
    kept[service] = client as C[typeof service];
    models.push(readModel);
  }
  return { clients: kept, readModel: allOf(models) };
}
