import { InMemorySeenIds } from './seen-ids';

const meta = { clusterUID: '0b6f6c2e-7d3a-4f51-9a3e-1c2d3e4f5a6b', kind: 'usage-sample' };

describe('InMemorySeenIds', () => {
  it('says first time once per id', async () => {
    const seen = new InMemorySeenIds();
    expect(await seen.remember('a', meta)).toBe(true);
    expect(await seen.remember('a', meta)).toBe(false);
    expect(await seen.remember('b', meta)).toBe(true);
    expect(seen.size).toBe(2);
  });

  it('releases an id whose effect failed, so the redelivery applies it', async () => {
    const seen = new InMemorySeenIds();
    await seen.remember('a', meta);
    await seen.release('a');
    expect(await seen.remember('a', meta)).toBe(true);
  });

  it('forgets ids recorded before a time', async () => {
    const seen = new InMemorySeenIds();
    await seen.remember('old', { ...meta, at: new Date('2026-01-01T00:00:00Z') });
    await seen.remember('new', { ...meta, at: new Date('2026-03-01T00:00:00Z') });
    expect(await seen.forgetBefore(new Date('2026-02-01T00:00:00Z'))).toBe(1);
    expect(await seen.remember('old', meta)).toBe(true);
    expect(await seen.remember('new', meta)).toBe(false);
  });

  it('drops the oldest ids beyond its bound', async () => {
    const seen = new InMemorySeenIds(2);
    for (const id of ['a', 'b', 'c']) await seen.remember(id, meta);
    expect(seen.size).toBe(2);
    expect(await seen.remember('c', meta)).toBe(false);
    expect(await seen.remember('a', meta)).toBe(true);
    expect(() => new InMemorySeenIds(0)).toThrow();
  });
});
