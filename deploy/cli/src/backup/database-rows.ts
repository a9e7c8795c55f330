import type { Knex } from 'knex';
import type { ArchiveWriter } from './archive';

/**
 * The database as rows, the format that works on both engines (the embedded PGlite has no pg_dump): each table
 * of a schema as JSON lines (`row_to_json`, so every type reads back exactly through `json_populate_recordset`),
 * in chunks, and each sequence's position. Migrations' bookkeeping (knex_migrations) is not copied: the restore
 * applies the same migrations first, then loads the rows.
 */

/** Rows per chunk entry: bounded memory on both sides, whatever the table's size. */
const CHUNK_ROWS = 2000;
/** Migrations' bookkeeping: not copied, and a schema holding only these is empty. */
export const MIGRATION_TABLES = ['knex_migrations', 'knex_migrations_lock'];
const SKIPPED = new Set(MIGRATION_TABLES);

export interface TableCount {
  table: string;
  rows: number;
}

export async function tablesOf(knex: Knex | Knex.Transaction, schema: string): Promise<string[]> {
  const rows: { table_name: string }[] = await knex('information_schema.tables')
    .where({ table_schema: schema, table_type: 'BASE TABLE' })
    .orderBy('table_name')
    .select('table_name');
  return rows.map((r) => r.table_name).filter((t) => !SKIPPED.has(t));
}

/** Writes `schema`'s rows and sequences to the archive, inside the caller's snapshot transaction. */
export async function dumpSchemaRows(
  trx: Knex.Transaction,
  schema: string,
  archive: ArchiveWriter,
  progress: (table: string, rows: number) => void,
): Promise<TableCount[]> {
  const counts: TableCount[] = [];
  for (const table of await tablesOf(trx, schema)) {
    let rows = 0;
    for (let chunk = 0; ; chunk++) {
      const result = await trx.raw(`select row_to_json(t)::text as r from ??.?? t order by t.ctid limit ? offset ?`, [
        schema,
        table,
        CHUNK_ROWS,
        chunk * CHUNK_ROWS,
      ]);
      const lines: string[] = result.rows.map((r: { r: string }) => r.r);
      if (lines.length === 0 && chunk > 0) break;
      await archive.add(`database/${schema}/${table}/${String(chunk).padStart(6, '0')}.jsonl`, Buffer.from(lines.join('\n')));
      rows += lines.length;
      if (lines.length < CHUNK_ROWS) break;
    }
    counts.push({ table, rows });
    progress(table, rows);
  }
  const sequences = await trx.raw(
    `select sequencename as name, last_value::text as value from pg_sequences where schemaname = ? order by sequencename`,
    [schema],
  );
  await archive.add(`database/${schema}/sequences.json`, Buffer.from(JSON.stringify(sequences.rows)));
  return counts;
}

/**
 * Empties the schema's tables (what its migrations seeded) before the archive's rows go in. Only those holding rows are
 * truncated: a truncate makes each table's files anew, and most of a newly migrated schema's tables are empty.
 */
export async function emptyTables(trx: Knex.Transaction, schema: string): Promise<void> {
  const tables = await tablesOf(trx, schema);
  if (tables.length === 0) return;
  const holding = await trx.raw(
    tables.map(() => `select ?::text as t where exists (select from ??.??)`).join(' union all '),
    tables.flatMap((t) => [t, schema, t]),
  );
  const filled: string[] = holding.rows.map((r: { t: string }) => r.t);
  if (filled.length === 0) return;
  await trx.raw(`truncate table ${filled.map(() => '??.??').join(', ')} cascade`, filled.flatMap((t) => [schema, t]));
}

/** Loads one chunk of a table's rows; the generated columns are computed again, identity values kept. */
export async function loadRows(trx: Knex.Transaction, schema: string, table: string, jsonl: string): Promise<number> {
  const lines = jsonl.split('\n').filter((l) => l.length > 0);
  if (lines.length === 0) return 0;
  const columns: { column_name: string; always: boolean }[] = await trx('information_schema.columns')
    .where({ table_schema: schema, table_name: table, is_generated: 'NEVER' })
    .orderBy('ordinal_position')
    .select('column_name', trx.raw(`(is_identity = 'YES' and identity_generation = 'ALWAYS') as always`));
  if (columns.length === 0) throw new Error(`the archive has rows of ${schema}.${table}, which this version does not have`);
  const names = columns.map(() => '??').join(', ');
  const bindings = columns.map((c) => c.column_name);
  const overriding = columns.some((c) => c.always) ? 'overriding system value' : '';
  await trx.raw(`insert into ??.?? (${names}) ${overriding} select ${names} from json_populate_recordset(null::??.??, ?::json)`, [
    schema,
    table,
    ...bindings,
    ...bindings,
    schema,
    table,
    `[${lines.join(',')}]`,
  ]);
  return lines.length;
}

/** Puts each sequence where it was (a sequence the archive does not know keeps its place). */
export async function restoreSequences(trx: Knex.Transaction, schema: string, json: string): Promise<void> {
  const sequences = JSON.parse(json) as { name: string; value: string | null }[];
  for (const { name, value } of sequences) {
    if (value === null) continue; // never used: as a new one
    await trx.raw(`select setval(?::regclass, ?::bigint, true)`, [`"${schema}"."${name}"`, value]);
  }
}
