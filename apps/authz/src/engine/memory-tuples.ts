import type { Knex } from 'knex';
import { Gauge } from '@platform/telemetry';
import type { TupleSource, UsersRead } from './source';
import { TupleCache } from './tuple-cache';
import { TupleGraph } from './tuple-graph';
import type { TupleChange, TupleRow, TupleStore } from './tuple-store';
import type { UserRef } from './tuple';

/**
 * How fresh the memory must be before it answers:
 * - `strict`: every check first reads what the change log holds beyond what was applied (one indexed statement,
 *   shared by the checks that arrive while it is on its way), so a write acknowledged by any process, another
 *   replica included, counts for the next check anywhere;
 * - `local`: the log is read only after a tuple write made in this process (and every `pollMs`), for a database
 *   no other process can write: the embedded PGlite, which one process holds.
 */
export type Freshness = 'strict' | 'local';

export interface MemoryTuplesOptions {
  freshness: Freshness;
  /** How often the log is read when nothing asks (keeps an idle replica near the log's head). */
  pollMs?: number;
  /** Changes older than this are pruned from the log (a replica further behind loads everything again). */
  retentionSeconds?: number;
  /** Tuples per statement while loading. */
  pageSize?: number;
  /** More changes than this at once are not replayed: the tuples are loaded again instead. */
  maxChanges?: number;
  /**
   * Most tuples held in memory. With more in the table, checks read the table through a cache of `cacheTuples`
   * (table mode); with at most `lowWater` of this again, all are loaded again (memory mode).
   */
  maxTuples?: number;
  /** Most tuples the cache of table mode holds. */
  cacheTuples?: number;
}

/** Defaults of AUTHZ_MEMORY_TUPLES_MAX and AUTHZ_TUPLE_CACHE_MAX (docs/limits.md, "authz at scale"). */
export const DEFAULT_MAX_TUPLES = 500_000;
export const DEFAULT_CACHE_TUPLES = 200_000;
/**
 * Table mode goes back to memory once the table holds at most this share of `maxTuples`: a table hovering around the
 * bound does not load everything, drop it and load it again.
 */
const LOW_WATER = 0.9;

const DEFAULTS = {
  pollMs: 5_000,
  retentionSeconds: 3_600,
  pageSize: 20_000,
  maxChanges: 50_000,
  maxTuples: DEFAULT_MAX_TUPLES,
  cacheTuples: DEFAULT_CACHE_TUPLES,
};
// Pruning is a delete every replica may run; once in a while is enough to keep the log short.
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Tuple writes made in this process: how many started, and how many are in a transaction not yet over. Shared by
 * every engine of the process (a unit of work's engine bound to its transaction writes the same table as the
 * engine that answers checks), for the `local` freshness.
 */
const localWrites = { started: 0, open: 0 };

/**
 * Marks a tuple write made in this process; the answer ends it once its transaction is over. For a write inside a
 * caller's transaction, `trx` ends it when that transaction commits or rolls back.
 */
export function startLocalWrite(trx?: Knex.Transaction): () => void {
  localWrites.started++;
  localWrites.open++;
  let ended = false;
  const end = () => {
    if (!ended) localWrites.open--;
    ended = true;
  };
  if (trx) {
    // Without a way to see the transaction end, the write stays open: memory is then read-checked before every answer.
    trx.executionPromise?.then(end, end);
    return () => undefined;
  }
  return end;
}

/** The engines' tuples open in this process (one in a served authz; tests open several), held weakly. */
const open = new Set<WeakRef<MemoryTuples>>();
const sum = (value: (m: MemoryTuples) => number) => {
  let total = 0;
  for (const ref of open) {
    const m = ref.deref();
    if (m) total += value(m);
    else open.delete(ref);
  }
  return total;
};
new Gauge('authz_memory_tuples', 'Tuples authz holds in memory (0 in table mode, or while loading).').source((add) =>
  add(
    {},
    sum((m) => m.size ?? 0),
  ),
);
new Gauge(
  'authz_memory_tuples_max',
  'Most tuples authz holds in memory (AUTHZ_MEMORY_TUPLES_MAX); beyond it checks read the table through a bounded cache.',
).source((add) =>
  add(
    {},
    sum((m) => m.maxTuples),
  ),
);

