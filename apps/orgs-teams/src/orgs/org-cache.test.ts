import { InProcessBus, ORGS_CHANGED } from '@platform/bus';
import { OrgCache } from './org-cache';
import { toOrganization, type OrgRow } from './rows';

// The organizations cache's wiring: its keys, tags and notices. What every notice-following cache does (lifetime,
// size, a read during an eviction, the fence, a lost bus) is tested once, in libs/bus (notice-cache.test.ts).

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
  version: 0,
});

describe('OrgCache', () => {
  it('answers by id and by slug, case-insensitively, after one load', async () => {
    const cache = new OrgCache(60_000);
    let loads = 0;
    const load = async () => (loads++, row(1, 'Acme'));
    expect((await cache.byName('acme', load))?.login).toBe('Acme');
    expect((await cache.byName('ACME', load))?.id).toBe(1);
    expect((await cache.byId(1, load))?.id).toBe(1);
    expect(loads).toBe(1);
  });

  it('does not keep misses: an organization created later is found at once', async () => {
    const cache = new OrgCache(60_000);
    expect(await cache.byName('new', async () => undefined)).toBeUndefined();
    expect((await cache.byName('new', async () => row(2, 'new')))?.id).toBe(2);
  });

  it('forgets an evicted organization by id and by slug, here and on the notice of another replica', async () => {
    const cache = new OrgCache(60_000);
    const bus = new InProcessBus();
    const stop = await cache.follow(bus);
    await cache.byId(1, async () => row(1, 'acme', 'old'));
    cache.evict(1);
    expect((await cache.byName('acme', async () => row(1, 'acme', 'new')))?.description).toBe('new');
    await bus.notify(ORGS_CHANGED, { orgIds: [1] });
    expect((await cache.byId(1, async () => row(1, 'acme', 'newer')))?.description).toBe('newer');
    // Another organization's notice leaves it kept.
    await bus.notify(ORGS_CHANGED, { orgIds: [2] });
    expect((await cache.byId(1, async () => row(1, 'acme', 'newest')))?.description).toBe('newer');
    // The notice meaning every organization (a change that did not record which) forgets it too.
    await bus.notify(ORGS_CHANGED, { orgIds: [], all: true });
    expect((await cache.byName('acme', async () => row(1, 'acme', 'newest')))?.description).toBe('newest');
    cache.clear();
    expect((await cache.byId(1, async () => row(1, 'acme', 'cleared')))?.description).toBe('cleared');
    await stop();
  });

  it("keeps an edited organization's newer row, by id and by slug, from an edit here or another replica's notice", async () => {
    const cache = new OrgCache(60_000);
    const bus = new InProcessBus();
    const stop = await cache.follow(bus);
    const at = (version: number, description: string) => ({ ...row(1, 'acme', description), version });
    const never = async () => row(1, 'acme', 'read');
    await cache.byId(1, async () => at(1, 'v1'));
    cache.replaced([at(2, 'v2')]);
    expect((await cache.byName('acme', never))?.description).toBe('v2');
    // An older row (an edit that committed first but reached here later) changes nothing.
    cache.replaced([at(1, 'v1 late')]);
    expect((await cache.byId(1, never))?.description).toBe('v2');
    // Another replica's edit: its notice brings the row as the Organization message.
    await bus.notify(ORGS_CHANGED, { orgIds: [1], rows: [toOrganization(at(3, 'v3'))] });
    expect((await cache.byId(1, never))?.description).toBe('v3');
    expect((await cache.byName('ACME', never))?.version).toBe(3);
    // Nothing kept, nothing made: the next read reads.
    cache.clear();
    cache.replaced([at(4, 'v4')]);
    expect((await cache.byId(1, never))?.description).toBe('read');
    await stop();
  });
});
