import { createHash } from 'node:crypto';
import { ACCOUNTS_CHANGED, type AccountsChanged, type Bus } from '@platform/bus';
import type { orgsTeamsV1 } from '@platform/proto';

/**
 * What a scoped token is limited to (docs/authentication.md): the scope's name and the account it acts for.
 * `license-proxy`: only the routes a license proxy calls, acting for that organization or user.
 */
export interface TokenScope {
  name: string;
  accountId: number;
}

/**
 * Who a token belongs to, remembered for a short while so an authenticated request costs no call to
 * orgs-teams. Keyed by the token's SHA-256, never the token. An entry goes at once when
 * orgs-teams says the account changed (a token deleted, the account disabled or removed), and every entry
 * goes when the bus connection is lost: notices sent meanwhile are missed, so nothing is trusted until the
 * bus is back. The lifetime bounds what a missed notice can cost.
 */
export class TokenCache {
  private readonly entries = new Map<string, { user: orgsTeamsV1.User; scope: TokenScope | undefined; expires: number }>();
  private readonly byUser = new Map<number, Set<string>>();
  private enabled: boolean;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {
    this.enabled = ttlMs > 0;
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
    const key = keyOf(token);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires > Date.now()) return { user: hit.user, scope: hit.scope };
    this.drop(key, hit.user.id);
    return undefined;
  }

  set(token: string, user: orgsTeamsV1.User, scope?: TokenScope): void {
    if (!this.enabled) return;
    // Full: the oldest entry (first inserted) makes room.
    if (this.entries.size >= this.maxEntries) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.drop(oldest, entry.user.id);
    }
    const key = keyOf(token);
    this.entries.set(key, { user, scope, expires: Date.now() + this.ttlMs });
    let keys = this.byUser.get(user.id);
    if (!keys) this.byUser.set(user.id, (keys = new Set()));
    keys.add(key);
  }

  evictUsers(userIds: number[]): void {
    for (const id of userIds) {
      for (const key of this.byUser.get(id) ?? []) this.entries.delete(key);
      this.byUser.delete(id);
    }
  }

  clear(): void {
    this.entries.clear();
    this.byUser.clear();
  }

  private drop(key: string, userId: number): void {
    this.entries.delete(key);
    this.byUser.get(userId)?.delete(key);
  }
}

const keyOf = (token: string) => createHash('sha256').update(token).digest('hex');
