import type { Knex } from 'knex';
import { retryDelayMs } from '@platform/errors';
import type { Database } from './database';

/** How the wait after a failed attempt grows: `baseMs` after the first failure, doubled after each next one. */
export interface Backoff {
  baseMs: number;
  /** The longest wait. */
  maxMs: number;
}

/** The wait before the next attempt once `failures` attempts in a row have failed: the retry policy's, without jitter. */
export function backoffMs(failures: number, backoff: Backoff): number {
  return retryDelayMs({ baseDelayMs: backoff.baseMs, maxDelayMs: backoff.maxMs, jitter: 'none' }, failures);
}

export interface LeaseQueueOptions {
  /** The table of the work rows; each has an `id` and an `attempts` count. */
  table: string;
  /** The column of when a row is next due: moved out by a lease while it is attempted, by the backoff after a failure. */
  dueAt: string;
  /** The column naming who holds a row's lease, on a table that has one: a holder's writes then touch only its rows. */
  owner?: string;
  /** How long a taken row belongs to its taker; longer than any one attempt, so no other worker races it. */
  leaseMs: number;
  backoff: Backoff;
}

/** A row as a worker holds it: its id and, on a table with owners, whom it is leased to. */
export interface HeldRow {
  id: number | string;
  owner?: string;
}

/**
 * Work rows that workers, in one process or several, take by lease (the outbox's entries, the webhook deliveries): due
 * rows are taken under FOR UPDATE SKIP LOCKED, so workers side by side take different ones, and leased until a time,
 * so no other worker takes them while they are attempted; a failed attempt is noted with a backoff that grows with the
 * attempts; the worker lets go by its own write on the held row (deleting it, or marking it done). Which rows are due
 * is the table's to say (its due column, and whatever else it knows: a status, a gone holder).
 */
export class LeaseQueue {
  constructor(
    private readonly db: Database,
    private readonly opts: LeaseQueueOptions,
  ) {}

  /** The columns of a row leased to `owner` from now, for rows taken and for a row written already held. */
  leased(owner?: string): Record<string, unknown> {
    return {
      [this.opts.dueAt]: new Date(Date.now() + this.opts.leaseMs),
      ...(this.opts.owner ? { [this.opts.owner]: owner } : {}),
    };
  }

  /**
   * Locks the rows `due` selects (its columns include `id`), skipping those another transaction holds, and leases them
   * to `owner` in `trx`; answers them as `due` read them.
   */
  async take<R extends { id: number | string }>(trx: Knex.Transaction, due: Knex.QueryBuilder, owner?: string): Promise<R[]> {
    const rows: R[] = await due.forUpdate().skipLocked();
    if (rows.length > 0)
      await this.db
        .table(this.opts.table, trx)
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .update(this.leased(owner));
    return rows;
  }

  /** The row, as its holder may write it: on a table with owners, only while still leased to it. */
  held(row: HeldRow, trx?: Knex.Transaction): Knex.QueryBuilder {
    const q = this.db.table(this.opts.table, trx).where({ id: row.id });
    return this.opts.owner ? q.where(this.opts.owner, row.owner ?? null) : q;
  }

  /** Several rows, each as its holder may write it (`held`), in one statement. */
  heldAll(rows: readonly HeldRow[], trx?: Knex.Transaction): Knex.QueryBuilder {
    if (rows.length === 1) return this.held(rows[0], trx);
    const { owner } = this.opts;
    return this.db.table(this.opts.table, trx).where((any) => {
      for (const row of rows)
        any.orWhere((one) => (owner ? one.where({ id: row.id }).where(owner, row.owner ?? null) : one.where({ id: row.id })));
    });
  }

  /** When a row is due again once `failures` attempts in a row have failed. */
  private retryAt(failures: number): Date {
    return new Date(Date.now() + backoffMs(failures, this.opts.backoff));
  }

  /** Notes a failed attempt of a held row: its `failures` so far, due again after the backoff, and the table's other `changes`. */
  async failed(row: HeldRow, failures: number, changes: Record<string, unknown>, trx?: Knex.Transaction): Promise<void> {
    await this.held(row, trx).update({ ...changes, attempts: failures, [this.opts.dueAt]: this.retryAt(failures) });
  }
}
