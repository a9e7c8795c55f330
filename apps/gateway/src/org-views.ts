import { LRUCache } from 'lru-cache';
import {
  ACCOUNTS_CHANGED,
  NoticeFence,
  ORGS_CHANGED,
  TUPLES_CHANGED,
  type AccountsChanged,
  type Bus,
  type OrgsChanged,
} from '@platform/bus';
import type { orgsTeamsOrgsV1 } from '@platform/proto';

type Organization = orgsTeamsOrgsV1.Organization;

/**
 * The organizations callers have looked up, as each caller may see them (orgs-teams' `GetOrg`): every route under
 * `/orgs/{org}` and every `?org=` context starts with that lookup, and with separate processes it is a call to
 * orgs-teams per request. Only what was found is kept; an organization the caller may not see is asked again.
 *
 * Kept correct by eviction, not by time:
 * - an organization's row changing (an edit, its visibility, a rename, its deletion) evicts it, on orgs-teams'
 *   organizations notice;
 * - who may see a private organization follows its memberships, which are authz tuples: any tuple change empties
 *   the cache, on authz's notice; an account change (a site admin's) evicts that viewer's entries;
 * - before a kept answer is used, a fence through the bus makes sure every notice sent before the request has
 *   been heard here; while the bus is away nothing is kept or served, and a fence that does not come back means
 *   the lookup is made again;
 * - a lookup that started before an eviction never stores what it read (a generation count).
 * The lifetime (`ORG_CACHE_TTL_MS`) bounds only what a notice lost in the bus itself can cost.
 */
export class OrgViewCache {
  private readonly views: LRUCache<string, Organization>;
  private readonly keysOfOrg = new Map<number, Set<string>>();
  private readonly keysOfViewer = new Map<number, Set<string>>();
  private generation = 0;
  private followed: { bus: Bus; fence: NoticeFence } | undefined;

  constructor(
    private readonly ttlMs: number,
    capacity = 10_000,
  ) {
    this.views = new LRUCache<string, Organization>({
      max: capacity,
      ...(ttlMs > 0 ? { ttl: Math.ceil(ttlMs) } : {}),
      dispose: (org, key) => {
        unindex(this.keysOfOrg, Number(org.id), key);
        unindex(this.keysOfViewer, viewerOfKey(key), key);
      },
    });
  }

  /** Evicts on the notices and follows the bus connection; until then nothing is kept. Answers how to stop. */
  async follow(bus: Bus): Promise<() => Promise<void>> {
    const stops = [
      await bus.listen(ORGS_CHANGED, (_subject, payload) => {
        for (const id of (payload as OrgsChanged).orgIds ?? []) this.evict(this.keysOfOrg, Number(id));
      }),
      await bus.listen(TUPLES_CHANGED, () => this.clear()),
      await bus.listen(ACCOUNTS_CHANGED, (_subject, payload) => {
        for (const id of (payload as AccountsChanged).userIds ?? []) this.evict(this.keysOfViewer, Number(id));
      }),
    ];
    const fence = await NoticeFence.open(bus, 'gateway.orgs.fence');
    // Notices sent while the connection was away are missed: whatever was kept goes.
    const unwatch = bus.onHealthChange(() => this.clear());
    this.followed = { bus, fence };
    return async () => {
      this.followed = undefined;
      unwatch();
      for (const stop of stops) await stop();
      await fence.close();
      this.clear();
    };
  }

  /** The organization `name` as `viewerId` may see it: kept, or looked up by `load` (and kept when found). */
  async through(name: string, viewerId: number, load: () => Promise<Organization>): Promise<Organization> {
    const followed = this.followed;
    if (this.ttlMs <= 0 || !followed || !followed.bus.health().connected) return load();
    const key = `${viewerId}|${name.toLowerCase()}`;
    const kept = this.views.get(key);
    if (kept && (await followed.fence.pass()) && this.views.get(key) === kept) return kept;
    const generation = this.generation;
    const org = await load();
    if (generation === this.generation) {
      this.views.set(key, org);
      index(this.keysOfOrg, Number(org.id), key);
      index(this.keysOfViewer, viewerId, key);
    }
    return org;
  }

  /** Forgets everything (a tuple changed, the bus connection came or went). */
  clear(): void {
    this.generation++;
    this.views.clear();
    this.keysOfOrg.clear();
    this.keysOfViewer.clear();
  }

  private evict(byId: Map<number, Set<string>>, id: number): void {
    this.generation++;
    for (const key of [...(byId.get(id) ?? [])]) this.views.delete(key);
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
    getOrg: (req: orgsTeamsOrgsV1.GetOrgRequest, ...rest: unknown[]) => cache.through(req.name, req.viewerId, () => getOrg(req, ...rest)),
  };
}

const viewerOfKey = (key: string) => Number(key.slice(0, key.indexOf('|')));

function index(byId: Map<number, Set<string>>, id: number, key: string): void {
  let keys = byId.get(id);
  if (!keys) byId.set(id, (keys = new Set()));
  keys.add(key);
}

function unindex(byId: Map<number, Set<string>>, id: number, key: string): void {
  const keys = byId.get(id);
  keys?.delete(key);
  if (keys?.size === 0) byId.delete(id);
}
