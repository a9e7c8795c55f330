import { DecisionCache, InProcessBus, TUPLES_CHANGED, type BusHealth } from '@platform/bus';
import { createLogger } from '@platform/service-kit';
import { LaterBus } from '@platform/testing';
import { CachedEngine } from '../src/decisions/cached-engine';
import { announceTupleChanges } from '../src/decisions/tuples-changed';
import type { AuthzEngine, CheckRequest, Tuple } from '../src/engine';

// The decision cache on its own, over an engine that answers from a set of direct tuples and can be held in the
// middle of a read: what is served, what is kept, and what an eviction or a lost bus does to both.

const key = (t: Tuple) => `${t.user} ${t.relation} ${t.object}`;

/**
 * Direct tuples only; `hold()` makes the next reads wait (having read the tuples) until `release()`, and answers
 * when the first of them has read.
 */
class TupleSetEngine implements AuthzEngine {
  readonly tuples = new Set<string>();
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
  async check(r: CheckRequest): Promise<boolean> {
    return (await this.batchCheck([r]))[0];
  }
  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    this.reads++;
    const answers = requests.map((r) => this.tuples.has(key(r)) || !!r.contextualTuples?.some((t) => key(t) === key(r)));
    this.reached?.();
    await this.gate;
    return answers;
  }
  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    const held = await this.batchCheck(relations.map((relation) => ({ user, relation, object })));
    return relations.filter((_, i) => held[i]);
  }
  async listObjects(): Promise<string[]> {
    return [];
  }
  async listUsers(): Promise<string[]> {
    return [];
  }
  async write(writes: Tuple[], deletes: Tuple[]): Promise<void> {
    for (const t of deletes) this.tuples.delete(key(t));
    for (const t of writes) this.tuples.add(key(t));
  }
  async readTuples(): Promise<Tuple[]> {
    return [];
  }
}

const MEMBER = { user: 'user:1', relation: 'member', object: 'organization:7' };
const EDIT = { user: 'user:1', relation: 'edit', object: 'organization:7' };

function setUp(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  const bus = new InProcessBus();
  const engine = new TupleSetEngine();
  const cache = new DecisionCache({ ttlMs: opts.ttlMs ?? 60_000, maxEntries: opts.maxEntries ?? 1000 });
  const cached = new CachedEngine(engine, cache, announceTupleChanges([cache], bus, createLogger('authz', 'silent')));
  return { bus, engine, cache, cached };
}

