import { ACCOUNTS_CHANGED, InProcessBus } from '@platform/bus';
import { orgsTeamsV1 } from '@platform/proto';
import { TokenCache } from '../src/token-cache';

const user = (id: number) => orgsTeamsV1.User.fromPartial({ id, login: `u${id}` });

describe('the gateway token cache', () => {
  it('answers a token it was told about until its lifetime ends', async () => {
    const cache = new TokenCache(50);
    cache.set('t1', user(1));
    expect(cache.get('t1')?.id).toBe(1);
    expect(cache.get('t2')).toBeUndefined();
    await new Promise((r) => setTimeout(r, 60));
    expect(cache.get('t1')).toBeUndefined();
  });

  it('drops every token of an account at once when orgs-teams says the account changed', async () => {
    const bus = new InProcessBus();
    const cache = new TokenCache(60_000);
    const stop = await cache.follow(bus);
    cache.set('a', user(1));
    cache.set('b', user(1));
    cache.set('c', user(2));
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [1] });
    expect([cache.get('a'), cache.get('b'), cache.get('c')?.id]).toEqual([undefined, undefined, 2]);
    await stop();
  });

  it('remembers nothing while the bus is disconnected, and starts empty when it is back', async () => {
    const bus = new InProcessBus();
    let listener: (h: { connected: boolean; since: Date }) => void = () => {};
    bus.onHealthChange = (l) => ((listener = l), () => {});
    const cache = new TokenCache(60_000);
    await cache.follow(bus);
    cache.set('a', user(1));
    listener({ connected: false, since: new Date() });
    expect(cache.get('a')).toBeUndefined();
    cache.set('b', user(2));
    expect(cache.get('b')).toBeUndefined();
    listener({ connected: true, since: new Date() });
    expect(cache.get('a')).toBeUndefined();
    cache.set('b', user(2));
    expect(cache.get('b')?.id).toBe(2);
  });

  it('keeps at most its capacity, dropping the oldest', () => {
    const cache = new TokenCache(60_000, 2);
    cache.set('a', user(1));
    cache.set('b', user(2));
    cache.set('c', user(3));
    expect([cache.get('a'), cache.get('b')?.id, cache.get('c')?.id]).toEqual([undefined, 2, 3]);
  });

  it('does nothing with a lifetime of 0', () => {
    const cache = new TokenCache(0);
    cache.set('a', user(1));
    expect(cache.get('a')).toBeUndefined();
  });
});
