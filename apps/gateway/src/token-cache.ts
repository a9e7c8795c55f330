import { createHash } from 'node:crypto';
import { ACCOUNTS_CHANGED, type AccountsChanged, type Bus } from '@platform/bus';
import type { orgsTeamsV1 } from '@platform/proto';
import { LRUCache } from 'lru-cache';

/**
 * What a scoped token is limited to (docs/authentication.md): the scope's name and the account it acts for.
 * `license-proxy`: only the routes a license proxy calls, acting for that organization or user.
 */
export interface TokenScope {
  name: string;
  accountId: number;
}

interface Entry {
  user: orgsTeamsV1.User;
  scope: TokenScope | undefined;
}

/**
 * Who a token belongs to, remembered for a short while so an authenticated request costs no call to
 * orgs-teams. Keyed by the token's SHA-256, never the token. An entry goes at once when
 * orgs-teams says the account changed (a token deleted, the account disabled or removed), and every entry
 * goes when the bus connection is lost: notices sent meanwhile are missed, so nothing is trusted until the
 * bus is back. The lifetime bounds what a missed notice can cost; when full, the least recently used entry
 * makes room.
 */
export class TokenCache {
  private readonly entries: LRUCache<string, Entry>;
  /** The keys of each account's cached tokens, so a notice about an account finds them. */
  private readonly byUser = new Map<number, Set<string>>();
  private enabled: boolean;

  constructor(
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.enabled = ttlMs > 0;
    this.entries = new LRUCache<string, Entry>({
      max: maxEntries,
      ...(ttlMs > 0 ? { ttl: Math.ceil(ttlMs) } : {}),
      // Whatever removes an entry (expiry, room for another, a notice, a replacement) also unindexes it.
      dispose: (entry, key) => this.unindex(entry.user.id, key),
    });
  }

  /** Evicts on notices and follows the bus connection; answers how to stop. */
  async follow(bus: Bus): Promise<() => Promise<void>> {
    const unlisten = await bus.listen(ACCOUNTS_CHANGED, (_subject, payload) => this.evictUsers((payload as AccountsChanged).userIds ?? []));
    const apply = (connected: boolean) => {
      this.clear();
      this.enabled = this.ttlMs > 0 && connected;
    };
    apply(bus.health().connected);
    const stop = bus.onHealthChange((h) => apply(h.connected));
    return async () => {
      stop();
      await unlisten();
    };
  }

  get(token: string): orgsTeamsV1.User | undefined {
    return this.lookup(token)?.user;
  }

  /** The user a token belongs to and the scope it is limited to, if any. */
  lookup(token: string): { user: orgsTeamsV1.User; scope: TokenScope | undefined } | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(keyOf(token));
    return hit && { user: hit.user, scope: hit.scope };
  }

  set(token: string, user: orgsTeamsV1.User, scope?: TokenScope): void {
    if (!this.enabled) return;
    const key = keyOf(token);
    // Indexed after the set: replacing an entry disposes the old one, which unindexes the key.
    this.entries.set(key, { user, scope });
    let keys = this.byUser.get(user.id);
    if (!keys) this.byUser.set(user.id, (keys = new Set()));
    keys.add(key);
  }

  evictUsers(userIds: number[]): void {
    for (const id of userIds) {
      for (const key of [...(this.byUser.get(id) ?? [])]) this.entries.delete(key);
      this.byUser.delete(id);
    }
  }

  clear(): void {
    this.entries.clear();
    this.byUser.clear();
  }

  private unindex(userId: number, key: string): void {
    const keys = this.byUser.get(userId);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.byUser.delete(userId);
  }
}

const keyOf = (token: string) => createHash('sha256').update(token).digest('hex');
