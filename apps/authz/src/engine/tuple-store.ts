import type { Knex } from 'knex';
import { preparedRows, type Database } from '@platform/db';
import { chunks } from '@platform/service-kit';
import { TupleConflictError } from './errors';
import type { ParsedTuple } from './contextual';
import type { TupleSource, UsersRead } from './source';
import { formatObject, formatUser, type UserRef } from './tuple';
import type { Tuple, TupleCondition, WriteOptions } from './types';

/** The table of migration 20261122010000_tuples. */
export const TUPLES_TABLE = 'tuples';
/** The change log of migration 20261124080000_tuple_changes, and its one numbering row. */
export const CHANGES_TABLE = 'tuple_changes';
export const CHANGES_HEAD_TABLE = 'tuple_changes_head';

/** A stored tuple as its columns. */
export interface TupleRow {
  object_type: string;
  object_id: string;
  relation: string;
  user_type: string;
  user_id: string;
  user_relation: string;
  /** The condition the tuple counts under ('' for none) and its parameter values (null for none). */
  condition_name?: string;
  condition_context?: Record<string, unknown> | null;
}

const KEY_COLUMNS = ['object_type', 'object_id', 'relation', 'user_type', 'user_relation', 'user_id'] as const;
// Postgres takes at most 65535 bind parameters per statement; six per tuple keeps a chunk well below that.
const CHUNK = 1000;
// Changes read with the log's head; more are read by a statement of their own.
const FIRST_CHANGES = 100;

// The columns of a stored tuple besides its key: its condition.
const CONDITION_COLUMNS = ['condition_name', 'condition_context'] as const;
const ROW_COLUMNS = [...KEY_COLUMNS, ...CONDITION_COLUMNS];

const toRow = (t: ParsedTuple): TupleRow => ({
  object_type: t.object.type,
  object_id: t.object.id,
  relation: t.relation,
  user_type: t.user.type,
  user_id: t.user.id,
  user_relation: t.user.relation,
  condition_name: t.condition?.name ?? '',
  // jsonb through knex: a JSON text, so arrays stay arrays.
  condition_context: (t.condition ? JSON.stringify(t.condition.context ?? {}) : null) as unknown as Record<string, unknown> | null,
});

/** A row's condition, as a user read from it carries it (undefined for an unconditioned tuple). */
export function rowCondition(r: Pick<TupleRow, 'condition_name' | 'condition_context'>): TupleCondition | undefined {
  return r.condition_name ? { name: r.condition_name, context: parseContext(r.condition_context) } : undefined;
}

function parseContext(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return JSON.parse(value) as Record<string, unknown>;
  return (value as Record<string, unknown> | null) ?? {};
}

const toTuple = (r: TupleRow): Tuple => {
  const condition = rowCondition(r);
  return {
    user: formatUser({ type: r.user_type, id: r.user_id, relation: r.user_relation }),
    relation: r.relation,
    object: formatObject({ type: r.object_type, id: r.object_id }),
    ...(condition && { condition }),
  };
};

const keyValues = (r: TupleRow) => KEY_COLUMNS.map((c) => r[c]);

/** A logged change to the tuples, in the order it must be applied. */
export interface TupleChange extends TupleRow {
  seq: number;
  op: 'write' | 'delete' | 'truncate';
}

/** Where the change log stands: the number of its last change, and below which changes may be gone. */
export interface ChangesHead {
  head: number;
  pruned: number;
}

/** Relationship tuples in the authz schema's Postgres table. */
export class TupleStore implements TupleSource {
  private constructor(private readonly db: Database) {}

  static create(db: Database): TupleStore {
    return new TupleStore(db);
  }

  async readUsers(reads: UsersRead[]): Promise<Map<string, UserRef[]>[]> {
    const found = reads.map(() => new Map<string, UserRef[]>());
    // One branch per read and shape, each an equality prefix of the primary key (object ids and user ids as
    // `= any(...)`, one index descent per id): a range scan per branch, never a scan of every tuple on an
    // object#relation (an organization may have many members). All branches go in one statement.
    const sql: string[] = [];
    const values: unknown[] = [];
    const table = this.db.sqlName(TUPLES_TABLE);
    reads.forEach((read, i) => {
      if (read.objectIds.length === 0) return;
      for (const s of read.shapes) {
        if (s.ids?.length === 0) continue;
        sql.push(
          `select ${i} as r, object_id, user_type, user_id, user_relation, condition_name, condition_context from ${table}` +
            ' where object_type = ? and object_id = any(?) and relation = ? and user_type = ? and user_relation = ?' +
            (s.ids ? ' and user_id = any(?)' : ''),
        );
        values.push(read.objectType, read.objectIds, read.relation, s.type, s.relation);
        if (s.ids) values.push(s.ids);
      }
    });
    if (sql.length === 0) return found;
    const rows = await this.select<Omit<TupleRow, 'object_type' | 'relation'> & { r: number }>(sql.join(' union all '), values);
    for (const row of rows) {
      const users = found[row.r];
      const condition = rowCondition(row);
      if (condition && reads[row.r].withoutConditions) continue;
      const user: UserRef = condition
        ? { type: row.user_type, id: row.user_id, relation: row.user_relation, condition }
        : { type: row.user_type, id: row.user_id, relation: row.user_relation };
      const list = users.get(row.object_id);
      if (list) list.push(user);
      else users.set(row.object_id, [user]);
    }
    return found;
  }

