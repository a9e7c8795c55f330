import type { Knex } from 'knex';
import type { orgsTeamsOrgsV1 } from '@platform/proto';

/** The rows of one page: `limit` of them after `offset`. */
export interface Page {
  limit: number;
  offset: number;
}

/** The page a request asks for; undefined (the whole list) when it gives no limit, as services reading every member do. */
export function pageOf(req: orgsTeamsOrgsV1.PageRequest | undefined): Page | undefined {
  if (!req || req.limit <= 0) return undefined;
  return { limit: req.limit, offset: (Math.max(1, req.page) - 1) * req.limit };
}

/** One page of rows and how many there are on all pages. */
export interface Paged<T> {
  rows: T[];
  total: number;
}

/**
 * Runs a list query for one page: the count and the page are two statements on the same conditions, so the
 * database counts and skips rows, never the service. `rows` adds the order and the columns to the base query.
 */
export async function pageOfQuery<T>(
  base: Knex.QueryBuilder,
  page: Page | undefined,
  rows: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
): Promise<Paged<T>> {
  const q = rows(base.clone());
  // The whole list counts itself: no second statement.
  if (!page) {
    const list = (await q) as T[];
    return { rows: list, total: list.length };
  }
  q.limit(page.limit).offset(page.offset);
  const [list, [{ count }]] = await Promise.all([q as Promise<T[]>, base.clone().count<{ count: string }[]>('* as count')]);
  return { rows: list, total: Number(count) };
}

/** A LIKE pattern matching `text` anywhere, its own `%`, `_` and `\` taken literally. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
