import { useEffect, useRef, type DependencyList } from 'react';
import { useLoad } from '../../ui';
import type { Loaded } from '../../ui/data';

/**
 * `useLoad`, loaded again each time `revision` moves: a change on one part of a hub's page (a cluster added to a
 * set, a feature set installed) alters what other parts show, and reloading keeps their last answer on screen
 * (forms, focus and status lines stay) instead of starting them empty as new deps would.
 */
export function useLoadAfter<T>(load: () => Promise<T>, deps: DependencyList, revision: number): Loaded<T> {
  const loaded = useLoad(load, deps);
  const { reload } = loaded;
  const mountedAt = useRef(revision);
  useEffect(() => {
    // The first load is useLoad's own; only later revisions ask again.
    if (revision !== mountedAt.current) reload();
  }, [revision, reload]);
  return loaded;
}
