import { useQuery } from '@tanstack/react-query';

/**
 * The billing dashboard's server state. Its screens only read (reports, licensed users and clusters, events), so
 * nothing invalidates them: an answer is kept under `['billing', what, org, ...what it was asked with]`, shared by
 * every screen asking the same (the breadcrumbs and a cluster's own screen), refreshed when stale and the window
 * regains focus.
 */
export const billingKey = (key: readonly unknown[]) => ['billing', ...key] as const;

/** One report of the dashboard under its key; `enabled` false while it cannot be asked yet (nothing chosen). */
export function useReport<T>(key: readonly unknown[], load: () => Promise<T>, enabled = true) {
  return useQuery({ queryKey: billingKey(key), queryFn: load, enabled });
}
