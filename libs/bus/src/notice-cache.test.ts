import { metricsText } from '@platform/telemetry';
import { LaterBus } from './later-bus';
import type { BusHealth } from './bus';
import { InProcessBus } from './in-process-bus';
import { NoticeCache, type NoticeRule } from './notice-cache';

// The one cache building block, written once: what it serves, what it keeps, and what a notice, a lost bus, an
// eviction during a read, its bounds and its fence do to both. The caches built on it test only their wiring.

const CHANGED = 'test.things.changed';
const EVERYTHING = 'test.everything.changed';
const RULES: NoticeRule[] = [
  { subject: CHANGED, stale: (p) => ((p as { ids: number[] }).ids ?? []).map((id) => `thing:${id}`) },
  { subject: EVERYTHING, stale: () => 'all' },
];

/** A source of values that counts its reads and can hold one in the middle (having read). */
class Source {
  readonly values = new Map<string, string>();
  reads = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private reached: (() => void) | undefined;

  hold(): Promise<void> {
    this.gate = new Promise((resolve) => (this.open = resolve));
    return new Promise((resolve) => (this.reached = resolve));
  }
  release(): void {
    this.gate = undefined;
    this.open?.();
  }
  async read(key: string): Promise<string> {
    this.reads++;
    const value = this.values.get(key) ?? 'none';
    this.reached?.();
    await this.gate;
    return value;
  }
}

/**
 * Lifetimes on a fake clock from here on: the cache counts them on performance.now(), an answer's own end on Date, and
 * jest's fake timers drive both. Started a moment in, since lru-cache takes an answer stamped at 0 for one stamped never.
 */
function fakeClock(): void {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  jest.advanceTimersByTime(1);
}
afterEach(() => jest.useRealTimers());

async function setUp(opts: { ttlMs?: number; maxEntries?: number; bus?: InProcessBus } = {}) {
  const bus = opts.bus ?? new InProcessBus();
  const source = new Source();
  const cache = new NoticeCache<string>({ name: 'test.things', ttlMs: opts.ttlMs ?? 60_000, maxEntries: opts.maxEntries ?? 100 });
  const stop = await cache.follow(bus, RULES);
  const get = (id: number) => cache.through(`thing:${id}`, () => source.read(`thing:${id}`), { tags: [`thing:${id}`] });
  return { bus, source, cache, stop, get };
}

