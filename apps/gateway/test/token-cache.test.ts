import { ACCOUNTS_CHANGED, InProcessBus } from '@platform/bus';
import { orgsTeamsV1 } from '@platform/proto';
import { TokenCache, type KnownToken } from '../src/token-cache';

// The token cache's wiring: keyed by token, tagged by account, evicted by orgs-teams' account notices. What every
// notice-following cache does (lifetime, size, fence, a lost bus) is tested once, in libs/bus (notice-cache.test.ts).

const known = (id: number): KnownToken => ({ user: orgsTeamsV1.User.fromPartial({ id, login: `u${id}` }), scope: undefined, accessScopes: ['all'] });

describe('the gateway token cache', () => {
  const asks: string[] = [];
  const ask = (token: string, id: number | undefined) => async () => (asks.push(token), id === undefined ? undefined : known(id));
  beforeEach(() => (asks.length = 0));

  it('asks orgs-teams once per token, keeps only tokens that name someone, and drops an account’s tokens on its notice', async () => {
    const bus = new InProcessBus();
    const cache = new TokenCache(60_000);
    const stop = await cache.follow(bus);
    for (const [token, id] of [['a', 1], ['b', 1], ['c', 2], ['a', 1], ['c', 2]] as const) await cache.through(token, ask(token, id));
    await cache.through('bad', ask('bad', undefined));
    await cache.through('bad', ask('bad', undefined));
    expect(asks).toEqual(['a', 'b', 'c', 'bad', 'bad']);
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [1] });
    for (const [token, id] of [['a', 1], ['b', 1], ['c', 2]] as const) await cache.through(token, ask(token, id));
    expect(asks.slice(5)).toEqual(['a', 'b']);
    // A route that deleted an account's tokens forgets them here at once.
    cache.evictUsers([2]);
    await cache.through('c', ask('c', 2));
    expect(asks.slice(7)).toEqual(['c']);
    await stop();
  });

  it('keeps nothing before it follows the bus', async () => {
    const cache = new TokenCache(60_000);
    await cache.through('a', ask('a', 1));
    await cache.through('a', ask('a', 1));
    expect(asks).toEqual(['a', 'a']);
  });
});
