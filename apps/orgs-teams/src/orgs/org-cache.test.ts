import { OrgCache } from './org-cache';
import type { OrgRow } from './rows';

const row = (id: number, login: string, description = ''): OrgRow => ({
  id,
  login,
  full_name: '',
  avatar_url: '',
  description,
  website: '',
  location: '',
  manager_endpoint: '',
  visibility: 0,
  email: '',
});

describe('OrgCache', () => {
  it('answers by id and by slug, case-insensitively, after one load', async () => {
    const cache = new OrgCache(60_000);
    let loads = 0;
    const load = async () => (loads++, row(1, 'Acme'));
    expect((await cache.through(cache.getByName('acme'), load))?.login).toBe('Acme');
    expect((await cache.through(cache.getByName('ACME'), load))?.id).toBe(1);
    expect((await cache.through(cache.get(1), load))?.id).toBe(1);
    expect(loads).toBe(1);
  });

  it('does not keep misses: an organization created later is found at once', async () => {
    const cache = new OrgCache(60_000);
    expect(await cache.through(cache.getByName('new'), async () => undefined)).toBeUndefined();
    expect((await cache.through(cache.getByName('new'), async () => row(2, 'new')))?.id).toBe(2);
  });

  it('forgets an evicted organization, by id and by slug', async () => {
    const cache = new OrgCache(60_000);
    await cache.through(undefined, async () => row(1, 'acme', 'old'));
    cache.evict(1);
    expect(cache.get(1)).toBeUndefined();
    expect(cache.getByName('acme')).toBeUndefined();
  });

  it('does not store a row read before an eviction that happened while it was read', async () => {
    const cache = new OrgCache(60_000);
    let release!: () => void;
    const slowRead = cache.through(undefined, () => new Promise<OrgRow>((r) => (release = () => r(row(1, 'acme', 'old')))));
    cache.evict(1); // the change commits while the old row is on its way
    release();
    expect((await slowRead)?.description).toBe('old'); // the reader itself gets what it read...
    expect(cache.get(1)).toBeUndefined(); // ...but nobody after it
  });

  it('drops entries past their lifetime, and the oldest entry when full', async () => {
    const shortLived = new OrgCache(1);
    await shortLived.through(undefined, async () => row(1, 'acme'));
    await new Promise((r) => setTimeout(r, 5));
    expect(shortLived.get(1)).toBeUndefined();

    const small = new OrgCache(60_000, 2);
    for (const [id, login] of [[1, 'a'], [2, 'b'], [3, 'c']] as const) await small.through(undefined, async () => row(id, login));
    expect(small.get(1)).toBeUndefined();
    expect(small.getByName('b')?.id).toBe(2);
    expect(small.getByName('c')?.id).toBe(3);
  });

  it('with a lifetime of 0 caches nothing', async () => {
    const off = new OrgCache(0);
    await off.through(undefined, async () => row(1, 'acme'));
    expect(off.get(1)).toBeUndefined();
  });
});
