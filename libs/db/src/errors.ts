/** Postgres SQLSTATE of a unique (or primary key) constraint violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * Whether a database error is a unique constraint violation. Both drivers (pg on a real server, PGlite
 * embedded) throw an error carrying the SQLSTATE in `code`, and knex passes it through unchanged.
 */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;
}
