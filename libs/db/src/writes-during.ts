import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from './database';

/** A statement that may change rows (a data-modifying CTE counts too)... */
const MAY_WRITE = /\b(insert|update|delete|merge|truncate)\b/i;
/** ...once its row locks are set aside: a `select ... for update` (a queue polling its due rows) writes nothing. */
const ROW_LOCK = /\bfor\s+(no\s+key\s+)?(update|share)(\s+of\s+[\w".,\s]+?)?(\s+(nowait|skip\s+locked))?\s*$/i;

/**
 * Runs `work` and answers whether it ran a statement that may write: for background work (a periodic pass, an outbox
 * effect) that must announce what it changed to the readers that keep its service's answers, and should not announce
 * when it changed nothing. Only `work`'s own statements count (knex reports each in the asynchronous context that ran
 * it), not those of requests served meanwhile.
 */
export async function writesDuring<T>(db: Database, work: () => Promise<T>): Promise<{ result: T; wrote: boolean }> {
  const mine = { wrote: false };
  watch(db);
  // Awaited inside the context: a knex builder (a thenable) runs its statement when it is awaited.
  const result = await running.run(mine, async () => await work());
  return { result, wrote: mine.wrote };
}

const running = new AsyncLocalStorage<{ wrote: boolean }>();
const watched = new WeakSet<object>();

/** Listens once per knex for the statements of the work running in `writesDuring`. */
function watch(db: Database): void {
  if (watched.has(db.knex)) return;
  watched.add(db.knex);
  db.knex.on('query', (query: { sql?: string }) => {
    const work = running.getStore();
    if (work && !work.wrote && query.sql && MAY_WRITE.test(query.sql.replace(ROW_LOCK, ''))) work.wrote = true;
  });
}