describe('NoticeCache', () => {
  it('serves a kept answer without reading again, and reads afresh after a notice naming its tag', async () => {
    const { bus, source, get, stop } = await setUp();
    source.values.set('thing:1', 'a');
    source.values.set('thing:2', 'b');
    expect([await get(1), await get(2)]).toEqual(['a', 'b']);
    source.values.set('thing:1', 'A');
    source.values.set('thing:2', 'B');
    expect([await get(1), await get(2)]).toEqual(['a', 'b']);
    expect(source.reads).toBe(2);
    await bus.notify(CHANGED, { ids: [1] });
    // Only the answer the notice names goes.
    expect([await get(1), await get(2)]).toEqual(['A', 'b']);
    await bus.notify(EVERYTHING, {});
    expect(await get(2)).toBe('B');
    await stop();
  });

  it('evicts by tag for a change made here, answers found by other keys included', async () => {
    const { source, cache, stop } = await setUp();
    source.values.set('id:7', 'acme');
    const how = { tags: ['org:7'], alsoAt: (v: string) => [`name:${v}`] };
    expect(await cache.through('id:7', () => source.read('id:7'), how)).toBe('acme');
    // Found by its name without a read.
    expect(await cache.through('name:acme', async () => 'read', how)).toBe('acme');
    expect(cache.size).toBe(2);
    cache.evict(['org:7']);
    // Both keys go with the tag.
    expect(cache.size).toBe(0);
    expect(await cache.through('name:acme', async () => 'read', how)).toBe('read');
    await stop();
  });

  it('hears every notice sent before a request before serving it from memory, however late the bus delivers', async () => {
    const { source, get, stop, bus } = await setUp({ bus: new LaterBus() });
    source.values.set('thing:1', 'old');
    expect(await get(1)).toBe('old');
    // Another replica changes it and answers once the bus has its notice, not once this replica has it...
    source.values.set('thing:1', 'new');
    await bus.notify(CHANGED, { ids: [1] });
    // ...so the client's next request may come here first: it sees the change all the same.
    expect(await get(1)).toBe('new');
    await stop();
  });

  it('does not keep what a read saw when an eviction came while it was reading', async () => {
    const { bus, source, get, stop } = await setUp();
    source.values.set('thing:1', 'old');
    const reached = source.hold();
    const answer = get(1);
    await reached;
    source.values.set('thing:1', 'new');
    await bus.notify(CHANGED, { ids: [1] });
    source.release();
    expect(await answer).toBe('old');
    expect(await get(1)).toBe('new');
    await stop();
  });

  it('replaces what a notice brings anew, keeping its tags and what is left of its lifetime; a read in flight keeps nothing', async () => {
    fakeClock();
    const bus = new InProcessBus();
    const source = new Source();
    const cache = new NoticeCache<string>({ name: 'test.fresh', ttlMs: 100, maxEntries: 100 });
    // A notice of new values: `{ values: { 1: 'x' } }` replaces thing 1's answer by 'x', or drops it when 'x' is 'drop'.
    const stop = await cache.follow(bus, [
      {
        subject: CHANGED,
        stale: () => [],
        fresh: (p) =>
          new Map(
            Object.entries((p as { values: Record<string, string> }).values).map(([id, v]) => [
              `thing:${id}`,
              (kept: string) => (v === 'drop' ? undefined : `${kept}>${v}`),
            ]),
          ),
      },
    ]);
    const get = (id: number) => cache.through(`thing:${id}`, () => source.read(`thing:${id}`), { tags: [`thing:${id}`] });
    source.values.set('thing:1', 'a');
    source.values.set('thing:2', 'b');
    await get(1);
    await get(2);
    await jest.advanceTimersByTimeAsync(60);
    await bus.notify(CHANGED, { values: { 1: 'x', 2: 'drop' } });
    expect(await get(1)).toBe('a>x');
    expect(source.reads).toBe(2);
    expect(await get(2)).toBe('b');
    expect(source.reads).toBe(3);
    // Replaced again through the same tag, and gone when its first lifetime ends, not a new one.
    await bus.notify(CHANGED, { values: { 1: 'y' } });
    expect(await get(1)).toBe('a>x>y');
    await jest.advanceTimersByTimeAsync(41);
    source.values.set('thing:1', 'fresh');
    expect(await get(1)).toBe('fresh');
    // A read that began before a replacement answers what it read and keeps nothing.
    source.values.set('thing:3', 'old');
    const reached = source.hold();
    const answer = get(3);
    await reached;
    source.values.set('thing:3', 'new');
    await bus.notify(CHANGED, { values: { 9: 'z' } });
    source.release();
    expect(await answer).toBe('old');
    expect(await get(3)).toBe('new');
    await stop();
  });

  it('shares one read among concurrent misses of a key', async () => {
    const { source, get, stop } = await setUp();
    source.values.set('thing:1', 'a');
    const reached = source.hold();
    const answers = [get(1), get(1), get(1)];
    await reached;
    source.release();
    expect(await Promise.all(answers)).toEqual(['a', 'a', 'a']);
    expect(source.reads).toBe(1);
    await stop();
  });

  it('forgets a failed read: the next one reads again', async () => {
    const { cache, stop } = await setUp();
    await expect(cache.through('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.through('k', async () => 'up')).toBe('up');
    await stop();
  });

  it('empties itself when the bus connection is lost, keeps nothing until it is back and a fence returned, then keeps again', async () => {
    const bus = new InProcessBus();
    let report: (h: BusHealth) => void = () => {};
    bus.onHealthChange = (listener) => ((report = listener), () => {});
    const { source, get, stop } = await setUp({ bus });
    source.values.set('thing:1', 'a');
    expect(await get(1)).toBe('a');
    report({ connected: false, since: new Date() });
    source.values.set('thing:1', 'b');
    // Notices may be missed from now on: nothing kept is served, and nothing read is kept.
    expect(await get(1)).toBe('b');
    source.values.set('thing:1', 'c');
    expect(await get(1)).toBe('c');
    report({ connected: true, since: new Date() });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await get(1)).toBe('c');
    source.values.set('thing:1', 'd');
    expect(await get(1)).toBe('c');
    await stop();
  });

  it('starts over when the bus reports notices missed while connected: what it kept is read afresh', async () => {
    const bus = new InProcessBus();
    let missed: () => void = () => {};
    bus.onNoticesMissed = (listener) => ((missed = listener), () => {});
    const { source, get, stop } = await setUp({ bus });
    source.values.set('thing:1', 'a');
    expect(await get(1)).toBe('a');
    // Changed, and its notice lost on the way: only the gap in the bus's order tells.
    source.values.set('thing:1', 'b');
    missed();
    expect(await get(1)).toBe('b');
    // Kept again once its fence has come back: from then on, what it reads.
    await new Promise((resolve) => setImmediate(resolve));
    source.values.set('thing:1', 'c');
    expect(await get(1)).toBe('c');
    source.values.set('thing:1', 'd');
    expect(await get(1)).toBe('c');
    await stop();
  });

  it('keeps nothing before it follows a bus, unless told a single process evicts it itself', async () => {
    const loose = new NoticeCache<string>({ name: 'test.loose', ttlMs: 60_000 });
    let n = 0;
    const read = async () => String(++n);
    expect([await loose.through('k', read), await loose.through('k', read)]).toEqual(['1', '2']);
    const local = new NoticeCache<string>({ name: 'test.local', ttlMs: 60_000, keepWithoutBus: true });
    expect([await local.through('k', read), await local.through('k', read)]).toEqual(['3', '3']);
    local.evict([]);
    local.clear();
    expect(await local.through('k', read)).toBe('4');
  });

  it('freezes what it keeps, for the reader that read it too, bytes excepted', async () => {
    const cache = new NoticeCache<{ org: { name: string }; avatar: Uint8Array }>({
      name: 'test.frozen',
      ttlMs: 60_000,
      keepWithoutBus: true,
    });
    const first = await cache.through('k', async () => ({ org: { name: 'acme' }, avatar: new Uint8Array([1]) }));
    expect(() => {
      (first.org as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    const again = await cache.through('k', async () => ({ org: { name: 'other' }, avatar: new Uint8Array() }));
    expect(again).toBe(first);
    expect(again.org.name).toBe('acme');
    expect(Object.isFrozen(again.avatar)).toBe(false);
  });

  it('keeps nothing with a lifetime or a size of 0, forgets after its lifetime, and makes room by least recent use', async () => {
    for (const opts of [{ ttlMs: 0 }, { maxEntries: 0 }]) {
      const { source, get, stop } = await setUp(opts);
      source.values.set('thing:1', 'a');
      await get(1);
      source.values.set('thing:1', 'b');
      expect(await get(1)).toBe('b');
      await stop();
    }
    fakeClock();
    const shortLived = await setUp({ ttlMs: 20 });
    shortLived.source.values.set('thing:1', 'a');
    await shortLived.get(1);
    shortLived.source.values.set('thing:1', 'b');
    await jest.advanceTimersByTimeAsync(20);
    expect(await shortLived.get(1)).toBe('a');
    await jest.advanceTimersByTimeAsync(1);
    expect(await shortLived.get(1)).toBe('b');
    await shortLived.stop();
    jest.useRealTimers();

    const small = await setUp({ maxEntries: 2 });
    await small.get(1);
    await small.get(2);
    await small.get(1);
    await small.get(3); // 2 was used least recently
    expect(small.cache.size).toBe(2);
    const reads = small.source.reads;
    await small.get(1);
    await small.get(3);
    expect(small.source.reads).toBe(reads);
    await small.get(2);
    expect(small.source.reads).toBe(reads + 1);
    await small.stop();
  });

  it('keeps only what its keeping says, for no longer than the answer says', async () => {
    fakeClock();
    const { cache, stop } = await setUp();
    let n = 0;
    const how = {
      keep: (v: string) => v !== 'absent',
      ttlMs: (v: string) => (v.startsWith('short') ? 250 : v.startsWith('never') ? 0 : undefined),
    };
    for (const value of ['absent', 'never']) {
      const before = n;
      await cache.through(value, async () => (n++, value), how);
      await cache.through(value, async () => (n++, value), how);
      expect(n - before).toBe(2);
    }
    await cache.through('short', async () => (n++, 'short'), how);
    await jest.advanceTimersByTimeAsync(250);
    expect(await cache.through('short', async () => (n++, 'short2'), how)).toBe('short');
    await jest.advanceTimersByTimeAsync(1);
    expect(await cache.through('short', async () => (n++, 'short3'), how)).toBe('short3');
    await stop();
  });

  it('reads many keys at once: the kept ones from memory, the others in one read, kept but for what the read did not find', async () => {
    const bus = new InProcessBus();
    const cache = new NoticeCache<string>({ name: 'test.many', ttlMs: 60_000 });
    const stop = await cache.follow(bus, RULES);
    const asked: string[][] = [];
    const values = new Map([
      ['1', 'one'],
      ['2', 'two'],
    ]);
    const load = async (missing: string[]) => (
      asked.push(missing),
      new Map(missing.flatMap((k) => (values.has(k) ? [[k, values.get(k)!] as const] : [])))
    );
    const how = { tags: (v: string) => [`thing:${v === 'one' ? 1 : 2}`] };
    expect(await cache.throughMany(['1', '3'], load, how)).toEqual(new Map([['1', 'one']]));
    expect(await cache.throughMany(['1', '2', '2', '3'], load, how)).toEqual(
      new Map([
        ['1', 'one'],
        ['2', 'two'],
      ]),
    );
    expect(asked).toEqual([
      ['1', '3'],
      ['2', '3'],
    ]);
    values.set('1', 'uno');
    await bus.notify(CHANGED, { ids: [1] });
    expect((await cache.throughMany(['1', '2'], load, how)).get('1')).toBe('uno');
    expect(asked.at(-1)).toEqual(['1']);
    await stop();
  });

  it('counts its hits, misses and evictions in the metrics, beside its size and bound', async () => {
    const { bus, get, stop } = await setUp();
    await get(1);
    await get(1);
    await get(2);
    const before = (await metricsText()).body;
    expect(before).toMatch(/cache_entries\{cache="test.things"\} 2\b/);
    expect(before).toMatch(/cache_max_entries\{cache="test.things"\} [1-9]/);
    await bus.notify(CHANGED, { ids: [1] });
    const text = (await metricsText()).body;
    expect(text).toMatch(/cache_lookups_total\{cache="test.things",result="hit"\} [1-9]/);
    expect(text).toMatch(/cache_lookups_total\{cache="test.things",result="miss"\} [1-9]/);
    expect(text).toMatch(/cache_evictions_total\{cache="test.things",cause="notice"\} [1-9]/);
    await stop();
  });
});
