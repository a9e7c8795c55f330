import { ok } from '../../api/client';

/** The API's page size ceiling for organizations, members, teams and team members (Gitea's: at most 50). */
export const MAX_LIMIT = 50;

/** One page of a paged list, with the count on all pages the API sends as `X-Total-Count`. */
export interface Page<T> {
  items: T[];
  total: number;
}

type Answer<T> = Promise<{ data?: T[]; error?: unknown; response: Response }>;

/** The items of one answer and its `X-Total-Count` (the items' number when the header is absent). */
export async function pageOf<T>(call: Answer<T>): Promise<Page<T>> {
  const answer = await call;
  const items = await ok(Promise.resolve(answer));
  const header = answer.response.headers.get('X-Total-Count');
  const total = header === null ? items.length : Number(header);
  return { items, total: Number.isFinite(total) ? total : items.length };
}

/**
 * Every item of a paged list, page after page of the largest size: for lists a screen needs whole (the teams a
 * member can be added to, the public members a member list marks), which stay small in practice.
 */
export async function allPages<T>(fetchPage: (page: number, limit: number) => Answer<T>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const { items: some, total } = await pageOf(fetchPage(page, MAX_LIMIT));
    items.push(...some);
    if (some.length === 0 || items.length >= total) return items;
  }
}

/** Previous / Next through a list the API pages, with where the reader is. */
export function Pager({ label, page, limit, total, onPage }: { label: string; page: number; limit: number; total: number; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / limit));
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span>
        Page {page} of {pages} ({total})
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next
      </button>
    </nav>
  );
}
