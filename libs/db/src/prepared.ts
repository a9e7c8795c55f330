import type { Knex } from 'knex';
import pg from 'pg';
import type { Database } from './database';

// Names of the prepared statements, per statement text; pg prepares a name on each connection the first time it
// runs there. The texts come from code (a few per caller), so they are few; past the cap, statements go unnamed.
const statementNames = new Map<string, string>();
const MAX_STATEMENTS = 1000;

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (!name && statementNames.size < MAX_STATEMENTS) statementNames.set(text, (name = `prepared_${statementNames.size + 1}`));
  return name;
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
  if (client.config.client === 'pg') {
    const connection: unknown = await client.acquireConnection();
    try {
      if (connection instanceof pg.Client) {
        let n = 0;
        const text = sql.replace(/\?/g, () => `$${++n}`);
        const name = statementName(text);
        return (await connection.query<T & pg.QueryResultRow>(name ? { name, text, values: [...values] } : { text, values: [...values] }))
          .rows;
      }
    } finally {
      await client.releaseConnection(connection);
    }
  }
  return (await db.knex.raw<{ rows: T[] }>(sql, values as Knex.RawBinding[])).rows;
}
