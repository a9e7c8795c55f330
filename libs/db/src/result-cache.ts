import { LRUCache } from 'lru-cache';

/**
 * The answers of the embedded database's read statements, kept until the next write.
 *
 * The embedded PGlite belongs to this one process (DATA_DIR is locked to it), and every statement it runs goes
 * through the worker's sessions (pglite-worker.ts). So the process sees every write, and an answer read after
 * the last write is still the database's answer: the next write empties the cache, whatever it wrote. A route
 * that reads the same organization, cluster or role on every request then makes no statement until something
 * changes, instead of queueing for PGlite's one connection (about 0.3–0.5 ms of the worker a statement).
 *
 * What is kept: a lone read (`select`, or `with` without a data-modifying part) that reads nothing the clock, a
 * sequence, a lock or a setting decides (now(), nextval(), `for update`, pg_* functions...), keyed by its text, its
 * values and its options, from its second time on. Everything else runs, and empties the cache when its answer
 * comes back unless it changes nothing (transaction control, a transaction's work_mem): writes, DDL, settings.
 * A transaction's reads use the cache until it changes something (CacheSession). A fill that was asked for
 * before the last emptying is dropped, so an answer read before a write is never kept past it.
 */

/** The answer PGlite gives a query, as the worker passes it back. */
export interface QueryAnswer {
  rows: unknown[];
  fields?: unknown;
  affectedRows?: number;
}

export interface ResultCacheOptions {
  /** How many answers are kept (least recently used go first); 0 keeps none. */
  entries: number;
  /** Answers larger than this (a rough count of their characters) are not kept. */
  maxAnswerSize: number;
}

// Reads whose answer the clock, a sequence, a lock, a setting or randomness decides: run every time.
const VOLATILE =
  /\b(now|current_timestamp|current_date|current_time|localtime|localtimestamp|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|age|random|gen_random_uuid|uuid_generate_\w+|nextval|currval|lastval|setval|set_config|current_setting|txid_\w+|pg_\w+|today|tomorrow|yesterday|into)\b|\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i;
// A statement that is a single read; anything that could write (a data-modifying CTE) is not.
const READ = /^\s*(select|with)\b/i;
const WRITES = /\b(insert|update|delete|merge|truncate|copy|call|do)\b|;\s*\S/i;
// Statements that change no data and no answer: transaction control, settings of the transaction that only
// bound its resources, and a cursor's statements (a cursor is for a select or values only; fetching moves it, and
// its answers are never kept, since the same text answers the next rows each time). Any other SET (a time zone, a
// search path) changes what later reads answer.
const HARMLESS =
  /^\s*(begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|show|set\s+local\s+(work_mem|statement_timeout|lock_timeout|idle_in_transaction_session_timeout)\b|declare\s+\w+\s+(no\s+scroll\s+)?cursor\b|fetch\b|move\b|close\b)/i;

/** What a statement text is to the cache: a read it may keep, and whether it changes nothing a later read sees. */
interface Kind {
  kept: boolean;
  harmless: boolean;
}

// Each text is classified once: texts come from code (a few per caller), and the tests run on every statement.
const kinds = new Map<string, Kind>();
const MAX_KINDS = 1000;

function kindOf(sql: string): Kind {
  let kind = kinds.get(sql);
  if (kind) return kind;
  const read = READ.test(sql) && !WRITES.test(sql);
  kind = { kept: read && !VOLATILE.test(sql), harmless: HARMLESS.test(sql) || (read && !/\binto\b/i.test(sql)) };
  if (kinds.size < MAX_KINDS) kinds.set(sql, kind);
  return kind;
}

/** Whether `sql` is a read whose answer may be kept until the next write. */
export function isKeptRead(sql: string): boolean {
  return kindOf(sql).kept;
}

/**
 * One knex session's view of the cache. Its reads use the cache outside a transaction, and inside one until the
 * transaction has done anything but read: the worker runs an open transaction alone (no other session's
 * statement comes between), so until it writes it sees exactly the committed data, as a read outside would.
 */
export class CacheSession {
  private inTransaction = false;
  /** The open transaction did something other than read: its reads may see its own uncommitted changes. */
  private changed = false;

  constructor(private readonly cache: ResultCache) {}