/**
 * What the tuples are kept as: all of them (`memory`), or, when the table holds more than `maxTuples`, a bounded
 * cache of what checks read from the table (`table`), with how many tuples the table holds (at least: a count
 * stops past the bound) as counted at log number `countedAt`, plus the changes logged after it.
 */
type State = { mode: 'memory'; graph: TupleGraph } | { mode: 'table'; cache: TupleCache; count: number; countedAt: number };

/** The mode a load or a change found: loading everything stopped at the bound. */
class TooManyTuples extends Error {}

/**
 * The tuples of the authz schema held in memory, loaded from the table and kept current by the change log the
 * table's triggers write (migration 20261124080000_tuple_changes). Changes are applied in log order and only once
 * committed (a reader never sees uncommitted log rows), whoever made them.
 *
 * All of them are held (a TupleGraph: memory mode) while the table holds at most `maxTuples`; beyond, checks read
 * the table through a bounded cache (a TupleCache: table mode), which the same log replay keeps correct by
 * evicting what each change names. The mode is chosen when loading, from a count that stops past the bound, and
 * chosen again as the log says the table grows past the bound (memory mode drops its tuples) or shrinks to
 * `LOW_WATER` of it (table mode counts again and, when so, loads everything, answering from the cache meanwhile).
 *
 * Loading reads the table page by page without one long snapshot, then replays the log from the number read
 * before the first page: a tuple that changed meanwhile is set by its last logged change, one that did not
 * was the same on every page. While the tuples are loading (or reloading, after falling behind the pruned
 * log), `usable` answers false and checks read the table as before.
 */
export class MemoryTuples implements TupleSource {
  private state?: State;
  /** The log number the state reflects. */
  private applied = 0;
  private loading?: Promise<void>;
  /** Going back from table mode to memory mode: counting, then loading everything. */
  private promoting?: Promise<void>;
  /** After an error that is not worth retrying (the schema lacks the change log): never load. */
  private disabled = false;
  private closed = false;
  private inFlight?: Promise<void>;
  private queued?: Promise<void>;
  /** A write of this process committed since the log was last read (catchUpIfLoaded). */
  private headMoved = false;
  /** `localWrites.started` as of the last catch-up that began with no local write open. */
  private seenWrites = -1;
  private timer?: NodeJS.Timeout;
  private lastPrune = 0;
  private readonly options: Required<MemoryTuplesOptions>;
  private readonly reported = new WeakRef(this);

  constructor(
    private readonly store: TupleStore,
    options: MemoryTuplesOptions,
  ) {
    this.options = { ...DEFAULTS, ...options };
    open.add(this.reported);
  }

