/** A statement that writes: its table, schema-qualified as knex writes it, when it names one. */
const WRITE =
  /^\s*(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+(?:only\s+)?(?:"?(\w+)"?\s*\.\s*)?"?(\w+)"?/i;
/**
 * Statements that change no row: reads (locking ones too, and a union of reads whose first part is in parentheses),
 * transaction control, a transaction's settings.
 */
const NO_WRITE =
  /^[\s(]*(select|show|begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|set\s+local|declare|fetch|move|close)\b/i;
const DATA_MODIFYING = /\b(insert|update|delete|merge|truncate)\b/i;

/**
 * What a statement writes, as knex sends it: undefined for one that changes no row (a read, a locking read, transaction
 * control), else the schema and table it names (either undefined when it cannot be told: a data-modifying CTE, a
 * statement of another form). For the work that announces what it changed to readers keeping its service's answers.
 */
export function statementWrite(sql: string): { schema?: string; table?: string } | undefined {
  const write = WRITE.exec(sql);
  if (write) return { schema: write[1], table: write[2] };
  const read = NO_WRITE.test(sql) || (/^\s*with\b/i.test(sql) && !DATA_MODIFYING.test(sql));
  return read ? undefined : {};
}

/** A write of a data-modifying CTE, as this platform writes one: its table schema-qualified and quoted. */
const CTE_WRITE = /\b(?:insert\s+into|update|delete\s+from)\s+(?:only\s+)?"(\w+)"\s*\.\s*"(\w+)"/gi;
/** Every data-modifying keyword of a statement but the `do update` of an upsert. */
const DATA_MODIFYING_ALL = /\b(?<!do\s+)(insert|update|delete|merge|truncate)\b/gi;

/**
 * What a statement writes, every table of it: as statementWrite, and for a data-modifying CTE (`with a as (insert into
 * "s"."t" ... returning ...) ...`, several inserts of one write in one statement) each table it writes, when every
 * write of it names a schema-qualified table; else one write whose table cannot be told.
 */
export function statementWrites(sql: string): { schema?: string; table?: string }[] {
  if (/^\s*with\b/i.test(sql) && DATA_MODIFYING.test(sql)) {
    const tables = [...sql.matchAll(CTE_WRITE)].map((m) => ({ schema: m[1], table: m[2] }));
    const writes = [...sql.matchAll(DATA_MODIFYING_ALL)].length;
    return tables.length === writes ? tables : [{}];
  }
  const write = statementWrite(sql);
  return write ? [write] : [];
}
