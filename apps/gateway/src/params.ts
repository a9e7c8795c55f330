import { z } from 'zod';

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
