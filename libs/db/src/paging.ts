import type { Knex } from 'knex';
import { InputError } from '@platform/errors';

/**
 * Paged lists, one way for every store: a request asks for a 1-based `page` of `limit` rows, the store turns it into
 * rows to skip and take with the default and maximum it gives once (`pageOf`), and the database skips, takes and
 * counts them in one statement (`pageOfQuery`). The HTTP edge keeps its own Gitea-shaped query and headers.
 */

/** What a caller asks for: a 1-based page (the first when absent or below 1) of `limit` rows. */
export interface PageRequest {
  page?: number;
  limit?: number;
}

/** The rows of one page: `limit` of them after `offset`. */
export interface Page {
  limit: number;
  offset: number;
}

/**
 * How many rows a store's pages hold. A limit absent or 0 means `defaultLimit`. A limit below 1 or above `maxLimit`
 * is moved to the nearer end, or refused as the caller's error with `outside: 'refuse'` (for lists whose callers
 * were always told so).
 */
export interface PageLimits {
  defaultLimit: number;
  maxLimit: number;
  outside?: 'clamp' | 'refuse';
}

/**
 * For lists the platform's own services read whole (every member of an organization, say): no positive limit asks
 * for the whole list, and there is no maximum, since only services ask for more than the edge's pages.
 */
export interface WholeListLimits {
  defaultLimit: 'whole list';
}

/** The page a request asks for, within the store's limits; undefined (the whole list) only for `WholeListLimits`. */
export function pageOf(req: PageRequest | undefined, limits: PageLimits): Page;
export function pageOf(req: PageRequest | undefined, limits: WholeListLimits): Page | undefined;
export function pageOf(req: PageRequest | undefined, limits: PageLimits | WholeListLimits): Page | undefined {
  const asked = req?.limit || 0;
  let limit: number;
  if (limits.defaultLimit === 'whole list') {
    if (asked <= 0) return undefined;
    limit = asked;
  } else {
    const { defaultLimit, maxLimit, outside = 'clamp' } = limits;
    limit = asked || defaultLimit;
    if (limit < 1 || limit > maxLimit) {
      if (outside === 'refuse') throw new InputError(`limit must be between 1 and ${maxLimit}`);
      limit = Math.min(Math.max(limit, 1), maxLimit);
    }
  }
  return { limit, offset: (Math.max(1, req?.page || 1) - 1) * limit };
}

/** One page of rows and how many there are on all pages. */
export interface Paged<T> {
  rows: T[];
  total: number;
}

/**
 * Runs a list query for one page in one statement: the page's rows carry the count of all rows on the same
 * conditions (a window count), so the database counts and skips rows, never the service. Only a page past the
 * end, which has no row to carry the count, asks for the count again; an empty first page needs no count (there
 * is no row at all). `rows` adds the order and the columns to the base query; the base query must not group or
 * deduplicate rows (the window counts rows before either).
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
    if (page.offset === 0) return { rows: [], total: 0 };
    const [{ count }] = await base.clone().count<{ count: string }[]>('* as count');
    return { rows: [], total: Number(count) };
  }
  const total = Number(counted[0][TOTAL]);
  for (const row of counted) delete row[TOTAL];
  return { rows: counted as T[], total };
}

/** The column a page's rows carry the count of all rows in; taken off before they are answered. */
const TOTAL = 'page_total_rows';

/**
 * One page of a list already in memory, for the few lists that come whole from elsewhere rather than from a query
 * (a service account's one organization, a user's tokens as the gateway keeps them).
 */
export function pageOfList<T>(list: readonly T[], page: Page | undefined): Paged<T> {
  return { rows: page ? list.slice(page.offset, page.offset + page.limit) : [...list], total: list.length };
}
