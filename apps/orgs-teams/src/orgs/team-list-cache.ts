import { LRUCache } from 'lru-cache';
import type { NoticeFence } from '@platform/bus';
import type { orgsTeamsOrgsV1 } from '@platform/proto';

/** One answered page of an organization's teams, with the custom roles of each. */
export type TeamListPage = orgsTeamsOrgsV1.ListTeamsResponse;

/**
 * The pages of teams lists already answered, by organization and by the page asked for (and the search text).
 * The teams list is among the most asked reads, and each answer costs a statement here and one in authz (the
 * teams' custom roles).
 *
 * Kept correct by eviction, never by time alone:
 * - a change of a team or of its organization evicts the organization's pages here once it has committed, and
 *   the other replicas hear it through the organizations' notice (`OrgsContext.orgChanged`);
 * - the custom roles live in authz: any tuple change there (a role given to or taken from a team, a role
 *   deleted) empties every page, on authz's notice;
 * - before a kept page is answered, a fence makes sure every notice sent before the request has been heard (a
 *   role given a moment ago on another replica is not missed); a fence that does not come back, or a lost bus
 *   connection, means the page is read afresh;
 * - a read that started before an eviction never stores what it read (a generation count).
 */
export class TeamListCache {
  private readonly pages: LRUCache<string, TeamListPage>;
  private readonly keysOfOrg = new Map<number, Set<string>>();
  private generation = 0;

  constructor(
    private readonly fence: Pick<NoticeFence, 'pass'> | undefined,
    private readonly ttlMs: number,
    capacity = 10_000,
  ) {
    this.pages = new LRUCache<string, TeamListPage>({
      max: capacity,
      ...(ttlMs > 0 ? { ttl: Math.ceil(ttlMs) } : {}),
      dispose: (_page, key) => {
        const orgId = orgOfKey(key);
        const keys = this.keysOfOrg.get(orgId);
        keys?.delete(key);
        if (keys?.size === 0) this.keysOfOrg.delete(orgId);
      },
    });
  }

  /** The page, kept or read by `load` (and kept unless something changed meanwhile). */
  async through(orgId: number, query: string, load: () => Promise<TeamListPage>): Promise<TeamListPage> {
    if (this.ttlMs <= 0) return load();
    const key = `${orgId}|${query}`;
    const kept = this.pages.get(key);
    if (kept && (await this.fence?.pass()) !== false && this.pages.get(key) === kept) return kept;
    const generation = this.generation;
    const page = await load();
    if (generation === this.generation) {
      this.pages.set(key, page);
      let keys = this.keysOfOrg.get(orgId);
      if (!keys) this.keysOfOrg.set(orgId, (keys = new Set()));
      keys.add(key);
    }
    return page;
  }

  /** Forgets an organization's pages (a team or the organization changed), and what reads in flight read. */
  evict(orgId: number): void {
    this.generation++;
    for (const key of [...(this.keysOfOrg.get(orgId) ?? [])]) this.pages.delete(key);
  }

  /** Forgets every page (authz's tuples changed, or the bus connection was lost). */
  clear(): void {
    this.generation++;
    this.pages.clear();
    this.keysOfOrg.clear();
  }
}

const orgOfKey = (key: string) => Number(key.slice(0, key.indexOf('|')));
