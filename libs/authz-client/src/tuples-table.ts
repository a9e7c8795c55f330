/**
 * Where authz's embedded engine keeps relationship tuples in the platform's database (decision D134): the schema and
 * the columns of its `tuples` table, for a service that writes the tuples of its own change in that change's statement
 * when authz keeps them there (on a Postgres server, without OpenFGA). authz owns the table: its change log's triggers
 * number every write, whoever makes it, and each authz replica follows that log; the writer announces the tuples it
 * wrote (TUPLES_CHANGED) as authz would have.
 */
export const AUTHZ_SCHEMA = 'authz';

/**
 * Whether authz keeps its tuples in the database `knex` reaches: its table is there (authz migrated its schema) and holds
 * tuples (authz writes them there, as its embedded engine does from the site admin's first on; with OpenFGA it writes
 * none). The writer's condition, with `OPENFGA_API_URL` unset, for writing tuples itself; asked once at its start, after
 * the site admin's tuples were written. A writer that finds no tuples asks authz after each change instead, which is
 * slower and as correct.
 */
export async function tuplesTableHere(knex: { raw(sql: string): PromiseLike<unknown> }): Promise<boolean> {
  const table = `"${AUTHZ_SCHEMA}"."tuples"`;
  const { rows } = (await knex.raw(`select to_regclass('${table}') is not null as here`)) as { rows: { here: boolean }[] };
  if (rows[0]?.here !== true) return false;
  const held = (await knex.raw(`select exists (select 1 from ${table}) as held`)) as { rows: { held: boolean }[] };
  return held.rows[0]?.held === true;
}

/** One tuple as a row of the table: each field an SQL expression of the writer's statement (a column, a literal). */
export interface TupleRowSql {
  objectType: string;
  objectId: string;
  relation: string;
  userType: string;
  userId: string;
  /** Empty for a plain user, `member` for a userset (`team:5#member`). */
  userRelation: string;
  /** The statement's CTEs the expressions read (`org, team`). */
  from: string;
}

/** A type, relation or fixed id as a literal of the statement (lower-case words only: nothing a caller sent). */
export function literal(word: string): string {
  if (!/^[a-z_]*$/.test(word)) throw new Error(`not a tuple word: ${word}`);
  return `'${word}'`;
}

/** The body of a CTE inserting these tuples into authz's table (one already there is left as it is). */
export function insertTuples(rows: readonly TupleRowSql[]): string {
  if (!rows.length) throw new Error('no tuples to insert');
  const selects = rows.map(
    (r) => `select ${[r.objectType, r.objectId, r.relation, r.userType, r.userId, r.userRelation].join(', ')} from ${r.from}`,
  );
  return (
    `insert into "${AUTHZ_SCHEMA}"."tuples" (object_type, object_id, relation, user_type, user_id, user_relation) ` +
    `${selects.join(' union all ')} on conflict do nothing returning 1`
  );
}
