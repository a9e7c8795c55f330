import { useEffect } from 'react';
import { useSearchParams } from 'react-router';

/**
 * Keeps a paged screen (its page in the address as `?page=`) on a page that exists: deleting the last rows of the
 * last page, or following an old link, would otherwise show "Page 3 of 2" over an empty table. `total` is the
 * count of rows the API answered for what is shown now (undefined while it is not known); the address is replaced,
 * so Back does not return to the page that is gone.
 */
export function useExistingPage(page: number, total: number | undefined, limit: number): void {
  const [, setParams] = useSearchParams();
  const last = total === undefined ? undefined : Math.max(1, Math.ceil(total / limit));
  useEffect(() => {
    if (last === undefined || page <= last) return;
    setParams(
      (previous) => {
        const next = new URLSearchParams(previous);
        if (last > 1) next.set('page', String(last));
        else next.delete('page');
        return next;
      },
      { replace: true },
    );
  }, [page, last, setParams]);
}
