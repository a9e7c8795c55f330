import { InputError, NotFoundError, quote, truncate } from '@platform/errors';
import { TEXT_LIMITS } from '@platform/service-kit';

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

/** Path parameters that name an account by its login: a longer value names nothing, so it is 404 at once. */
const LOGIN_PARAMS: Record<string, string> = { orgname: 'organization', username: 'user' };

/** A path or query value as text (`*key` wildcards are lists of segments). */
const asText = (value: unknown) => (Array.isArray(value) ? value.join('/') : String(value ?? ''));

/**
 * Path parameters and query values over their limits (docs/limits.md) are refused before any backend is
 * asked: an organization or user name in the path longer than any login is 404, as an unknown one is; any other
 * path parameter over TEXT_LIMITS.pathParam and any query value over TEXT_LIMITS.queryValue is 400.
 */
export function assertBoundedInput(req: { params: Record<string, unknown>; query: Record<string, unknown> }): void {
  for (const [name, value] of Object.entries(req.params ?? {})) {
    const text = asText(value);
    const kind = LOGIN_PARAMS[name];
    if (kind && text.length > TEXT_LIMITS.login) throw new NotFoundError(`${kind} ${quote(text)} does not exist`);
    if (text.length > TEXT_LIMITS.pathParam) {
      const description = `at most ${TEXT_LIMITS.pathParam} characters`;
      throw new InputError(`path parameter ${name}: ${description}`, [{ field: `path.${name}`, description }]);
    }
  }
  const walk = (value: unknown, name: string, depth: number): void => {
    if (typeof value === 'string') {
      if (value.length <= TEXT_LIMITS.queryValue) return;
      const description = `at most ${TEXT_LIMITS.queryValue} characters`;
      const key = truncate(name, 64);
      throw new InputError(`query parameter ${key}: ${description}`, [{ field: `query.${key}`, description }]);
    }
    if (value !== null && typeof value === 'object' && depth < 8) {
      for (const v of Object.values(value)) walk(v, name, depth + 1);
    }
  };
  for (const [name, value] of Object.entries(req.query ?? {})) {
    // A single `org` of any length is the org context's business (resolveOrg): longer than a login, it names no
    // organization and is answered as an unknown one, which only the caller's identity can decide (403 or 404).
    if (name === 'org' && typeof value === 'string') continue;
    walk(value, name, 0);
  }
}