  /** A read-only statement as a prepared one (preparedRows): a check's few statements come from a handful of texts. */
  private select<T>(sql: string, values: unknown[]): Promise<T[]> {
    return preparedRows<T>(this.db, sql, values);
  }

  async readObjectIds(objectType: string, relation: string, users: UserRef[]): Promise<string[]> {
    const ids = new Set<string>();
    for (const part of chunks(users, CHUNK)) {
      const rows: { object_id: string }[] = await this.db
        .table(TUPLES_TABLE)
        .distinct('object_id')
        .where({ object_type: objectType, relation })
        .whereIn(
          ['user_type', 'user_id', 'user_relation'],
          part.map((u) => [u.type, u.id, u.relation]),
        );
      for (const r of rows) ids.add(r.object_id);
    }
    return [...ids];
  }

  /** Where the change log stands now. */
  async readHead(): Promise<ChangesHead> {
    const [row] = await this.select<ChangesHead>(`select seq as head, pruned from ${this.db.sqlName(CHANGES_HEAD_TABLE)}`, []);
    return row;
  }

  /**
   * Where the change log stands and how many tuples the table holds then, counting no further than `limit` (one
   * statement, so one snapshot: the count is that of the head). Counting stops at the limit so it costs at most
   * that many index entries however large the table is.
   */
  async countTuples(limit: number): Promise<ChangesHead & { count: number }> {
    const [row] = await this.select<ChangesHead & { count: number }>(
      `select seq as head, pruned, (select count(*) from (select 1 from ${this.db.sqlName(TUPLES_TABLE)} limit ?) s)::int as count` +
        ` from ${this.db.sqlName(CHANGES_HEAD_TABLE)}`,
      [limit],
    );
    return row;
  }

  /**
   * The changes logged after `after`, in order, with where the log stands: the changes are exactly those up to
   * `head`. At most `limit` changes; when there are more, or the log was pruned meanwhile, `complete` is false.
   *
   * The usual answer is "nothing new", so it is found by the smallest statement there is: the head row. Only
   * when the head moved do more statements follow: the head again with the first few changes (one snapshot),
   * then, when more wait, the rest up to that head; every change up to a head was committed before it, so the
   * later statement sees them all, unless a prune removed some meanwhile, which it tells. `headMoved` (a write was
   * committed since the last read) skips the head alone: the changes are most likely there.
   */
  async readChanges(after: number, limit: number, headMoved = false): Promise<ChangesHead & { changes: TupleChange[]; complete: boolean }> {
    if (!headMoved) {
      const now = await this.readHead();
      // A head behind `after` belongs to another history (the log was recreated): not complete, so memory reloads.
      if (now.head <= after || now.pruned > after) return { ...now, changes: [], complete: now.head === after };
    }
    const tuple = 'object_type, object_id, relation, user_type, user_id, user_relation, condition_name, condition_context';
    const first = Math.min(limit, FIRST_CHANGES);
    // Both parts are small plans (no join, a small limit): a large estimate would have Postgres compile (JIT) them.
    const rows = await this.select<{ seq: number; pruned: number | null; op: TupleChange['op'] | null } & TupleRow>(
      `select seq, pruned, null as op, ${tuple.replace(/\w+/g, 'null as $&')} from ${this.db.sqlName(CHANGES_HEAD_TABLE)}` +
        ` union all (select seq, null, op, ${tuple} from ${this.db.sqlName(CHANGES_TABLE)}` +
        // A statement's deletes go before its writes (an update of a tuple is both).
        ` where seq > ? order by seq, op = 'write' limit ?)`,
      [after, first + 1],
    );
    const top = rows.find((r) => r.op === null)!;
    const head = { head: top.seq, pruned: top.pruned! };
    // As for the head read alone: nothing new, or another history.
    if (head.head <= after || head.pruned > after) return { ...head, changes: [], complete: head.head === after };
    let changes = rows.filter((r) => r.op !== null) as TupleChange[];
    let pruned = head.pruned;
    if (changes.length > first && first < limit) {
      const rest = await this.select<TupleChange & { pruned: number }>(
        `select seq, op, ${tuple}, (select pruned from ${this.db.sqlName(CHANGES_HEAD_TABLE)}) as pruned` +
          ` from ${this.db.sqlName(CHANGES_TABLE)} where seq > ? and seq <= ? order by seq, op = 'write' limit ?`,
        [after, head.head, limit + 1],
      );
      pruned = rest.length ? rest[0].pruned : Infinity;
      changes = rest;
    }
    // Union members come out in order in practice; sorting keeps the order a promise.
    changes.sort((x, y) => x.seq - y.seq || Number(x.op === 'write') - Number(y.op === 'write'));
    return { ...head, changes: changes.slice(0, limit), complete: changes.length <= limit && pruned <= after };
  }

