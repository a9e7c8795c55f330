import { CONTRACTS_CHANGED, type Bus, type ContractsChanged } from '@platform/bus';
import type { Logger, ServiceBinding } from '@platform/service-kit';

/**
 * The notice that what this service answered may have changed (CONTRACTS_CHANGED): sent once a write it answers is
 * over, committed or not, and awaited before the answer, so the bus has it in its order before the caller hears of the
 * change and another gateway's fence proves it handled it. A notice that cannot be sent is logged; a gateway that misses
 * it serves what it kept for at most ORG_CACHE_TTL_MS.
 */
export function contractsChangedNotice(bus: Bus, log: Logger): () => Promise<void> {
  return () =>
    bus.notify(CONTRACTS_CHANGED, {} satisfies ContractsChanged).catch((err) => log.warn({ err }, 'could not send a contracts notice'));
}

/**
 * The binding with `announce` run after every call of a method not named in `reads`: every method writes unless listed
 * as a read, so a write added later is announced without anyone having to remember it.
 */
export function announcingWrites<D>(
  binding: ServiceBinding<D>,
  reads: readonly (keyof D)[],
  announce: () => Promise<void>,
): ServiceBinding<D> {
  const handlers = { ...binding.handlers };
  for (const name of Object.keys(handlers) as (keyof D)[]) {
    if (reads.includes(name)) continue;
    const handle = binding.handlers[name] as (request: unknown, ctx: unknown) => Promise<unknown>;
    handlers[name] = (async (request: unknown, ctx: unknown) => {
      try {
        return await handle(request, ctx);
      } finally {
        await announce();
      }
    }) as never;
  }
  return { ...binding, handlers };
}
