import { TtlCache } from '../src/sections/metricsproxy/hook-cache';

describe('the metrics hook cache', () => {
  it('shares one lookup between concurrent asks and answers from it until its lifetime ends', async () => {
    const cache = new TtlCache<number>(50);
    let loads = 0;
    const load = async () => ++loads;
    expect(await Promise.all([cache.get('k', load), cache.get('k', load)])).toEqual([1, 1]);
    expect(await cache.get('k', load)).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(await cache.get('k', load)).toBe(2);
  });

  it('forgets a failed lookup at once', async () => {
    const cache = new TtlCache<string>(60_000);
    await expect(cache.get('k', () => Promise.reject(new Error('backend down')))).rejects.toThrow('backend down');
    expect(await cache.get('k', async () => 'fine')).toBe('fine');
  });

  it('keeps at most its capacity, and nothing with a lifetime of 0', async () => {
    const small = new TtlCache<string>(60_000, 2);
    for (const k of ['a', 'b', 'c']) await small.get(k, async () => k);
    expect(await small.get('a', async () => 'reloaded')).toBe('reloaded');
    expect(await small.get('c', async () => 'reloaded')).toBe('c');
    const off = new TtlCache<number>(0);
    let loads = 0;
    await off.get('k', async () => ++loads);
    expect(await off.get('k', async () => ++loads)).toBe(2);
  });
});
