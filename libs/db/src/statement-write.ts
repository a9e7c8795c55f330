/** A statement that writes: its table, schema-qualified as knex writes it, when it names one. */
const WRITE =
  /^\s*(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+(?:only\s+)?(?:"?(\w+)"?\s*\.\s*)?"?(\w+)"?/i;
/** Statements that change no row: reads (locking ones too), transaction control, a transaction's settings. */
const NO_WRITE =
  /^\s*(select|show|begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|set\s+local|declare|fetch|move|close)\b/i;
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