  /** The key of a statement the cache may answer, or undefined when it must run. */
  keyOf(sql: string, params: unknown, options: unknown): string | undefined {
    if (this.inTransaction && this.changed) return undefined;
    return this.cache.keyOf(sql, params, options);
  }

  /** What a statement sent under `sentAt` answered, and whether the session is in a transaction after it. */
  answered(sql: string, key: string | undefined, sentAt: number, answer: QueryAnswer | undefined, inTransaction: boolean): void {
    const { harmless } = kindOf(sql);
    if (!harmless) this.cache.clear();
    else if (key !== undefined && answer !== undefined) this.cache.fill(key, sentAt, answer);
    this.changed = inTransaction && (this.changed || !harmless);
    this.inTransaction = inTransaction;
  }
}

export class ResultCache {
  private readonly answers: LRUCache<string, QueryAnswer>;
  /**
   * Keys asked for once: an answer is kept only when its statement comes a second time, so statements that
   * never repeat (a value that is the time of the call) do not push out the ones that do.
   */
  private asked = new Set<string>();
  /** How many times the cache was emptied: a fill asked for under an older generation is dropped. */
  private generation = 0;
  /** Told of each answer given from the cache (its metric). */
  onHit?: () => void;

  constructor(private readonly options: ResultCacheOptions) {
    // Least recently used go first.
    this.answers = new LRUCache({ max: Math.max(1, options.entries) });
  }

  session(): CacheSession {
    return new CacheSession(this);
  }

  keyOf(sql: string, params: unknown, options: unknown): string | undefined {
    if (this.options.entries <= 0 || !isKeptRead(sql)) return undefined;
    try {
      return `${sql}\u0000${JSON.stringify(params ?? [])}\u0000${JSON.stringify(options ?? {})}`;
    } catch {
      return undefined; // values JSON cannot spell (a BigInt): run it
    }
  }

  /** A copy of the kept answer (callers may change what they get), or undefined. */
  get(key: string): QueryAnswer | undefined {
    const kept = this.answers.get(key);
    if (!kept) return undefined;
    this.onHit?.();
    return copyOf(kept);
  }

  /** The generation a statement is sent under; pass it back with its answer. */
  get current(): number {
    return this.generation;
  }

  /** Keeps a read's answer, unless something was written since it was sent or it is its key's first time. */
  fill(key: string, sentAt: number, answer: QueryAnswer): void {
    if (sentAt !== this.generation) return;
    if (!this.asked.has(key)) {
      if (this.asked.size >= this.options.entries * 4) this.asked.clear();
      this.asked.add(key);
      return;
    }
    if (sizeOf(answer.rows, this.options.maxAnswerSize) > this.options.maxAnswerSize) return;
    this.answers.set(key, copyOf(answer));
  }

  /** Forgets every answer: something may have been written. */
  clear(): void {
    this.generation += 1;
    this.answers.clear();
  }

  get size(): number {
    return this.answers.size;
  }
}

/**
 * A deep copy of an answer. Answers hold only what PGlite makes of rows: primitives, Dates, byte arrays, and plain
 * objects and arrays parsed from JSON; for those this is 7–9 times faster than structuredClone (measured: 1.8 against
 * 14–17 µs for a cluster row with its features), which a kept read pays on every use.
 */
function copyOf<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  // Tested without instanceof: answers come from the worker's messages, whose Dates and Buffers may belong to
  // another realm than the caller's (as under jest's module sandbox).
  if (Object.prototype.toString.call(value) === '[object Date]') return new Date((value as unknown as Date).getTime()) as T;
  // A typed array's own slice copies (Buffer's is a view), keeping the kind: a Buffer stays a Buffer.
  if (ArrayBuffer.isView(value)) return Uint8Array.prototype.slice.call(value as unknown as Uint8Array) as T;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = copyOf(v);
  return out as T;
}

/** A rough size of a value in characters, counting no further than `limit`. */
function sizeOf(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (v === null || typeof v !== 'object') size += 8;
    else if (Object.prototype.toString.call(v) === '[object Date]') size += 24;
    else if (ArrayBuffer.isView(v)) size += v.byteLength;
    else if (Array.isArray(v)) {
      size += 2;
      stack.push(...v);
    } else {
      for (const [k, x] of Object.entries(v)) {
        size += k.length + 4;
        stack.push(x);
      }
    }
  }
  return size;
}
