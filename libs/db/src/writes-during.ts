import type { Database } from './database';

/** A statement that may change rows (a data-modifying CTE counts too)... */
const MAY_WRITE = /\b(insert|update|delete|merge|truncate)\b/i;
/** ...once its row locks are set aside: a `select ... for update` (a queue polling its due rows) writes nothing. */
const ROW_LOCK = /\bfor\s+(no\s+key\s+)?(update|share)(\s+of\s+[\w".,\s]+?)?(\s+(nowait|skip\s+locked))?\s*$/i;

/**
 * Runs `work` and answers whether a statement that may write ran on the database meanwhile: for background work (a
 * periodic pass, an outbox effect) that must announce what it changed to the readers that keep its service's answers,
 * and should not announce when it changed nothing. Statements of other work running at the same time count too: an
 * announcement too many costs readers a read, one too few a stale answer.
 */
export async function writesDuring<T>(db: Database, work: () => Promise<T>): Promise<{ result: T; wrote: boolean }> {
  let wrote = false;
  const seen = (query: { sql?: string }) => {
    if (!wrote && query.sql && MAY_WRITE.test(query.sql.replace(ROW_LOCK, ''))) wrote = true;
  };
  db.knex.on('query', seen);
  try {
    const result = await work();
    return { result, wrote };
  } finally {
    db.knex.off('query', seen);
  }
}