  /** Up to `limit` stored tuples after `after` in key order (the primary key's), for loading them page by page. */
  async readPage(after: TupleRow | undefined, limit: number): Promise<TupleRow[]> {
    const columns = KEY_COLUMNS.join(', ');
    const where = after ? ` where (${columns}) > (?, ?, ?, ?, ?, ?)` : '';
    return this.select<TupleRow>(
      `select ${ROW_COLUMNS.join(', ')} from ${this.db.sqlName(TUPLES_TABLE)}${where} order by ${columns} limit ?`,
      after ? [...keyValues(after), limit] : [limit],
    );
  }

  /** Deletes changes older than `seconds` and records up to which number the log is no longer complete. */
  async pruneChanges(seconds: number): Promise<void> {
    await this.db.knex.raw(
      `with gone as (delete from ${this.db.sqlName(CHANGES_TABLE)} where created_at < now() - make_interval(secs => ?) returning seq)` +
        ` update ${this.db.sqlName(CHANGES_HEAD_TABLE)} set pruned = greatest(pruned, (select max(seq) from gone))` +
        ' where exists (select 1 from gone)',
      [seconds],
    );
  }

  /** Applies deletes then writes in one transaction; a missing delete or an existing write aborts it all. */
  async write(writes: ParsedTuple[], deletes: ParsedTuple[], opts: WriteOptions = {}): Promise<void> {
    // An idempotent write of one statement (no more than a chunk of writes or of deletes, not both) is atomic by itself:
    // it refuses nothing, so nothing of it ever needs undoing, and it goes without a transaction around it.
    const single = opts.idempotent && (writes.length === 0 || deletes.length === 0) && writes.length + deletes.length <= CHUNK;
    if (single) return this.writeWithin(undefined, writes, deletes, opts);
    await this.db.transaction((trx) => this.writeWithin(trx, writes, deletes, opts));
  }

  /** The statements of a write, in `trx` when it needs one. */
  private async writeWithin(
    trx: Knex.Transaction | undefined,
    writes: ParsedTuple[],
    deletes: ParsedTuple[],
    opts: WriteOptions,
  ): Promise<void> {
    for (const part of chunks(deletes.map(toRow), CHUNK)) {
      const gone: TupleRow[] = await this.db
        .table(TUPLES_TABLE, trx)
        .whereIn([...KEY_COLUMNS], part.map(keyValues))
        .del([...KEY_COLUMNS]);
      if (gone.length < part.length && !opts.idempotent) {
        const missing = part.find((r) => !gone.some((g) => sameRow(g, r)))!;
        throw new TupleConflictError(`cannot delete a tuple which does not exist: ${describe(missing)}`);
      }
    }
    for (const part of chunks(writes.map(toRow), CHUNK)) {
      const added: TupleRow[] = await this.db
        .table(TUPLES_TABLE, trx)
        .insert(part)
        .onConflict([...KEY_COLUMNS])
        .ignore()
        .returning([...KEY_COLUMNS]);
      if (added.length < part.length && !opts.idempotent) {
        const existing = part.find((r) => !added.some((a) => sameRow(a, r)))!;
        throw new TupleConflictError(`cannot write a tuple which already exists: ${describe(existing)}`);
      }
    }
  }

  /** Stored tuples matching the (already parsed) filter fields, in key order. */
  async read(
    filter: { objectType?: string; objectId?: string; relation?: string; user?: UserRef },
    trx?: Knex.Transaction,
  ): Promise<Tuple[]> {
    const q = this.db.table(TUPLES_TABLE, trx).select(ROW_COLUMNS);
    if (filter.objectType) q.where('object_type', filter.objectType);
    if (filter.objectId) q.where('object_id', filter.objectId);
    if (filter.relation) q.where('relation', filter.relation);
    if (filter.user) q.where({ user_type: filter.user.type, user_id: filter.user.id, user_relation: filter.user.relation });
    const rows: TupleRow[] = await q.orderBy([...KEY_COLUMNS]);
    return rows.map(toTuple);
  }
}

const sameRow = (a: TupleRow, b: TupleRow) => KEY_COLUMNS.every((c) => a[c] === b[c]);

const describe = (r: TupleRow) => {
  const t = toTuple(r);
  return `${t.user} ${t.relation} ${t.object}`;
};
