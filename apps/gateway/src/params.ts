import { z } from 'zod';
import { UUID_ANY_CASE_PATTERN } from '@platform/proto';

/**
 * Schemas of path parameters and query values shared by the rows. A value that does not parse is 400 at
 * the edge, with the message "<name> <issue>", e.g. "uid must be a positive integer".
 */

/** A positive int64 id (the spec's "invalid ID" is 400). */
export const id = z
  .string({ error: 'must be a positive integer' })
  .regex(/^[1-9]\d{0,17}$/, 'must be a positive integer')
  .refine((s) => Number.isSafeInteger(Number(s)), 'must be a positive integer')
  .transform(Number)
  .meta({ type: 'integer', format: 'int64', minimum: 1 });

/** An account name (organization or user login) in a path; longer than any login is 404 at the edge. */
export const login = z.string().min(1);

/** A free-form path segment (an action name, a claim id). */
export const segment = z.string().min(1);

/** `true` or `false`; absent means false. */
export const flag = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .optional()
  .transform((v) => v === 'true');

const GO_UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
// A number is digits with an optional fraction, or a fraction alone (`1.5`, `1.`, `.5`), as in Go.
const GO_DURATION = /^((?:\d+\.?\d*|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/;

/**
 * A Go duration (`720h`, `90m`, `1h30m`, `1.5h`: decimal numbers each with a unit ns, us, ms, s, m or h, as Go's
 * time.ParseDuration reads them, without a sign) in milliseconds; undefined when the text is not one.
 */
export function goDurationMs(text: string): number | undefined {
  // Go's one unitless duration.
  if (text === '0') return 0;
  if (!GO_DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(amount) * GO_UNITS_MS[unit];
  return total;
}

/** The default activity window of the dashboard's `limit` ("about the last six months"). */
export const DEFAULT_ACTIVITY_DAYS = 180;

/**
 * The dashboard's `limit`: the start of the activity window, from a Go duration back from now
 * (`720h`) or a `YYYY-MM-DD` date (UTC midnight); absent: the last 180 days. Anything else is 400.
 */
export const activitySince = z
  .string()
  .optional()
  .transform((text, ctx): Date => {
    if (text === undefined || text === '') return new Date(Date.now() - DEFAULT_ACTIVITY_DAYS * 86_400_000);
    const duration = goDurationMs(text);
    if (duration !== undefined) return new Date(Date.now() - duration);
    const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
    if (date) {
      const at = new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3])));
      if (at.getUTCMonth() === Number(date[2]) - 1 && at.getUTCDate() === Number(date[3])) return at;
    }
    ctx.addIssue({ code: 'custom', message: 'must be a Go duration such as 720h or 1h30m, or a date YYYY-MM-DD' });
    return z.NEVER;
  })
  .meta({ type: 'string', description: 'A Go duration back from now (720h, 1h30m) or a date YYYY-MM-DD; default the last 180 days' });

/** A path or query cluster UUID (either case); not one is 400. */
export const clusterUuid = z.string().regex(UUID_ANY_CASE_PATTERN, 'must be a UUID');
