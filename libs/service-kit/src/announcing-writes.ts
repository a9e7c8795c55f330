import type { ServiceBinding } from './grpc-server';

/** One finished call of a write method: which method, what it was asked, and whether it answered. */
export interface WriteCall {
  method: string;
  request: unknown;
  /** The answer, or undefined when the call failed (a failed write may still have changed something). */
  response: unknown;
}

/**
 * The binding with `announce` run after every call of a method not named in `reads`, answered or failed, and awaited
 * before the caller hears back, so the notice is on the bus ahead of anything the caller does next. Every method writes
 * unless listed as a read, so a write added later is announced without anyone having to remember it; what a method's
 * notice names is the owner's to say (by `call.method`), in one place next to its readers' read model.
 */
export function announcingWrites<D>(
  binding: ServiceBinding<D>,
  reads: readonly (keyof D)[],
  announce: (call: WriteCall) => Promise<void>,
): ServiceBinding<D> {
  const handlers = { ...binding.handlers };
  for (const name of Object.keys(handlers) as (keyof D)[]) {
    if (reads.includes(name)) continue;
    const handle = binding.handlers[name] as (request: unknown, ctx: unknown) => Promise<unknown>;
    handlers[name] = (async (request: unknown, ctx: unknown) => {
      let response: unknown;
      try {
        response = await handle(request, ctx);
        return response;
      } finally {
        await announce({ method: String(name), request, response });
      }
    }) as never;
  }
  return { ...binding, handlers };
}
