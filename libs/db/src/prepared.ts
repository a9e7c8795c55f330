import type { Knex } from 'knex';
import type pg from 'pg';
import type { Database } from './database';
import { drivers } from './drivers';

/** A statement as pg runs it: `$n` placeholders, and a name to prepare it under (none past the cap). */
interface Statement {
  text: string;
  name?: string;
}

// The statements seen, by their `?` text: pg prepares a name on each connection the first time it runs there. The
// texts come from code (a few per caller), so they are few; past the cap, statements go unnamed and unremembered.
const statements = new Map<string, Statement>();
const MAX_STATEMENTS = 1000;

function statementOf(sql: string): Statement {
  const known = statements.get(sql);
  if (known) return known;
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  if (statements.size >= MAX_STATEMENTS) return { text };
  const made = { text, name: `prepared_${statements.size + 1}` };
  statements.set(sql, made);
  return made;
}

/**
 * Runs a read-only statement (`?` placeholders, no other `?` in the text) and answers its rows. On a Postgres
 * server it is a named prepared statement: the server parses and plans each statement text once per connection
 * instead of on every call, which for a large statement run often (an authorization check, a usage view) is a
 * good part of its time. Other drivers (the embedded PGlite) take it through knex. Such statements are not in
 * db_query_duration_seconds, which counts knex's own queries.
 */
export async function preparedRows<T>(db: Database, sql: string, values: readonly unknown[]): Promise<T[]> {
  const client = db.knex.client as Knex.Client;
  if (!db.embedded) {
    const connection: unknown = await client.acquireConnection();
    try {
      if (connection instanceof drivers().pg.Client) {
        const { text, name } = statementOf(sql);
        return (await connection.query<T & pg.QueryResultRow>({ text, name, values: [...values] })).rows;
      }
    } finally {
      await client.releaseConnection(connection);
    }
  }
  return (await db.knex.raw<{ rows: T[] }>(sql, values as Knex.RawBinding[])).rows;
}
