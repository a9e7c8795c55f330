import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from './database';
import type { EffectHandler } from './outbox';
import { statementWrite } from './statement-write';

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
    if (work && !work.wrote && query.sql && statementWrite(query.sql)) work.wrote = true;
  });
}

/**
 * Background work announced like a write method, but only when it wrote (a clean-up pass that found nothing to do says
 * nothing): `pass` wraps a periodic pass, `effect` an outbox effect, which the relay may apply long after its call.
 */
export function announcingBackgroundWrites(db: Database, announce: () => Promise<void>) {
  const announced = async <T>(work: () => Promise<T>): Promise<T> => {
    const { result, wrote } = await writesDuring(db, work);
    if (wrote) await announce();
    return result;
  };
  return {
    pass:
      <T>(work: () => Promise<T>) =>
      () =>
        announced(work),
    effect: <P>(handler: EffectHandler<P>): EffectHandler<P> => ({
      ...handler,
      apply: (payload, ctx, applied) => announced(() => handler.apply(payload, ctx, applied)),
    }),
  };
}
