import {
  ACCOUNTS_CHANGED,
  NoticeCache,
  ORGS_CHANGED,
  TUPLES_CHANGED,
  type AccountsChanged,
  type Bus,
  type OrgsChanged,
} from '@platform/bus';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallOptions } from '@platform/service-kit';

type Organization = orgsTeamsOrgsV1.Organization;

/**
 * The organizations callers have looked up, as each caller may see them (orgs-teams' `GetOrg`): every route under
 * `/orgs/{org}` and every `?org=` context starts with that lookup, and with separate processes it is a call to
 * orgs-teams per request. Only what was found is kept; an organization the caller may not see is asked again.
 * A NoticeCache (libs/bus): an organization's row changing (an edit, its visibility, a rename, its deletion) evicts
 * it on orgs-teams' organizations notice; who may see a private organization follows its memberships, which are
 * authz tuples, so any tuple change empties it; an account change (a site admin's) evicts that viewer's entries.
 * The lifetime (`ORG_CACHE_TTL_MS`) bounds only what a notice lost in the bus itself can cost.
 */
export class OrgViewCache {
  private readonly views: NoticeCache<Organization>;

  constructor(ttlMs: number, capacity = 10_000) {
    this.views = new NoticeCache({ name: 'gateway.orgs', ttlMs, maxEntries: capacity });
  }

  /** Evicts on the notices and follows the bus connection; until then nothing is kept. Answers how to stop. */
  follow(bus: Bus): Promise<() => Promise<void>> {
    return this.views.follow(bus, [
      { subject: ORGS_CHANGED, stale: (p) => ((p as OrgsChanged).orgIds ?? []).map((id) => `org:${id}`) },
      { subject: TUPLES_CHANGED, stale: () => 'all' },
      { subject: ACCOUNTS_CHANGED, stale: (p) => ((p as AccountsChanged).userIds ?? []).map((id) => `viewer:${id}`) },
    ]);
  }

  /** The organization `name` as `viewerId` may see it: kept, or looked up by `load` (and kept when found). */
  through(name: string, viewerId: number, load: () => Promise<Organization>, since?: number): Promise<Organization> {
    return this.views.through(
      `${viewerId}|${name.toLowerCase()}`,
      load,
      { tags: (org) => [`org:${Number(org.id)}`, `viewer:${viewerId}`] },
      since,
    );
  }

  /** Forgets everything. */
  clear(): void {
    this.views.clear();
  }
}

/**
 * The organizations client with `GetOrg` read through the cache; every other method is the client's own. Every
 * caller of the gateway (targets, the `org` context, handlers) asks through it, so the cache is one way, not one
 * per caller.
 */
export function withOrgViews<C extends { getOrg(req: orgsTeamsOrgsV1.GetOrgRequest, ...rest: never[]): Promise<Organization> }>(
  client: C,
  cache: OrgViewCache,
): C {
  // A client is an object of its methods (closures), so a copy with one method replaced is the same client.
  const getOrg = client.getOrg as (req: orgsTeamsOrgsV1.GetOrgRequest, ...rest: unknown[]) => Promise<Organization>;
  return {
    ...client,
    getOrg: (req: orgsTeamsOrgsV1.GetOrgRequest, ...rest: unknown[]) =>
      cache.through(req.name, req.viewerId, () => getOrg(req, ...rest), (rest[0] as CallOptions | undefined)?.arrivedAt),
  };
}
