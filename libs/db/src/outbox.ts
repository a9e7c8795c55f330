import { randomBytes, randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { crashPoint, DomainError, UnavailableError, type ErrorKind } from '@platform/errors';
import type { Database } from './database';
import { LeaseQueue, type HeldRow } from './lease-queue';
import type { Migration } from './migration';

/**
 * The transactional outbox (architecture: "Cross-service writes"). A change that writes this service's
 * rows and needs follow-ups elsewhere (authorization tuples, another service's state, stored objects)
 * records those follow-ups as outbox entries in the same transaction as the rows. They are applied right
 * after the commit, so a success is visible to the next request; whatever was committed but not applied
 * (a crash, a timeout, the other side down) is applied by the relay on start-up and periodically, until it
 * sticks. Every effect must therefore be idempotent: applying it twice has the effect of once.
 */

/**
 * What an effect kind does. `invert`, when the kind can be undone, answers the effect that takes it back;
 * an effect that reconciles the other side with this service's rows is its own inverse (applied again
 * after the rows are put back, it converges to them).
 */
export interface EffectHandler<P = any> {
  apply(payload: P, ctx: EffectContext, applied?: AppliedAs): Promise<void>;
  invert?(payload: P): P;
}

/**
 * The call an effect is applied for, when one is (a service kit CallContext fits): the effect's own calls
 * carry its request id, end by its deadline at the latest and are cancelled with it. The relay gives none.
 */
export interface EffectContext {
  requestId?: string;
  deadline?: Date;
  signal?: AbortSignal;
}

/** How an effect is being applied. */
export interface AppliedAs {
  /**
   * By the change that staged it, right after its commit: the rows are as the change left them unless another change
   * moved them since, so the effect may start from what the change staged instead of reading the rows first (it must
   * still read them after, as another change may have moved them). Never so for the relay, which applies an entry at
   * any later time.
   */
  afterCommit: boolean;
}

/** Records an effect of the running change; the change's effects are applied in order once it commits. */
export type StageEffect = (kind: string, payload: unknown) => void;

/**
 * A value of an effect's payload that the statement writing the change makes: a column of one of its CTEs. A class of
 * its own, so that no payload value of another shape is ever taken for SQL.
 */
export class StatementColumn {
  private constructor(readonly column: string) {}

  /** The payload's value is the column `ref` (`org.id`) of the statement's row. */
  static of(ref: string): StatementColumn {
    if (!/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/.test(ref)) throw new Error(`not a column of a CTE: ${ref}`);
    return new StatementColumn(ref);
  }
}

/** An effect whose payload's values are bound, or read from the statement's row (`StatementColumn.of`). */
export interface EffectInStatement {
  kind: string;
  payload: Record<string, unknown>;
}

/** The outbox entry of a change written by one statement (`Outbox.runInOne`). */
export interface EntryInStatement {
  /**
   * The body of the statement's `entry as (...)` CTE: it inserts the entry, its effects' payloads made from their bound
   * values and from the columns of `from` (the statement's CTEs, which answer one row, or none when the change wrote
   * nothing: then no entry is written either). With no effects (everything the change needed went into the statement
   * itself) it writes no entry and answers one row of nulls, so the statement's last select still answers its row.
   */
  insert(from: string, effects: EffectInStatement[]): Knex.Raw;
  /** The entry's columns, for the statement's last select (which reads `entry` too). */
  readonly columns: Knex.Raw;
}

/** What a statement of `runInOne` answers of its entry, by these names (EntryInStatement.columns). */
interface EntryColumns {
  outbox_entry_id?: number | string;
  outbox_entry_effects?: Effect[];
}

/** What the outbox logs through (pino's Logger fits). */
export interface OutboxLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxOptions {
  log?: OutboxLogger;
  /**
   * How long an entry belongs to whoever is applying it before the relay may take it over. Longer than
   * any one attempt (the backends' call deadline), so the relay never races a request still applying it.
   */
  leaseMs?: number;
  /** How often the relay looks for entries left behind. */
  relayIntervalMs?: number;
}

export interface RunOptions<T> {
  /** The call the change serves; the effects applied right after the commit are applied for it. */
  call?: EffectContext;
  /**
   * When given and an effect fails right after the commit, `undo` puts the rows back and the change's
   * effects are replaced by their inverses, in one transaction, so the caller's failure leaves nothing
   * behind. Without it the change stands, the relay completes it, and the caller still gets its result.
   */
  undo?: (trx: Knex.Transaction, result: T) => Promise<void>;
  /**
   * Apply the effects after the commit without the caller waiting for them (a mail through an SMTP server that may
   * be slow): the result is answered once the change committed, and a failure is left to the relay. Not with `undo`.
   */
  detach?: boolean;
}

interface Effect {
  kind: string;
  payload: unknown;
}

/** One outbox row: the effects of one committed change, applied in order. */
interface Entry {
  id: number;
  effects: Effect[];
  attempts: number;
}

const TABLE = 'outbox';
const AFTER_COMMIT: AppliedAs = { afterCommit: true };
const LATER: AppliedAs = { afterCommit: false };
const MAX_BACKOFF_MS = 5 * 60_000;
/** Most applied entries one delete names. */
const MAX_FORGOTTEN_AT_ONCE = 100;
/** Failures that may pass by themselves; any other domain error is the other side refusing the effect for good. */
const TRANSIENT: ErrorKind[] = ['unavailable', 'deadline', 'internal', 'too-many-requests'];
const isPermanent = (err: unknown) => err instanceof DomainError && !TRANSIENT.includes(err.kind);
/** CTE names, as `insert`'s `from` takes them: `org, team`. */
const CTE_NAMES = /^[a-z_][a-z0-9_]*(, [a-z_][a-z0-9_]*)*$/;

/*
 * Who holds a lease. `lease_owner` is `<holder>:<run>`: the holder is the process's outbox (one per process and
 * schema), the run one request or relay pass of it. A relay leaves a live holder's entries alone until their lease
 * runs out (a request may be applying them right now), and takes over at once those of a holder that is gone, so
 * a change cut by a crash is completed as the platform comes back rather than a lease later.
 *  - Embedded database: one process at a time holds DATA_DIR, so every holder but this process is gone.
 *  - Postgres: each holder keeps a session advisory lock on its id (in HOLDER_LOCK_SPACE) on a connection of its
 *    own for as long as it runs; Postgres drops it with the session when the process dies. A holder whose lock can
 *    be taken is gone.
 * Owners of another form (written before holders existed) are gone on the embedded database and waited out on
 * Postgres.
 */
/** The first key of the two-key advisory locks the holders keep ("OBOX"), apart from any other lock. */
const HOLDER_LOCK_SPACE = 0x4f424f58;
const newHolderId = () => String(randomInt(1, 2 ** 31 - 1));
/** This process's holder id on the embedded database. */
const EMBEDDED_HOLDER = newHolderId();

/** The migration that creates a service's outbox table; every service that stages effects lists it. */
export function outboxMigration(name: string): Migration {
  return {
    name,
    async up(knex, schema) {
      await knex.schema.withSchema(schema).createTable(TABLE, (t) => {
        t.comment('Effects of committed changes outside this schema (authorization tuples, other services, objects) not yet applied');
        t.bigIncrements('id').comment('Entry id: one committed change');
        t.jsonb('effects').notNullable().comment("The change's effects, [{kind, payload}], applied in order; never a secret");
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the change committed');
        t.timestamp('lease_until', { useTz: true }).notNullable().comment('Until then the entry belongs to whoever is applying it');
        t.string('lease_owner', 36).notNullable().comment('Who holds the lease (a request or a relay pass)');
        t.integer('attempts').notNullable().defaultTo(0).comment('Failed attempts so far');
        t.text('last_error').nullable().comment('The last failure, for operators');
        t.index(['lease_until']);
      });
    },
    async down(knex, schema) {
      await knex.schema.withSchema(schema).dropTable(TABLE);
    },
  };
}

/** A service's outbox: stages effects with its rows, applies them after the commit, relays what is left. */
export class Outbox {
  private readonly relayIntervalMs: number;
  /** The entries as work rows: leased to a request or relay pass, retried after a backoff from the relay interval. */
  private readonly queue: LeaseQueue;
  private timer?: NodeJS.Timeout;
  private relaying?: Promise<number>;
  /** Postgres: this outbox's holder id, and the connection whose session keeps its advisory lock. */
  private holderId?: string;
  private holding?: Promise<string>;
  private lockConnection?: { conn: any; lost: boolean };
  /**
   * Set by `stop`: a change or relay asked afterwards is refused. Taking the holder's lock again would keep a
   * connection out of the pool for good, and the database's close, which waits for every connection, would never end.
   */
  private stopped = false;
  /** Changes and detached effects in progress: `stop` waits for them before it lets go of the lock. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Entries applied and waiting for their delete (`forget`), and whether a delete is running. */
  private readonly appliedEntries: { row: HeldRow; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private forgetting = false;

  constructor(
    private readonly db: Database,
    private readonly handlers: Record<string, EffectHandler>,
    private readonly opts: OutboxOptions = {},
  ) {
    this.relayIntervalMs = opts.relayIntervalMs ?? 5_000;
    this.queue = new LeaseQueue(db, {
      table: TABLE,
      dueAt: 'lease_until',
      owner: 'lease_owner',
      leaseMs: opts.leaseMs ?? 15_000,
      backoff: { baseMs: this.relayIntervalMs, maxMs: MAX_BACKOFF_MS },
    });
  }

  /**
   * Runs `change` in one transaction together with the record of the effects it stages, then applies
   * them, and answers the change's result. When an effect fails: with `opts.undo` the change is undone and
   * the failure rethrown; without, the committed change stands, the relay completes it, and the result is
   * answered all the same.
   */
  run<T>(change: (trx: Knex.Transaction, stage: StageEffect) => Promise<T>, opts: RunOptions<T> = {}): Promise<T> {
    if (this.stopped) return Promise.reject(new UnavailableError(`the outbox is stopped: the service is shutting down`));
    return this.tracked(this.runNow(change, opts));
  }

  /**
   * Runs a change that one statement writes, its outbox entry inserted by a CTE of that statement (`entry`): a statement
   * is atomic by itself, so this takes one round trip where `run` takes four (BEGIN, the rows, the entry, COMMIT).
   * `write` runs the statement and answers the change's result and the statement's row (none when it wrote nothing:
   * then there is no entry either). The effects are then applied, and undone on failure, as `run` does.
   */
  runInOne<T>(write: (entry: EntryInStatement) => Promise<{ result: T; row: object | undefined }>, opts: RunOptions<T> = {}): Promise<T> {
    if (this.stopped) return Promise.reject(new UnavailableError(`the outbox is stopped: the service is shutting down`));
    return this.tracked(this.runInOneNow(write, opts));
  }

  private async runInOneNow<T>(
    write: (entry: EntryInStatement) => Promise<{ result: T; row: object | undefined }>,
    opts: RunOptions<T>,
  ): Promise<T> {
    const owner = this.ownerOf(await this.hold());
    const knex = this.db.knex;
    const entry: EntryInStatement = {
      insert: (from, effects) => {
        if (!CTE_NAMES.test(from)) throw new Error(`not a list of CTE names: ${from}`);
        if (effects.length === 0) return knex.raw('select null::bigint as id, null::jsonb as effects');
        for (const { kind } of effects) this.check(kind, opts);
        // Each payload a jsonb object: a column read as it is, a bound value as its JSON (an undefined one left out, as
        // JSON.stringify leaves it out of the entries `run` stores).
        const payload = (p: Record<string, unknown>) => {
          const fields = Object.entries(p).filter(([, v]) => v !== undefined);
          return knex.raw(
            `jsonb_build_object(${fields.map(() => '?::text, ?').join(', ')})`,
            fields.flatMap(([key, v]) => [
              key,
              v instanceof StatementColumn ? knex.raw(v.column) : knex.raw('?::jsonb', [JSON.stringify(v)]),
            ]),
          );
        };
        const built = effects.map((e) => knex.raw(`jsonb_build_object('kind', ?::text, 'payload', ?)`, [e.kind, payload(e.payload)]));
        const lease = this.queue.leased(owner) as { lease_owner: string; lease_until: Date };
        return knex.raw(
          `insert into ?? (effects, lease_owner, lease_until) select jsonb_build_array(${built.map(() => '?').join(', ')}), ?, ? from ${from} returning id, effects`,
          [`${this.db.schema}.${TABLE}`, ...built, lease.lease_owner, lease.lease_until],
        );
      },
      columns: knex.raw('entry.id as outbox_entry_id, entry.effects as outbox_entry_effects'),
    };
    const { result, row } = await write(entry);
    const { outbox_entry_id: id, outbox_entry_effects: stored } = (row ?? {}) as EntryColumns;
    if (id === undefined || id === null || !stored) return result;
    return this.afterCommit(Number(id), stored, stored, result, owner, opts);
  }

  /** Whether an effect of this kind may be staged by a change with these options; throws when not. */
  private check(kind: string, opts: { undo?: unknown }): void {
    const handler = this.handlers[kind];
    if (!handler) throw new Error(`no outbox handler for ${kind}`);
    if (opts.undo && !handler.invert) throw new Error(`effect ${kind} cannot be undone, so a change with an undo cannot stage it`);
  }

  private async runNow<T>(change: (trx: Knex.Transaction, stage: StageEffect) => Promise<T>, opts: RunOptions<T>): Promise<T> {
    const owner = this.ownerOf(await this.hold());
    const effects: Effect[] = [];
    const { result, id, stored } = await this.db.transaction(async (trx) => {
      const result = await change(trx, (kind, payload) => {
        this.check(kind, opts);
        effects.push({ kind, payload });
      });
      if (!effects.length) return { result, id: undefined, stored: [] };
      // Applied as they are stored (JSON), so an effect sees the same payload now as the relay would later.
      const json = JSON.stringify(effects);
      return { result, id: await this.insert(trx, json, owner), stored: JSON.parse(json) as Effect[] };
    });
    if (id === undefined) return result;
    return this.afterCommit(id, effects, stored, result, owner, opts);
  }

  /**
   * Applies a committed change's entry (`effects` as staged, `stored` as stored) for the call, as `run` and `runInOne`
   * describe, and answers the change's result.
   */
  private async afterCommit<T>(id: number, effects: Effect[], stored: Effect[], result: T, owner: string, opts: RunOptions<T>): Promise<T> {
    crashPoint('outbox-after-commit');

    if (opts.detach && !opts.undo) {
      // Not for the call: its deadline or cancellation must not cut an effect the caller no longer waits for.
      void this.tracked(
        this.apply({ id, effects: stored, attempts: 0 }, owner, undefined, undefined, AFTER_COMMIT).catch(() =>
          this.opts.log?.warn({ entry: id }, 'an effect of a committed change failed; the outbox relay will complete it'),
        ),
      );
      return result;
    }
    const progress = { applied: 0 };
    try {
      // The entry was written by this very transaction and leased to this run for longer than any attempt: its effects
      // are the ones in hand, and no one else may have applied or taken it, so it is not read back first.
      await this.apply({ id, effects: stored, attempts: 0 }, owner, opts.call, progress, AFTER_COMMIT);
      return result;
    } catch (err) {
      if (!opts.undo) {
        // The change stands (a deletion, say): what is left of it is the relay's, and the caller's success holds.
        this.opts.log?.warn({ entry: id }, 'an effect of a committed change failed; the outbox relay will complete it');
        return result;
      }
      // The effects applied, and the failing one unless it was refused (then it did nothing), are taken back.
      const touched = effects.slice(0, progress.applied + (isPermanent(err) ? 0 : 1));
      await this.undo(id, touched, owner, result, opts.undo, opts.call, err);
      throw err;
    }
  }

  /** Starts the relay: one pass now, then one every relayIntervalMs. */
  start(): void {
    if (this.timer) return;
    const pass = () => {
      this.relay().catch((err) => this.opts.log?.error({ err }, 'outbox relay pass failed'));
    };
    pass();
    this.timer = setInterval(pass, this.relayIntervalMs);
    this.timer.unref();
  }

  /**
   * Stops the relay, refuses changes from now on, waits for a pass, the changes and the detached effects in progress,
   * and lets go of the holder's lock.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.relaying?.catch(() => 0);
    // A change in progress may detach an effect as it ends: waited for until none is left.
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.holding?.catch(() => undefined);
    this.holding = undefined;
    await this.unlock();
  }

  /** Applies every entry whose lease has run out, oldest first; answers how many were applied. */
  relay(): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    // One pass at a time per process; several processes share the work through leases.
    this.relaying ??= this.relayPass().finally(() => (this.relaying = undefined));
    return this.relaying;
  }

  /** `work`, counted among what `stop` waits for until it settles. */
  private tracked<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const done = () => this.inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Entries not applied yet (for readiness, metrics and tests). */
  async pending(): Promise<number> {
    const [{ n }] = await this.db.table(TABLE).count({ n: '*' });
    return Number(n);
  }

  private async relayPass(): Promise<number> {
    const holder = await this.hold();
    const owner = this.ownerOf(holder);
    let gone: string[] = [];
    const due: Entry[] = await this.db.transaction(async (trx) => {
      gone = await this.goneHolders(trx, holder);
      const entries = this.db
        .table(TABLE, trx)
        .where((q) => {
          q.where('lease_until', '<', this.db.knex.fn.now());
          if (gone.length) q.orWhereIn(this.db.knex.raw("split_part(lease_owner, ':', 1)") as any, gone);
        })
        .orderBy('id')
        .limit(100)
        .select('id', 'effects', 'attempts');
      return this.queue.take<Entry>(trx, entries, owner);
    });
    let applied = 0;
    for (const entry of due) {
      try {
        await this.apply(entry, owner, undefined);
        applied += 1;
      } catch {
        // Recorded by apply; the entry comes back after its backoff.
      }
    }
    if (applied > 0) this.opts.log?.info({ applied }, 'outbox relay applied changes left behind');
    if (gone.length && due.length)
      this.opts.log?.info({ entries: due.length }, 'outbox relay took over changes left by a process that is gone');
    return applied;
  }

  private ownerOf(holder: string): string {
    return `${holder}:${randomBytes(12).toString('hex')}`;
  }

  /** This outbox's holder id; on Postgres, once its advisory lock is held (again, if its connection was lost). */
  private hold(): Promise<string> {
    if (this.db.embedded) return Promise.resolve(EMBEDDED_HOLDER);
    if (this.lockConnection?.lost) {
      this.holding = undefined;
      void this.unlock();
    }
    this.holding ??= this.lock().catch((err) => {
      this.holding = undefined;
      throw err;
    });
    return this.holding;
  }

  /** Takes the holder's advisory lock on a connection kept for it; the same id again after a lost connection when free. */
  private async lock(): Promise<string> {
    const client = this.db.knex.client as any;
    let id = this.holderId ?? newHolderId();
    for (;;) {
      const conn = await client.acquireConnection();
      const state = { conn, lost: false };
      const lost = () => (state.lost = true);
      conn.on?.('error', lost);
      conn.on?.('end', lost);
      let held = false;
      try {
        const { rows } = await this.db.knex
          .raw('select pg_try_advisory_lock(?, ?) as held', [HOLDER_LOCK_SPACE, Number(id)])
          .connection(conn);
        held = rows[0].held === true;
      } finally {
        if (!held) await client.releaseConnection(conn);
      }
      if (held) {
        this.holderId = id;
        this.lockConnection = state;
        return id;
      }
      id = newHolderId(); // another live holder has it: a new id
    }
  }

  private async unlock(): Promise<void> {
    const held = this.lockConnection;
    this.lockConnection = undefined;
    if (!held) return;
    if (!held.lost)
      await this.db.knex
        .raw('select pg_advisory_unlock_all()')
        .connection(held.conn)
        .catch(() => undefined);
    await (this.db.knex.client as any).releaseConnection(held.conn);
  }

  /** The holders of entries still under lease that are gone (never this one). */
  private async goneHolders(trx: Knex.Transaction, mine: string): Promise<string[]> {
    const holders: string[] = (
      await this.db
        .table(TABLE, trx)
        .where('lease_until', '>=', this.db.knex.fn.now())
        .distinct(this.db.knex.raw("split_part(lease_owner, ':', 1) as holder"))
        .limit(100)
    ).map((r: { holder: string }) => r.holder);
    const gone: string[] = [];
    for (const holder of holders) {
      if (holder === mine) continue;
      if (this.db.embedded) gone.push(holder);
      else if (/^[1-9][0-9]{0,9}$/.test(holder) && Number(holder) < 2 ** 31) {
        // Taken only until this transaction ends; a live holder's session lock refuses it.
        const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?, ?) as free', [HOLDER_LOCK_SPACE, Number(holder)]);
        if (rows[0].free === true) gone.push(holder);
      }
    }
    return gone;
  }

  private async insert(trx: Knex.Transaction, effects: string, owner: string): Promise<number> {
    const [row] = await this.db
      .table(TABLE, trx)
      .insert({ effects, ...this.queue.leased(owner) })
      .returning('id');
    return row.id;
  }

  private async applyOwned(id: number, owner: string, call: EffectContext | undefined, progress = { applied: 0 }): Promise<void> {
    const entry: Entry | undefined = await this.queue.held({ id, owner }).first('id', 'effects', 'attempts');
    if (entry) await this.apply(entry, owner, call, progress);
  }

  /** Applies an entry's effects in order (each idempotent, so a retry starts over) and deletes it. */
  private async apply(
    entry: Entry,
    owner: string,
    call: EffectContext | undefined,
    progress = { applied: 0 },
    applied: AppliedAs = LATER,
  ): Promise<void> {
    try {
      for (const effect of entry.effects) {
        await this.handlers[effect.kind].apply(effect.payload, call ?? {}, applied);
        progress.applied += 1;
      }
    } catch (err) {
      await this.failed(entry, owner, err);
      throw err;
    }
    await this.forget({ id: entry.id, owner });
  }

  /**
   * Deletes an applied entry, in one statement with the other entries applied while the previous delete ran: under load
   * a write's outbox costs its insert and a share of one delete. Answers once the entry is gone (or the delete failed:
   * the entry is then applied again by the relay, which its effects allow).
   */
  private forget(row: HeldRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.appliedEntries.push({ row, resolve, reject });
      if (!this.forgetting) void this.forgetApplied();
    });
  }

  private async forgetApplied(): Promise<void> {
    this.forgetting = true;
    try {
      while (this.appliedEntries.length > 0) {
        const batch = this.appliedEntries.splice(0, MAX_FORGOTTEN_AT_ONCE);
        try {
          await this.queue.heldAll(batch.map((b) => b.row)).delete();
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.forgetting = false;
    }
  }

  /**
   * Notes a failed attempt and hands the entry to the relay after a backoff that grows with the attempts.
   * An effect refused for good (the other side says the request itself is wrong) is dropped instead:
   * retrying cannot change that answer, and an operator reads why in the log.
   */
  private async failed(entry: Entry, owner: string, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message.slice(0, 500) : String(err).slice(0, 500);
    const mine = { id: entry.id, owner };
    try {
      if (isPermanent(err)) {
        this.opts.log?.error(
          { entry: entry.id, kinds: entry.effects.map((e) => e.kind), message },
          'outbox change refused for good; dropped',
        );
        await this.queue.held(mine).delete();
        return;
      }
      const attempts = entry.attempts + 1;
      this.opts.log?.warn({ entry: entry.id, attempts, message }, 'outbox effect failed; it will be retried');
      await this.queue.failed(mine, attempts, { last_error: message });
    } catch (recordErr) {
      this.opts.log?.error({ err: recordErr }, 'could not record an outbox failure');
    }
  }

  /**
   * Puts the rows back and replaces the change's entry with the inverses of the effects it touched, in one
   * transaction, then applies each inverse on its own (one that fails stays for the relay and does not hold
   * up the others). When the entry is no longer ours (the relay took it over), or the undo itself fails,
   * the change stands and the relay completes it.
   */
  private async undo<T>(
    id: number,
    touched: Effect[],
    owner: string,
    result: T,
    undo: (trx: Knex.Transaction, result: T) => Promise<void>,
    call: EffectContext | undefined,
    cause: unknown,
  ): Promise<void> {
    try {
      const inverses = await this.db.transaction(async (trx) => {
        const taken = await this.db.table(TABLE, trx).where({ id }).whereNot({ lease_owner: owner }).first('id');
        if (taken) return [];
        await this.db.table(TABLE, trx).where({ id }).delete();
        await undo(trx, result);
        const ids: number[] = [];
        for (const e of [...touched].reverse())
          ids.push(await this.insert(trx, JSON.stringify([{ kind: e.kind, payload: this.handlers[e.kind].invert!(e.payload) }]), owner));
        return ids;
      });
      for (const inverse of inverses) await this.applyOwned(inverse, owner, call).catch(() => undefined);
    } catch (undoErr) {
      this.opts.log?.error({ err: undoErr, cause }, 'could not undo a change whose effects failed; the relay will complete it');
    }
  }
}
