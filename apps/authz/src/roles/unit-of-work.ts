import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import type { Logger } from '@platform/service-kit';
import { EmbeddedEngine, type AuthzEngine, type Tuple, type TupleFilter } from '../engine';

/** Reads tuples the way the unit's write will see them. */
export interface TupleReader {
  readTuples(filter: TupleFilter): Promise<Tuple[]>;
}

/** What a unit of work does besides its row changes: the tuples to write and delete, and its answer. */
export interface RowsAndTuplesChange<T> {
  result: T;
  writes: Tuple[];
  deletes: Tuple[];
}

/** The same database, with every query (and nested transaction) inside `trx`. */
function boundTo(db: Database, trx: Knex.Transaction): Database {
  return {
    knex: trx,
    schema: db.schema,
    embedded: db.embedded,
    created: db.created,
    table: (name, t) => db.table(name, t ?? trx),
    sqlName: (table) => db.sqlName(table),
    // A nested knex transaction is a savepoint of the outer one.
    transaction: (fn) => trx.transaction(fn),
    migrate: () => Promise.reject(new Error('cannot migrate inside a unit of work')),
    rollback: () => Promise.reject(new Error('cannot roll back migrations inside a unit of work')),
    close: async () => {},
  };
}

/**
 * Row changes of the authz schema and the tuple changes that go with them, as one logical step: either both
 * take effect or neither does.
 *
 * - Embedded engine: its tuples live in the same database, so the tuple write runs inside the rows'
 *   transaction (as a savepoint, through an engine bound to that transaction). One commit covers both, and
 *   nothing waits for a second connection (the embedded PGlite has only one).
 * - OpenFGA: the tuple write is an HTTP call made while the rows' transaction is still open. When it fails,
 *   the transaction rolls back; when the commit fails after it succeeded, the inverse tuple write undoes it.
 *
 * `work` gets the transaction for its row queries and a reader that sees the tuples as the write will
 * (inside the transaction for the embedded engine). It must make no RPC.
 */
export class RowsAndTuples {
  constructor(
    private readonly db: Database,
    private readonly engine: AuthzEngine,
    private readonly log?: Logger,
  ) {}

  async run<T>(work: (trx: Knex.Transaction, tuples: TupleReader) => Promise<RowsAndTuplesChange<T>>): Promise<T> {
    const engine = this.engine;
    if (engine instanceof EmbeddedEngine) {
      return this.db.transaction(async (trx) => {
        const inTrx = new EmbeddedEngine(boundTo(this.db, trx), engine.model);
        const change = await work(trx, inTrx);
        await inTrx.write(change.writes, change.deletes);
        return change.result;
      });
    }
    let written: RowsAndTuplesChange<T> | undefined;
    try {
      return await this.db.transaction(async (trx) => {
        const change = await work(trx, engine);
        await engine.write(change.writes, change.deletes);
        written = change;
        return change.result;
      });
    } catch (err) {
      if (written) {
        // The tuples were written but the rows were not committed: take the tuples back.
        await engine.write(written.deletes, written.writes).catch((undoErr: unknown) => {
          this.log?.error({ err: undoErr, writes: written!.writes, deletes: written!.deletes }, 'could not undo a tuple write');
        });
      }
      throw err;
    }
  }
}

// The condition is part of what a tuple says: a change of it (a role's end date) is a delete and a write.
const key = (t: Tuple) => `${t.user}\u0000${t.relation}\u0000${t.object}\u0000${t.condition ? JSON.stringify(t.condition) : ''}`;

/** The writes and deletes that turn `actual` into `desired`. */
export function tupleDiff(actual: Tuple[], desired: Tuple[]): { writes: Tuple[]; deletes: Tuple[] } {
  const have = new Set(actual.map(key));
  const want = new Set(desired.map(key));
  return {
    writes: dedupe(desired).filter((t) => !have.has(key(t))),
    deletes: dedupe(actual).filter((t) => !want.has(key(t))),
  };
}

function dedupe(tuples: Tuple[]): Tuple[] {
  const seen = new Set<string>();
  return tuples.filter((t) => !seen.has(key(t)) && (seen.add(key(t)), true));
}
