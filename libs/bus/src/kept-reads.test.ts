import { LaterBus } from './later-bus';
import { keptReads } from './kept-reads';
import { ORGS_CHANGED } from './notices';

// A service's read methods as a reader keeps them: one call for a request asked before (by the same caller), the very
// next request after a notice of a subject the method depends on asks again (even while the notice is on its way), a
// notice of another subject leaves it kept, and a kept answer cannot be changed by the reader that got it.

const OWNER = 'test.owner.changed';
const OTHER = 'test.other.changed';
const UNRELATED = 'test.unrelated.changed';

/** A service as its readers see it: its rows, and what it was asked. */
function service() {
  const rows = new Map<number, { id: number; name: string; tags: string[] }>();
  const asked: string[] = [];
  return {
    rows,
    asked,
    getThing: async (req: { id: number }, opts?: { metadata?: Record<string, string> }) => {
      asked.push(`get ${req.id} ${opts?.metadata?.caller ?? ''}`);
      const row = rows.get(req.id);
      return row ? { ...row, tags: [...row.tags] } : { id: 0, name: '', tags: [] };
    },
    setThing: async (req: { id: number; name: string }) => {
      asked.push(`set ${req.id}`);
      rows.set(req.id, { id: req.id, name: req.name, tags: [] });
      return {};
    },
    close: () => {},
  };
}

async function setUp(ttlMs = 60_000) {
  const svc = service();
  const { client, readModel } = keptReads(svc, { getThing: { stale: [OWNER, OTHER] } }, { name: 'test.things', ttlMs });
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { svc, client, bus, stop };
}

describe("a service's kept reads", () => {
  it('drops an answer that says what it is about only for a notice naming that, or naming everything', async () => {
    const svc = service();
    const { client, readModel } = keptReads(
      svc,
      // Each thing is an organization's: organization notices name the organizations they changed.
      { getThing: { stale: [ORGS_CHANGED, OTHER], about: { [ORGS_CHANGED]: (req: { id: number }) => [`org:${req.id}`] } } },
      { name: 'test.about', ttlMs: 60_000 },
    );
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    await client.getThing({ id: 1 });
    await client.getThing({ id: 2 });
    await bus.notify(ORGS_CHANGED, { orgIds: [2] });
    await client.getThing({ id: 1 });
    await client.getThing({ id: 2 });
    expect(svc.asked).toEqual(['get 1 ', 'get 2 ', 'get 2 ']);
    // Everything: a notice that names nothing (`all`), or one of a subject the answers do not say they are about.
    await bus.notify(ORGS_CHANGED, { orgIds: [], all: true });
    await client.getThing({ id: 1 });
    await bus.notify(OTHER, {});
    await client.getThing({ id: 1 });
    expect(svc.asked).toEqual(['get 1 ', 'get 2 ', 'get 2 ', 'get 1 ', 'get 1 ']);
    await stop();
  });

  it('answers a read asked again from what it kept, and asks again at once after a notice it depends on', async () => {
    const { svc, client, bus, stop } = await setUp();
    svc.rows.set(1, { id: 1, name: 'one', tags: ['a'] });
    expect((await client.getThing({ id: 1 })).name).toBe('one');
    expect((await client.getThing({ id: 1 })).name).toBe('one');
    expect(svc.asked).toEqual(['get 1 ']);

    svc.rows.set(1, { id: 1, name: 'uno', tags: [] });
    await bus.notify(OWNER, {});
    // The notice is still on its way: the next request's fence waits for it.
    expect((await client.getThing({ id: 1 })).name).toBe('uno');
    await bus.notify(OTHER, {});
    await client.getThing({ id: 1 });
    expect(svc.asked).toHaveLength(3);

    await bus.notify(UNRELATED, {});
    await client.getThing({ id: 1 });
    expect(svc.asked).toHaveLength(3);
    await stop();
  });

  it('keeps answers apart by request and by who asks, and leaves the writes alone', async () => {
    const { svc, client, stop } = await setUp();
    await client.getThing({ id: 1 }, { metadata: { caller: 'ann' } });
    await client.getThing({ id: 1 }, { metadata: { caller: 'bob' } });
    await client.getThing({ id: 2 }, { metadata: { caller: 'ann' } });
    await client.getThing({ id: 1 }, { metadata: { caller: 'ann' } });
    await client.setThing({ id: 1, name: 'x' });
    await client.setThing({ id: 1, name: 'x' });
    expect(svc.asked).toEqual(['get 1 ann', 'get 1 bob', 'get 2 ann', 'set 1', 'set 1']);
    await stop();
  });

  it('refuses to let a reader change a kept answer', async () => {
    const { svc, client, stop } = await setUp();
    svc.rows.set(1, { id: 1, name: 'one', tags: ['a'] });
    const answer = await client.getThing({ id: 1 });
    expect(() => answer.tags.push('b')).toThrow(TypeError);
    expect(() => {
      (answer as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect((await client.getThing({ id: 1 })).tags).toEqual(['a']);
    await stop();
  });

  it('keeps nothing before it follows a bus', async () => {
    const svc = service();
    const { client } = keptReads(svc, { getThing: { stale: [OWNER] } }, { name: 'test.unfollowed', ttlMs: 60_000 });
    await client.getThing({ id: 1 });
    await client.getThing({ id: 1 });
    expect(svc.asked).toHaveLength(2);
  });

  it('serves nothing kept while the service does not answer, so the call fails as with nothing kept', async () => {
    const svc = service();
    let up = true;
    const { client, readModel } = keptReads(
      svc,
      { getThing: { stale: [OWNER] } },
      { name: 'test.down', ttlMs: 60_000, available: () => up },
    );
    const stop = await readModel.follow(new LaterBus());
    await client.getThing({ id: 1 });
    await client.getThing({ id: 1 });
    up = false;
    await client.getThing({ id: 1 });
    expect(svc.asked).toEqual(['get 1 ', 'get 1 ']);
    await stop();
  });
});
