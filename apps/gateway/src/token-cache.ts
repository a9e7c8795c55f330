import { createHash } from 'node:crypto';
import { ACCOUNTS_CHANGED, NoticeCache, type AccountsChanged, type Bus } from '@platform/bus';
import type { orgsTeamsV1 } from '@platform/proto';

/**
 * The one use a token is limited to (docs/authentication.md): the use's name and the account it acts for.
 * `license-proxy`: only the routes a license proxy calls, acting for that organization or user.
 */
export interface TokenScope {
  name: string;
  accountId: number;
}

/** Who a token belongs to, the one use it is limited to (if any), and its Gitea scopes. */
export interface KnownToken {
  user: orgsTeamsV1.User;
  scope: TokenScope | undefined;
  /** The token's Gitea scopes ("all", "read:organization", ...). */
  accessScopes: string[];
}

/**
 * Who a token belongs to, remembered so that an authenticated request costs no call to orgs-teams: a NoticeCache
 * (libs/bus) keyed by the token's SHA-256, never the token. An account's tokens go at once on orgs-teams' notice that
 * the account changed (a token deleted, the account disabled, demoted or removed), on every replica; a fence makes
 * sure the notice of a change answered by another replica is heard before a kept token is used; nothing is kept
 * while the bus is away or before the cache follows it. Unknown tokens are not kept.
 */
export class TokenCache {
  private readonly known: NoticeCache<KnownToken | undefined>;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.known = new NoticeCache({ name: 'gateway.tokens', ttlMs, maxEntries });
  }

  /** Evicts on orgs-teams' account notices and follows the bus connection; answers how to stop. */
  follow(bus: Bus): Promise<() => Promise<void>> {
    return this.known.follow(bus, [
      { subject: ACCOUNTS_CHANGED, stale: (p) => ((p as AccountsChanged).userIds ?? []).map((id) => `account:${id}`) },
    ]);
  }

  /** Who `token` belongs to: kept, or asked with `ask` (and kept when it names someone). */
  through(token: string, ask: () => Promise<KnownToken | undefined>, since?: number): Promise<KnownToken | undefined> {
    return this.known.through(
      keyOf(token),
      ask,
      { keep: (known) => known !== undefined, tags: (known) => [`account:${known!.user.id}`] },
      since,
    );
  }

  /** Forgets every token of these accounts (a route that deleted or replaced tokens; other gateways hear the notice). */
  evictUsers(userIds: number[]): void {
    this.known.evict(userIds.map((id) => `account:${id}`));
  }

  clear(): void {
    this.known.clear();
  }
}

const keyOf = (token: string) => createHash('sha256').update(token).digest('hex');
