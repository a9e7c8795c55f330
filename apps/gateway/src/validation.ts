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

/** Whether a parsed value holds a NUL character anywhere (Postgres text cannot store one). */
function hasNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v, depth + 1));
}

/** Path parameters, query and body may not carry NUL characters: 400 here instead of a database error. */
export function assertNoNul(req: { params: unknown; query: unknown; body: unknown }): void {
  for (const [where, value] of [
    ['path', req.params],
    ['query', req.query],
    ['body', req.body],
  ] as const) {
    if (hasNul(value))
      throw new InputError(`the ${where} contains a NUL character`, [{ field: where, description: 'contains a NUL character' }]);
  }
}
