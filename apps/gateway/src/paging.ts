import { z } from 'zod';
import { publicUrlOf } from '@platform/service-kit';
import type { EdgeContext } from './route';

/**
 * Paged lists as Gitea answers them: `page` (1-based) and `limit` in the query, the total in `X-Total-Count`
 * and the neighbouring pages in `Link`, so a client's paging loop knows when to stop.
 */

/** Gitea's defaults: 30 a page unless asked (DEFAULT_PAGING_NUM), never more than 50 (MAX_RESPONSE_ITEMS). */
export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 50;

// Absent or 0 means the default, as in Gitea; anything but digits is 400.
const count = (description: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'must be a non-negative integer')
    .transform(Number)
    .optional()
    .meta({ type: 'integer', minimum: 0, description });

/** The paging query of a list. */
export const Paging = z.object({
  page: count('page number of results to return (1-based; default 1)'),
  limit: count(`page size of results (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})`),
});

/** The page a request asks for, as the backends take it. */
export function pageOf(query: z.output<typeof Paging>): { page: number; limit: number } {
  const limit = Math.min(query.limit || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  return { page: query.page || 1, limit };
}

/** The headers a paged answer documents. */
export const PAGE_HEADERS = {
  'X-Total-Count': 'how many there are on all pages',
  Link: "the next, last, first and previous pages (RFC 8288) as Gitea sends them: those that exist, in that order",
};

/**
 * X-Total-Count and Link for one page of `total` items, exactly as Gitea writes them (`SetLinkHeader` and its
 * paginator): the current page is at most the last (an empty list has one page); `next` and `last` while more pages
 * follow, `first` and `prev` after the first page, in that order, joined by `,`; each the request's path and query
 * with `page` set and the query's keys sorted (Go's `url.Values.Encode`); no Link when there is none.
 */
export function pageHeaders(ctx: Pick<EdgeContext, 'req' | 'config'>, page: { page: number; limit: number }, total: number): Record<string, string> {
  const last = Math.max(1, Math.ceil(total / page.limit));
  const current = Math.min(Math.max(1, page.page), last);
  const hasNext = total > current * page.limit;
  // On the public URL, as Gitea builds these on ROOT_URL: the Host header is the client's to choose.
  const url = new URL(ctx.req.originalUrl.replace(/^\/+/, '/'), publicUrlOf(ctx.config));
  const link = (n: number, rel: string) => {
    url.searchParams.set('page', String(n));
    url.searchParams.sort();
    return `<${url.href}>; rel="${rel}"`;
  };
  const links = [
    ...(hasNext ? [link(current + 1, 'next'), link(last, 'last')] : []),
    ...(current > 1 ? [link(1, 'first'), link(current - 1, 'prev')] : []),
  ];
  return {
    'x-total-count': String(total),
    ...(links.length && { link: links.join(',') }),
    // Browsers let scripts read only the headers named here.
    'access-control-expose-headers': 'Link, X-Total-Count',
  };
}
