import type { Knex } from 'knex';
import type { TupleSource, UsersRead } from './source';
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
}

const DEFAULTS = { pollMs: 5_000, retentionSeconds: 3_600, pageSize: 20_000, maxChanges: 50_000 };
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

/**
 * The tuples of the authz schema held in memory (a TupleGraph), loaded from the table and kept current by the
 * change log the table's triggers write (migration 20261124080000_tuple_changes). Changes are applied in log
 * order and only once committed (a reader never sees uncommitted log rows), whoever made them.
 *
 * Loading reads the table page by page without one long snapshot, then replays the log from the number read
 * before the first page: a tuple that changed meanwhile is set by its last logged change, one that did not
 * was the same on every page. While the tuples are loading (or reloading, after falling behind the pruned
 * log), `usable` answers false and checks read the table as before.
 */
export class MemoryTuples implements TupleSource {
  private graph?: TupleGraph;
  /** The log number the graph reflects. */
  private applied = 0;
  private loading?: Promise<void>;
  /** After an error that is not worth retrying (the schema lacks the change log): never load. */
  private disabled = false;
  private closed = false;
  private inFlight?: Promise<void>;
  private queued?: Promise<void>;
  /** `localWrites.started` as of the last catch-up that began with no local write open. */
  private seenWrites = -1;
  private timer?: NodeJS.Timeout;
  private lastPrune = 0;
  private readonly options: Required<MemoryTuplesOptions>;

  constructor(
    private readonly store: TupleStore,
    options: MemoryTuplesOptions,
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Loads the tuples (once; again after a failure); resolves when they are in memory. */
  load(): Promise<void> {
    if (this.graph) return Promise.resolve();
    if (this.disabled || this.closed) return Promise.reject(new Error('in-memory tuples are not available'));
    this.loading ??= this.loadAll().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /**
   * Whether checks may be answered from memory now: loaded, and as fresh as the freshness mode requires (this
   * may read the log first). Starts loading when not loaded, and answers false meanwhile.
   */
  async usable(): Promise<boolean> {
    if (!this.graph) {
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
    return !!this.graph;
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
    return this.graph ? this.catchUp() : Promise.resolve();
  }

  private send(): Promise<void> {
    const sent = this.tail().finally(() => {
      if (this.inFlight === sent) this.inFlight = undefined;
    });
    this.inFlight = sent;
    return sent;
  }

  private async tail(): Promise<void> {
    const graph = this.graph;
    if (!graph) return;
    const writes = localWrites.started;
    const open = localWrites.open;
    const caughtUp = await this.replay(graph, this.applied);
    if (this.graph !== graph) return;
    if (caughtUp === undefined) {
      // Behind the pruned part of the log, or too far behind to replay: load everything again.
      this.graph = undefined;
      this.load().catch(() => undefined);
      return;
    }
    this.applied = caughtUp;
    if (open === 0) this.seenWrites = writes;
  }

  /** Applies the logged changes after `from` to `graph`; the number reached, or undefined when they cannot be replayed. */
  private async replay(graph: TupleGraph, from: number): Promise<number | undefined> {
    const { head, pruned, changes, complete } = await this.store.readChanges(from, this.options.maxChanges);
    if (pruned > from || !complete) return undefined;
    for (const c of changes) apply(graph, c);
    return head;
  }

  private async loadAll(): Promise<void> {
    for (;;) {
      const writes = localWrites.started;
      const open = localWrites.open;
      let start: number;
      try {
        ({ head: start } = await this.store.readHead());
      } catch (err) {
        // 42P01: no change log (a schema not migrated this far); the table answers every check.
        if ((err as { code?: string }).code === '42P01') this.disabled = true;
        throw err;
      }
      const graph = new TupleGraph();
      graph.beginLoading();
      let after: TupleRow | undefined;
      for (;;) {
        if (this.closed) throw new Error('closed');
        const page = await this.store.readPage(after, this.options.pageSize);
        for (const row of page) graph.add(row);
        if (page.length < this.options.pageSize) break;
        after = page[page.length - 1];
      }
      graph.endLoading();
      const reached = await this.replay(graph, start);
      if (reached === undefined) continue; // the log moved on too far while loading: once more
      if (this.closed) throw new Error('closed');
      this.applied = reached;
      if (open === 0) this.seenWrites = writes;
      this.graph = graph;
      this.startPolling();
      return;
    }
  }

  private startPolling(): void {
    if (this.timer || this.closed) return;
    this.lastPrune = Date.now();
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      if (this.graph) await this.catchUp();
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
    this.graph = undefined;
    if (this.timer) clearInterval(this.timer);
  }

  /** How many tuples are in memory (undefined while not loaded). */
  get size(): number | undefined {
    return this.graph?.size;
  }

  /** The tuples in memory, for comparing them with the table. */
  rows(): TupleRow[] {
    return this.graph ? [...this.graph.rows()] : [];
  }

  async readUsers(reads: UsersRead[]): Promise<Map<string, UserRef[]>[]> {
    if (!this.graph) return this.store.readUsers(reads); // dropped for a reload in the middle of a check
    return this.graph.readUsers(reads);
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