  /** Loads the tuples (once; again after a failure); resolves when checks are answered from memory or the cache. */
  load(): Promise<void> {
    if (this.state) return Promise.resolve();
    if (this.disabled || this.closed) return Promise.reject(new Error('in-memory tuples are not available'));
    this.loading ??= this.loadAll().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /**
   * Whether checks may be answered from here now: loaded, and as fresh as the freshness mode requires (this
   * may read the log first). Starts loading when not loaded, and answers false meanwhile.
   */
  async usable(): Promise<boolean> {
    if (!this.state) {
      if (!this.disabled && !this.closed) this.load().catch(() => undefined);
      return false;
    }
    if (this.options.freshness === 'strict' || localWrites.open > 0 || localWrites.started !== this.seenWrites) {
      try {
        await this.catchUp();
      } catch {
        return false; // the table answers instead (and reports the error, if it persists)
      }
    }
    return !!this.state;
  }

  /**
   * Applies what the log holds beyond what was applied, read by a statement sent after this call: at most one
   * is on its way at a time, and callers arriving meanwhile share the next one (the one on its way may have been
   * read before their writes were acknowledged).
   */
  catchUp(): Promise<void> {
    if (!this.inFlight) return this.send();
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.send();
      });
    return this.queued;
  }

  /** catchUp, when the tuples are loaded (a write's commit; nothing to apply before). */
  catchUpIfLoaded(): Promise<void> {
    if (!this.state) return Promise.resolve();
    // The log's head moved with the write: the next read goes straight for the changes, not the head alone first.
    this.headMoved = true;
    return this.catchUp();
  }

  private send(): Promise<void> {
    const sent = this.tail().finally(() => {
      if (this.inFlight === sent) this.inFlight = undefined;
    });
    this.inFlight = sent;
    return sent;
  }

  private async tail(): Promise<void> {
    const state = this.state;
    if (!state) return;
    const writes = localWrites.started;
    const open = localWrites.open;
    const from = this.applied;
    const moved = this.headMoved;
    this.headMoved = false;
    const { head, pruned, changes, complete } = await this.store.readChanges(from, this.options.maxChanges, moved);
    if (this.state !== state) return;
    if (pruned > from || !complete) {
      // Behind the pruned part of the log, or too far behind to replay: load (or count) again.
      this.drop();
      this.load().catch(() => undefined);
      return;
    }
    if (state.mode === 'memory') for (const c of changes) apply(state.graph, c);
    else for (const c of changes) evict(state, c);
    this.applied = head;
    if (open === 0) this.seenWrites = writes;
    if (state.mode === 'memory' && state.graph.size > this.options.maxTuples) {
      // Grown past the bound: the cache takes over from the number the graph reached (it starts empty).
      this.state = this.tableState(state.graph.size, head);
    } else if (state.mode === 'table' && state.count <= this.options.maxTuples * LOW_WATER) {
      this.promote(state);
    }
  }

  /** Counts again and, when the tuples fit, loads them all; the cache answers until they are loaded. */
  private promote(state: State & { mode: 'table' }): void {
    if (this.promoting || this.closed) return;
    this.promoting = (async () => {
      const counted = await this.store.countTuples(this.options.maxTuples + 1);
      if (this.state !== state) return;
      if (counted.count > this.options.maxTuples * LOW_WATER) {
        // Still many: the count is that of the head it was made at; only changes after it count from now on (those
        // applied meanwhile are lost to the count, which only decides when to count again).
        state.count = counted.count;
        state.countedAt = counted.head;
        return;
      }
      const loaded = await this.readGraph(counted.head);
      if (this.state !== state || !loaded) return;
      this.state.cache.close();
      this.state = { mode: 'memory', graph: loaded.graph };
      this.applied = loaded.reached;
    })()
      .catch(() => undefined) // the next change that finds the table small enough tries again
      .finally(() => (this.promoting = undefined));
  }

  /** A table-mode state with an empty cache. */
  private tableState(count: number, countedAt: number): State {
    return { mode: 'table', cache: new TupleCache(this.store, this.options.cacheTuples), count, countedAt };
  }

  private drop(): void {
    if (this.state?.mode === 'table') this.state.cache.close();
    this.state = undefined;
  }

  private async loadAll(): Promise<void> {
    for (;;) {
      const writes = localWrites.started;
      const open = localWrites.open;
      let counted: Awaited<ReturnType<TupleStore['countTuples']>>;
      try {
        counted = await this.store.countTuples(this.options.maxTuples + 1);
      } catch (err) {
        // 42P01: no change log (a schema not migrated this far); the table answers every check.
        if ((err as { code?: string }).code === '42P01') this.disabled = true;
        throw err;
      }
      if (this.closed) throw new Error('closed');
      let next: State;
      let reached = counted.head;
      if (counted.count > this.options.maxTuples) {
        // Too many: the cache starts empty at the number counted, so it misses nothing logged after it.
        next = this.tableState(counted.count, counted.head);
      } else {
        let loaded;
        try {
          loaded = await this.readGraph(counted.head);
        } catch (err) {
          if (!(err instanceof TooManyTuples)) throw err;
          // Grown past the bound since it was counted: table mode, from where the pages began.
          loaded = { graph: undefined, reached: counted.head };
        }
        if (!loaded) continue; // the log moved on too far while loading: once more
        if (this.closed) throw new Error('closed');
        reached = loaded.reached;
        next = loaded.graph ? { mode: 'memory', graph: loaded.graph } : this.tableState(this.options.maxTuples + 1, counted.head);
      }
      this.applied = reached;
      if (open === 0) this.seenWrites = writes;
      this.state = next;
      this.startPolling();
      return;
    }
  }

  /**
   * Reads every tuple into a graph, pages from `start` on, then replays the log from `start`. Undefined when the
   * log cannot be replayed from there; TooManyTuples past the bound.
   */
  private async readGraph(start: number): Promise<{ graph: TupleGraph; reached: number } | undefined> {
    const graph = new TupleGraph();
    graph.beginLoading();
    let after: TupleRow | undefined;
    for (;;) {
      if (this.closed) throw new Error('closed');
      const page = await this.store.readPage(after, this.options.pageSize);
      for (const row of page) graph.add(row);
      if (graph.size > this.options.maxTuples) throw new TooManyTuples();
      if (page.length < this.options.pageSize) break;
      after = page[page.length - 1];
    }
    graph.endLoading();
    const { head, pruned, changes, complete } = await this.store.readChanges(start, this.options.maxChanges);
    if (pruned > start || !complete) return undefined;
    for (const c of changes) apply(graph, c);
    return { graph, reached: head };
  }

  private startPolling(): void {
    if (this.timer || this.closed) return;
    this.lastPrune = Date.now();
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      if (this.state) await this.catchUp();
      if (Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await this.store.pruneChanges(this.options.retentionSeconds);
      }
    } catch {
      // The next check reads the log again, or the table; nothing to do here.
    }
  }

  /** Prunes the log now (as the poll does once in a while). */
  prune(retentionSeconds = this.options.retentionSeconds): Promise<void> {
    return this.store.pruneChanges(retentionSeconds);
  }

  /** Stops polling and loading; checks read the table from then on. */
  close(): void {
    this.closed = true;
    this.drop();
    if (this.timer) clearInterval(this.timer);
    open.delete(this.reported);
  }

  /** Resolves once a return from table mode to memory mode under way (if any) is over, loaded or not. */
  async settled(): Promise<void> {
    await this.promoting;
  }

  /** The bound of memory mode. */
  get maxTuples(): number {
    return this.options.maxTuples;
  }

  /** `memory` (all tuples held), `table` (checks read the table through the cache), or undefined while not loaded. */
  get mode(): 'memory' | 'table' | undefined {
    return this.state?.mode;
  }

  /** How many tuples are in memory (undefined while not loaded, and in table mode). */
  get size(): number | undefined {
    return this.state?.mode === 'memory' ? this.state.graph.size : undefined;
  }

  /** The cache of table mode (undefined in memory mode). */
  get cache(): TupleCache | undefined {
    return this.state?.mode === 'table' ? this.state.cache : undefined;
  }

  /** The tuples in memory, for comparing them with the table. */
  rows(): TupleRow[] {
    return this.state?.mode === 'memory' ? [...this.state.graph.rows()] : [];
  }

  async readUsers(reads: UsersRead[]): Promise<Map<string, UserRef[]>[]> {
    const state = this.state;
    if (!state) return this.store.readUsers(reads); // dropped for a reload in the middle of a check
    return state.mode === 'memory' ? state.graph.readUsers(reads) : state.cache.readUsers(reads);
  }

  /** Reverse lookups (list objects) stay in the table, whose second index serves them; memory keeps one index only. */
  readObjectIds(objectType: string, relation: string, users: UserRef[]): Promise<string[]> {
    return this.store.readObjectIds(objectType, relation, users);
  }
}

function apply(graph: TupleGraph, c: TupleChange): void {
  if (c.op === 'write') graph.add(c);
  else if (c.op === 'delete') graph.remove(c);
  else graph.clear();
}

/** A change in table mode: evicts what it names, and counts it (a logged write inserted a row, a delete removed one). */
function evict(state: State & { mode: 'table' }, c: TupleChange): void {
  if (c.op === 'truncate') state.cache.clear();
  else state.cache.evict(c);
  if (c.seq <= state.countedAt) return;
  if (c.op === 'truncate') state.count = 0;
  else state.count += c.op === 'write' ? 1 : -1;
}
