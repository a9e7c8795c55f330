/**
 * Access token scopes in Gitea's vocabulary (docs/authentication.md, "Token scopes"): `read:` or `write:` one
 * category, or `all`. A token holds a set of them; every gateway route declares the one scope it needs, and a token
 * whose scopes do not cover it is refused with 403 naming the scope. `write:<category>` covers `read:<category>`;
 * `all` covers everything. Gitea's other categories (repository, issue, package, notification, activitypub) name
 * nothing this platform serves, so a token asking for them is refused rather than given a scope that means nothing.
 */

export const ACCESS_SCOPE_CATEGORIES = ['organization', 'user', 'admin', 'misc'] as const;
export type AccessScopeCategory = (typeof ACCESS_SCOPE_CATEGORIES)[number];

/** The scope a route needs. */
export type AccessScope = `${'read' | 'write'}:${AccessScopeCategory}`;

/** A scope a token may hold. */
export type TokenAccessScope = AccessScope | 'all';

/** Every scope a token may hold, in the order lists show them. */
export const TOKEN_ACCESS_SCOPES: readonly TokenAccessScope[] = [
  'all',
  ...ACCESS_SCOPE_CATEGORIES.flatMap((c) => [`read:${c}`, `write:${c}`] as AccessScope[]),
];

const KNOWN = new Set<string>(TOKEN_ACCESS_SCOPES);

/** The scopes a token is made with when its creator names none: everything, as tokens were before scopes existed. */
export const DEFAULT_ACCESS_SCOPES: readonly TokenAccessScope[] = ['all'];

/**
 * The scopes a creator asked for, normalized (trimmed, deduplicated, in the catalog's order; `all` alone when it is
 * named); `unknown` lists those that are not in the vocabulary, for a 400 naming them. Gitea also accepts one
 * comma-separated string, so each item may hold several.
 */
export function parseAccessScopes(requested: readonly string[]): { scopes: TokenAccessScope[]; unknown: string[] } {
  const named = requested.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  const unknown = named.filter((s) => !KNOWN.has(s));
  if (named.length === 0) return { scopes: [...DEFAULT_ACCESS_SCOPES], unknown };
  if (named.includes('all')) return { scopes: ['all'], unknown };
  const set = new Set(named);
  // `write:x` already covers `read:x`: keep only the stronger one so the list says what the token can do.
  const scopes = TOKEN_ACCESS_SCOPES.filter((s) => set.has(s) && !(s.startsWith('read:') && set.has(`write:${s.slice(5)}`)));
  return { scopes, unknown };
}

/** Whether a token holding `held` may call a route that needs `needed`. */
export function scopesCover(held: readonly string[], needed: AccessScope): boolean {
  if (held.includes('all') || held.includes(needed)) return true;
  return needed.startsWith('read:') && held.includes(`write:${needed.slice(5)}`);
}
