import { useCallback } from 'react';
import { useSearchParams } from 'react-router';
import { api, ok } from '../../api/client';

/**
 * The screens keep their choices (org context, month, product, view, activity window) in the address, so a
 * screen can be bookmarked, shared and reloaded as it was. Each change replaces the entry: choosing is not
 * navigating, and Back leaves the screen rather than stepping through every choice.
 */
export function useQuery(): [URLSearchParams, (changes: Record<string, string | undefined>) => void] {
  const [params, setParams] = useSearchParams();
  const change = useCallback(
    (changes: Record<string, string | undefined>) =>
      setParams(
        (previous) => {
          const next = new URLSearchParams(previous);
          for (const [name, value] of Object.entries(changes)) {
            if (value === undefined || value === '') next.delete(name);
            else next.set(name, value);
          }
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );
  return [params, change];
}

/** The query the links between billing screens carry along: the org context and the activity window. */
export function carried(params: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const name of ['org', 'limit']) {
    const value = params.get(name);
    if (value) kept.set(name, value);
  }
  const text = kept.toString();
  return text ? `?${text}` : '';
}

/** Pages at most this many organizations into the org picker (50 a page, the API's largest page). */
const ORG_PAGES = 20;

/** The names of the organizations the site admin may see (every one), by name. */
export async function listOrgNames(): Promise<string[]> {
  const names: string[] = [];
  for (let page = 1; page <= ORG_PAGES; page++) {
    const orgs = await ok(api.GET('/orgs', { params: { query: { page, limit: 50 } } }));
    names.push(...orgs.map((o) => o.name));
    if (orgs.length < 50) break;
  }
  return names;
}

/**
 * The org context when the address names none. Every billing route asks for one, yet the reports cover every
 * account (`org` only has to name an organization), so any will do: the demo organization where there is one.
 */
export function defaultOrg(names: string[]): string | undefined {
  return names.includes('demo') ? 'demo' : names[0];
}
