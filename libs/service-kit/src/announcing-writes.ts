import type { CallContext } from './call-context';
import type { ServiceBinding } from './service-binding';

/**
 * How long before its caller's deadline a write answers at the latest while its announcement is still on its way: the
 * answer must reach the caller in time, or a change that committed would be reported as a timeout.
 */
export const ANSWER_BEFORE_DEADLINE_MS = 300;

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
 *
 * The wait ends ANSWER_BEFORE_DEADLINE_MS before the call's deadline at the latest (the announcement goes on): what
 * the write did is answered, never a timeout for a change that was made. The bus bounds its own wait well below a
 * deadline (NOTICE_WAIT_MS in @platform/bus); this covers a call that arrives with little time left.
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
        await beforeDeadline(announce({ method: String(name), request, response }), (ctx as CallContext | undefined)?.deadline);
      }
    }) as never;
  }
  return { ...binding, handlers };
}

/** Waits for `announced` until ANSWER_BEFORE_DEADLINE_MS before `deadline`; past that it goes on alone. */
async function beforeDeadline(announced: Promise<void>, deadline: Date | undefined): Promise<void> {
  if (!deadline) return announced;
  let timer: NodeJS.Timeout | undefined;
  const answerNow = new Promise<'now'>((resolve) => {
    timer = setTimeout(() => resolve('now'), Math.max(0, deadline.getTime() - Date.now() - ANSWER_BEFORE_DEADLINE_MS));
    timer.unref();
  });
  try {
    // Its failure, once no one waits, is the announcer's to report (announcers log what they could not send).
    if ((await Promise.race([announced, answerNow])) === 'now') announced.catch(() => undefined);
  } finally {
    clearTimeout(timer);
  }
}
