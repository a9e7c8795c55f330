import { ACCOUNTS_CHANGED, InProcessBus, ORGS_CHANGED, TUPLES_CHANGED } from '@platform/bus';
import { LaterBus } from '@platform/testing';
import { orgsTeamsOrgsV1 } from '@platform/proto';
import { OrgViewCache } from '../src/org-views';

const org = (id: number, username: string, description = '') => orgsTeamsOrgsV1.Organization.fromPartial({ id, username, description });

/** What orgs-teams would answer, counting the lookups. */
function lookups() {
  const answers = new Map<string, ReturnType<typeof org>>();
  let made = 0;
  return {
    answers,
    get made() {
      return made;
    },
    load: (key: string) => async () => {
      made++;
      const found = answers.get(key);
      if (!found) throw new Error('not found');
      return found;
    },
  };
}

describe('the gateway organization cache', () => {
  it('answers a lookup it made for the same caller, by slug in any case, and looks up again for another caller', async () => {
    const bus = new InProcessBus();
    const cache = new OrgViewCache(60_000);
    const stop = await cache.follow(bus);
    const o = lookups();
    o.answers.set('acme', org(7, 'acme'));
    expect((await cache.through('acme', 1, o.load('acme'))).id).toBe(7);
    expect((await cache.through('ACME', 1, o.load('acme'))).id).toBe(7);
    expect(o.made).toBe(1);
    await cache.through('acme', 2, o.load('acme'));
    expect(o.made).toBe(2);
    await stop();
  });

  it('keeps no miss: an organization the caller could not see is looked up again', async () => {
    const bus = new InProcessBus();
    const cache = new OrgViewCache(60_000);
    const stop = await cache.follow(bus);
    const o = lookups();
    await expect(cache.through('hidden', 1, o.load('hidden'))).rejects.toThrow('not found');
    o.answers.set('hidden', org(8, 'hidden'));
    expect((await cache.through('hidden', 1, o.load('hidden'))).id).toBe(8);
    await stop();
  });

  it("looks up again after the organization's notice, any tuple notice, or the caller's account notice, even when they arrive late", async () => {
    const bus = new LaterBus();
    const cache = new OrgViewCache(60_000);
    const stop = await cache.follow(bus);
    const o = lookups();
    o.answers.set('acme', org(7, 'acme', 'old'));
    await cache.through('acme', 1, o.load('acme'));
    for (const [subject, payload] of [
      [ORGS_CHANGED, { orgIds: [7] }],
      [TUPLES_CHANGED, {}],
      [ACCOUNTS_CHANGED, { userIds: [1] }],
    ] as const) {
      o.answers.set('acme', org(7, 'acme', `after ${subject}`));
      // Sent, not yet delivered: the fence waits for it before anything kept is answered.
      await bus.notify(subject, payload);
      expect((await cache.through('acme', 1, o.load('acme'))).description).toBe(`after ${subject}`);
    }
    // Another organization's notice or another caller's account leaves this one kept.
    await bus.notify(ORGS_CHANGED, { orgIds: [9] });
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [2] });
    const before = o.made;
    await cache.through('acme', 1, o.load('acme'));
    expect(o.made).toBe(before);
    await stop();
  });

  it('does not keep what a lookup read while an eviction happened', async () => {
    const bus = new InProcessBus();
    const cache = new OrgViewCache(60_000);
    const stop = await cache.follow(bus);
    let release: () => void = () => {};
    const slow = () =>
      new Promise<ReturnType<typeof org>>((resolve) => {
        release = () => resolve(org(7, 'acme', 'read before the change'));
      });
    const first = cache.through('acme', 1, slow);
    await new Promise((r) => setImmediate(r));
    await bus.notify(ORGS_CHANGED, { orgIds: [7] });
    release();
    await first;
    const o = lookups();
    o.answers.set('acme', org(7, 'acme', 'after'));
    expect((await cache.through('acme', 1, o.load('acme'))).description).toBe('after');
    await stop();
  });

  it('keeps nothing before it follows the bus, while the bus is away, or with a lifetime of 0', async () => {
    const o = lookups();
    o.answers.set('acme', org(7, 'acme'));
    const unfollowed = new OrgViewCache(60_000);
    await unfollowed.through('acme', 1, o.load('acme'));
    await unfollowed.through('acme', 1, o.load('acme'));
    expect(o.made).toBe(2);

    const bus = new InProcessBus();
    let connected = true;
    bus.health = () => ({ connected, since: new Date() });
    const cache = new OrgViewCache(60_000);
    const stop = await cache.follow(bus);
    connected = false;
    await cache.through('acme', 1, o.load('acme'));
    await cache.through('acme', 1, o.load('acme'));
    expect(o.made).toBe(4);
    await stop();

    const off = new OrgViewCache(0);
    const stopOff = await off.follow(new InProcessBus());
    await off.through('acme', 1, o.load('acme'));
    await off.through('acme', 1, o.load('acme'));
    expect(o.made).toBe(6);
    await stopOff();
  });
});
