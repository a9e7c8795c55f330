import { api, ok, type Schema } from '../../api/client';
import { useLoad } from '../../ui';
import type { Contract } from './routes';

/**
 * The owner accounts of the admins' contract screens. `GET /contracts` lists one owner's contracts (the `org`
 * account, by default the caller's own), so "every contract" is the contracts of every organization a site admin
 * sees (`GET /orgs`, private ones included) and of the admin's own account. A user's own account is not
 * enumerable: it is reached by naming its login as the owner.
 */

const PAGE = 50; // GET /orgs pages at most 50

export async function everyOrganization(): Promise<Schema<'Organization'>[]> {
  const all: Schema<'Organization'>[] = [];
  for (let page = 1; ; page++) {
    const batch = await ok(api.GET('/orgs', { params: { query: { page, limit: PAGE } } }));
    all.push(...batch);
    if (batch.length < PAGE) return all;
  }
}

/** The organizations as suggestions for an owner field: slug, and full name when there is one. */
export function useOwnerSuggestions(): [string, string][] {
  const orgs = useLoad(everyOrganization, []);
  return (orgs.data ?? []).map((o) => [o.name, o.full_name || o.name]);
}

/** One owner's contracts, or (no owner) every organization's and the admin's own, newest first. */
export async function contractsOf(owner: string): Promise<Contract[]> {
  if (owner) return ok(api.GET('/contracts', { params: { query: { org: owner } } }));
  const orgs = await everyOrganization();
  const lists = await Promise.all([
    ok(api.GET('/contracts')),
    ...orgs.map((o) => ok(api.GET('/contracts', { params: { query: { org: o.name } } }))),
  ]);
  const byId = new Map<number, Contract>();
  for (const c of lists.flat()) byId.set(c.id, c);
  return [...byId.values()].sort((a, b) => b.id - a.id);
}
