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
 * Runs a list query for one page in one statement: the page's rows carry the count of all rows on the same
 * conditions (a window count), so the database counts and skips rows, never the service. Only a page past the
 * end, which has no row to carry the count, asks for the count again. `rows` adds the order and the columns to
 * the base query; the base query must not group or deduplicate rows (the window counts rows before either).
 */
export async function pageOfQuery<T>(
  base: Knex.QueryBuilder,
  page: Page | undefined,
  rows: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
): Promise<Paged<T>> {
  const q = rows(base.clone());
  // The whole list counts itself.
  if (!page) {
    const list = (await q) as T[];
    return { rows: list, total: list.length };
  }
  const counted = (await q
    .select(q.client.raw(`count(*) over () as ${TOTAL}`))
    .limit(page.limit)
    .offset(page.offset)) as (T & {
    [TOTAL]?: number | string;
  })[];
  if (counted.length === 0) {
    const [{ count }] = await base.clone().count<{ count: string }[]>('* as count');
    return { rows: [], total: Number(count) };
  }
  const total = Number(counted[0][TOTAL]);
  for (const row of counted) delete row[TOTAL];
  return { rows: counted as T[], total };
}

/** The column a page's rows carry the count of all rows in; taken off before they are answered. */
const TOTAL = 'page_total_rows';

/** A LIKE pattern matching `text` anywhere, its own `%`, `_` and `\` taken literally. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
