import type { z } from 'zod';
import { InputError, ValidationError } from '@platform/errors';

/** Parses a request body with a schema; a mismatch is 422 naming each bad field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const violations = parsed.error.issues.map((i) => ({ field: ['body', ...i.path].join('.'), description: i.message }));
  throw new ValidationError(violations.map((v) => `${v.field}: ${v.description}`).join('; '), violations);
}

/** A path or query parameter that must be a positive int64 (ids); 400 otherwise, as the spec's "invalid ID". */
export function parseId(value: unknown, name: string): number {
  const s = String(value ?? '');
  if (!/^[1-9]\d{0,17}$/.test(s) || !Number.isSafeInteger(Number(s))) {
    throw new InputError(`${name} must be a positive integer`, [{ field: name, description: 'must be a positive integer' }]);
  }
  return Number(s);
}