describe('the authorization decision cache', () => {
  it('answers a question it has answered without reading tuples again, and a changed one at once after a write', async () => {
    const { engine, cached } = setUp();
    await engine.write([MEMBER], []);
    expect(await cached.check(MEMBER)).toBe(true);
    // Changed behind its back (as another replica whose notice has not come): the kept answer is served.
    engine.tuples.delete(key(MEMBER));
    expect(await cached.check(MEMBER)).toBe(true);
    expect(engine.reads).toBe(1);
    // A write through it evicts: the next question reads the tuples.
    await cached.write([], [EDIT]);
    expect(await cached.check(MEMBER)).toBe(false);
  });

  it('keeps denials too, and forgets them when a grant is written', async () => {
    const { cached } = setUp();
    expect(await cached.check(EDIT)).toBe(false);
    await cached.write([EDIT], []);
    expect(await cached.check(EDIT)).toBe(true);
  });

  it('forgets everything when another replica says tuples changed', async () => {
    const { bus, engine, cache, cached } = setUp();
    await cache.followTuples(bus);
    await engine.write([MEMBER, EDIT], []);
    expect(await cached.batchCheck([MEMBER, EDIT])).toEqual([true, true]);
    engine.tuples.clear();
    expect(await cached.listRelations('user:1', 'organization:7', ['member', 'edit'])).toEqual(['member', 'edit']);
    await bus.notify(TUPLES_CHANGED, {});
    expect(await cached.listRelations('user:1', 'organization:7', ['member', 'edit'])).toEqual([]);
    expect(await cached.check(MEMBER)).toBe(false);
  });

  it('hears every notice sent before a request before serving it from memory, however late the bus delivers', async () => {
    const bus = new LaterBus();
    const engine = new TupleSetEngine();
    const cache = new DecisionCache({ ttlMs: 60_000, maxEntries: 1000 });
    const cached = new CachedEngine(engine, cache, async () => cache.clear());
    const stop = await cache.followTuples(bus);
    await engine.write([MEMBER], []);
    expect(await cached.check(MEMBER)).toBe(true);
    // Another replica removes the member and answers once the bus has its notice, not once this replica has it...
    engine.tuples.delete(key(MEMBER));
    await bus.notify(TUPLES_CHANGED, {});
    // ...so the client's next request may come here first: it is refused all the same.
    expect(await cached.check(MEMBER)).toBe(false);
    expect(await cached.batchCheck([MEMBER])).toEqual([false]);
    await stop();
  });

  it('does not keep an answer read before an eviction that came while it was being read', async () => {
    const { bus, engine, cache, cached } = setUp();
    await cache.followTuples(bus);
    await engine.write([MEMBER], []);
    const read = engine.hold();
    const answer = cached.check(MEMBER);
    // The read has seen the member tuple...
    await read;
    // ...which another replica removes and says so, before the read is answered.
    engine.tuples.delete(key(MEMBER));
    await bus.notify(TUPLES_CHANGED, {});
    engine.release();
    expect(await answer).toBe(true);
    // That answer was not kept: the next request is refused.
    expect(await cached.check(MEMBER)).toBe(false);
  });

  it('does not keep an answer of a batch read across a local write either', async () => {
    const { engine, cached } = setUp();
    await engine.write([MEMBER, EDIT], []);
    const read = engine.hold();
    const answers = cached.batchCheck([MEMBER, EDIT]);
    await read;
    await cached.write([], [EDIT]);
    engine.release();
    expect(await answers).toEqual([true, true]);
    expect(await cached.batchCheck([MEMBER, EDIT])).toEqual([true, false]);
  });

  it('evicts after a write that failed, which may have been applied in part', async () => {
    const { engine, cached } = setUp();
    await engine.write([MEMBER], []);
    expect(await cached.check(MEMBER)).toBe(true);
    engine.tuples.delete(key(MEMBER));
    engine.write = async () => {
      throw new Error('conflict');
    };
    await expect(cached.write([EDIT], [])).rejects.toThrow('conflict');
    expect(await cached.check(MEMBER)).toBe(false);
  });

  it('never keeps the answer of a check with contextual tuples', async () => {
    const { engine, cached } = setUp();
    expect(await cached.check({ ...EDIT, contextualTuples: [EDIT] })).toBe(true);
    expect(await cached.check(EDIT)).toBe(false);
    expect(await cached.check({ ...EDIT, contextualTuples: [EDIT] })).toBe(true);
    expect(engine.reads).toBe(3);
  });

  it('empties itself when the bus connection is lost, keeps nothing until it is back, then keeps answers again', async () => {
    const { bus, engine, cache, cached } = setUp();
    let report: (h: BusHealth) => void = () => {};
    bus.onHealthChange = (listener) => ((report = listener), () => {});
    await cache.followTuples(bus);
    await engine.write([MEMBER], []);
    expect(await cached.check(MEMBER)).toBe(true);
    engine.tuples.delete(key(MEMBER));
    report({ connected: false, since: new Date() });
    // Notices may be missed from now on: nothing kept is served, and nothing read is kept.
    expect(await cached.check(MEMBER)).toBe(false);
    engine.tuples.add(key(MEMBER));
    expect(await cached.check(MEMBER)).toBe(true);
    engine.tuples.delete(key(MEMBER));
    expect(await cached.check(MEMBER)).toBe(false);
    report({ connected: true, since: new Date() });
    // Trusted again once its own fence has come back through the bus.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cached.check(MEMBER)).toBe(false);
    engine.tuples.add(key(MEMBER));
    expect(await cached.check(MEMBER)).toBe(false);
  });

  it('keeps nothing with a lifetime or a size of 0', async () => {
    for (const opts of [{ ttlMs: 0 }, { maxEntries: 0 }]) {
      const { engine, cached } = setUp(opts);
      await engine.write([MEMBER], []);
      expect(await cached.check(MEMBER)).toBe(true);
      engine.tuples.delete(key(MEMBER));
      expect(await cached.check(MEMBER)).toBe(false);
    }
  });

  it('keeps at most its size, dropping the least recently used', async () => {
    const { engine, cache, cached } = setUp({ maxEntries: 2 });
    const q = (n: number) => ({ user: `user:${n}`, relation: 'member', object: 'organization:7' });
    await engine.write([q(1), q(2), q(3)], []);
    await cached.batchCheck([q(1), q(2)]);
    await cached.check(q(1));
    await cached.check(q(3));
    expect(cache.size).toBe(2);
    engine.tuples.clear();
    expect(await cached.batchCheck([q(1), q(2), q(3)])).toEqual([true, false, true]);
  });
});
