import { LRUCache } from 'lru-cache';
import type { OrgRow } from './rows';

/**
 * Organizations by id and by slug, for the reads nearly every request makes (`GET /orgs/{org}` and every
 * route whose target is an organization resolve it first). On the embedded database that read was
 * the request's only statement, and statements are serialised on its one connection.
 *
 * Kept correct by eviction, not by time: every change of an organization's row evicts it here when the change
 * has committed (`OrgsContext.orgChanged`), and other replicas hear of it through a bus notice
 * (`ORGS_CHANGED`). The lifetime (`ORG_CACHE_TTL_MS`) only bounds how long a replica that missed a notice
 * (NATS away) can serve an old row. A read that started before an eviction never stores what it read (a
 * generation count), so a row read just before a change cannot outlive the change. Misses are not cached: a new
 * organization is found at once. When full, the least recently used organization makes room.
 */
export class OrgCache {
  private readonly byId: LRUCache<number, OrgRow>;
  private readonly idByName = new Map<string, number>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    capacity = 10_000,
  ) {
    this.byId = new LRUCache<number, OrgRow>({
      max: capacity,
      ...(ttlMs > 0 ? { ttl: Math.ceil(ttlMs) } : {}),
      // Whatever removes a row (expiry, room for another, eviction, a newer row) also drops its slug, unless
      // the slug already names another organization.
      dispose: (row, id) => {
        const name = row.login.toLowerCase();
        if (this.idByName.get(name) === id) this.idByName.delete(name);
      },
    });
  }

  /** The cached row with this id, if fresh. */
  get(id: number): OrgRow | undefined {
    return this.byId.get(id);
  }

  /** The cached row with this slug (case-insensitive), if fresh. */
  getByName(name: string): OrgRow | undefined {
    const id = this.idByName.get(name.toLowerCase());
    return id === undefined ? undefined : this.get(id);
  }

  /** Reads through the cache: `load` runs on a miss, and its row is kept unless an eviction happened meanwhile. */
  async through(cached: OrgRow | undefined, load: () => Promise<OrgRow | undefined>): Promise<OrgRow | undefined> {
    if (cached || this.ttlMs <= 0) return cached ?? load();
    const generation = this.generation;
    const row = await load();
    if (row && generation === this.generation) this.put(row);
    return row;
  }

  private put(row: OrgRow): void {
    // The slug is indexed after the set: replacing a row disposes the old one, which drops its slug.
    this.byId.set(row.id, row);
    this.idByName.set(row.login.toLowerCase(), row.id);
  }

  /** Forgets an organization (changed or deleted), and makes reads in flight forget what they read. */
  evict(id: number): void {
    this.generation++;
    this.byId.delete(id);
  }

  /** Forgets everything (the bus connection was lost: notices may have been missed). */
  clear(): void {
    this.generation++;
    this.byId.clear();
    this.idByName.clear();
  }
}
