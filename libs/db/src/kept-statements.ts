/**
 * Statements a Postgres server keeps parsed, by their text (decision D113). knex sends every statement unnamed, which
 * the server parses, analyses and plans on every run; the same route runs the same texts again and again. On a server,
 * the pg client class here gives each read and write a name, so pg prepares it once per connection and then only binds
 * and executes it. The embedded engine does the same in its worker (pglite-worker.ts), told by these rules which
 * statements to keep.
 */

/** The statements kept: reads and writes. */
const KEPT = new Set(['select', 'insert', 'update', 'delete', 'with']);
/** What leaves the tables as they are; anything else (create, alter, drop...) may change what a kept plan reads. */
const KEEPS_SCHEMA = new Set([
  ...KEPT,
  'begin',
  'start',
  'commit',
  'end',
  'rollback',
  'abort',
  'savepoint',
  'release',
  'set',
  'show',
  'lock',
  'values',
  'explain',
]);
/** Texts kept per process at most (past it, statements go unnamed); a longer text (a batch's many rows) is not kept. */
const MAX_KEPT = 1_000;
const MAX_TEXT = 4_096;

/** A statement's first word, lower-case, after any space, parentheses and comments. */
export function firstWord(sql: string): string {
  let i = 0;
  for (;;) {
    if (i < sql.length && (sql.charCodeAt(i) <= 32 || sql[i] === '(')) i++;
    else if (sql.startsWith('--', i)) i = sql.includes('\n', i) ? sql.indexOf('\n', i) + 1 : sql.length;
    else if (sql.startsWith('/*', i)) i = sql.includes('*/', i + 2) ? sql.indexOf('*/', i + 2) + 2 : sql.length;
    else break;
  }
  let j = i;
  while (j < sql.length && /[a-zA-Z]/.test(sql[j])) j++;
  return sql.slice(i, j).toLowerCase();
}

/** Whether a statement is kept parsed (a read or a write of a reasonable length). */
export const isKept = (sql: string): boolean => sql.length <= MAX_TEXT && KEPT.has(firstWord(sql));
/** Whether a statement leaves the schema as it is, so what is kept parsed still fits. */
export const keepsSchema = (sql: string): boolean => KEEPS_SCHEMA.has(firstWord(sql));

/** Postgres's answer to a kept statement whose table changed shape under it (a column added by another process). */
const isStalePlan = (err: unknown): boolean =>
  (err as { code?: string })?.code === '0A000' && /cached plan must not change result type/.test(String((err as Error)?.message));

/**
 * The names given out, by text. A statement that may change the schema starts a new generation: every text gets a new
 * name, so each connection prepares it again against the tables as they now are (the old names go with their
 * connections).
 */
class KeptNames {
  private generation = 0;
  private readonly names = new Map<string, string>();

  of(sql: string): string | undefined {
    const known = this.names.get(sql);
    if (known !== undefined || this.names.size >= MAX_KEPT) return known;
    const name = `kept_${this.generation}_${this.names.size + 1}`;
    this.names.set(sql, name);
    return name;
  }

  startOver(): void {
    this.generation += 1;
    this.names.clear();
  }
}

/**
 * knex's Postgres client with its reads and writes as named statements. A kept statement that fails because another
 * process changed its table's columns (a rolling upgrade's migration) starts a new generation and, outside a
 * transaction, runs again once under its new name; inside one the failure stands, as any failure does there.
 */
export function keptStatementsClient(ClientPG: any): any {
  // One registry per database opened (each its own pool).
  const names = new KeptNames();
  return class extends ClientPG {
    async _query(connection: { __knexTxId?: string }, obj: { sql?: string; options?: object }) {
      const sql = obj.sql ?? '';
      if (!keepsSchema(sql)) names.startOver();
      const name = isKept(sql) ? names.of(sql) : undefined;
      if (name === undefined) return super._query(connection, obj);
      // knex passes `options` on to pg's query config, where `name` makes it a prepared statement.
      const options = obj.options;
      obj.options = { ...options, name };
      try {
        return await super._query(connection, obj);
      } catch (err) {
        if (!isStalePlan(err)) throw err;
        names.startOver();
        if (connection.__knexTxId !== undefined) throw err;
        obj.options = { ...options, name: names.of(sql) };
        return super._query(connection, obj);
      }
    }
  };
}
