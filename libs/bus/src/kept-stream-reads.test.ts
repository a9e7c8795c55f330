import { LaterBus } from './later-bus';
import { keptReads, wireBytes } from './kept-reads';

// A service's read method answering a stream, as a reader keeps it: the first call passes the messages on as they come
// and keeps them once the stream has ended whole and under its bound; the next call gets the same frozen messages as a
// stream of its own. A bigger answer, a failed one or one the reader stopped reading is not kept, and a notice of a
// subject the method depends on (even one still on its way) means the next request asks again.

const OWNER = 'test.owner.changed';
const UNRELATED = 'test.unrelated.changed';

/** A message of a stream of JSON pieces, as the usage views send them. */
type Chunk = { json: Uint8Array };

/** A service answering a view as a stream of pieces: its pieces, what it was asked, and how a stream may fail. */
function service() {
  const state = { pieces: ['{"rows":[', '1,2', ']}'], failAfter: undefined as number | undefined };
  const asked: string[] = [];
  const getView = (req: { view: string }, opts?: { metadata?: Record<string, string> }): AsyncIterable<Chunk> => {
    // As a generated client's: nothing is asked until the stream is read.
    return (async function* () {
      asked.push(`${req.view} ${opts?.metadata?.caller ?? ''}`);
      const pieces = [...state.pieces];
      for (const [i, piece] of pieces.entries()) {
        if (state.failAfter === i) throw new Error('the database went away');
        await new Promise((resolve) => setImmediate(resolve));
        yield { json: Buffer.from(piece, 'utf8') };
      }
    })();
  };
  const getCount = async (req: { view: string }) => (asked.push(`count ${req.view}`), { n: 1 });
  return { state, asked, getView, getCount };
}

async function setUp(maxBytes = 1_000, available?: () => boolean) {
  const svc = service();
  const { client, readModel } = keptReads(
    svc,
    { getView: { stale: [OWNER], maxBytes }, getCount: { stale: [OWNER] } },
    { name: 'test.streams', ttlMs: 60_000, available },
  );
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { svc, client, bus, stop };
}

/** A stream read whole: its messages and its text. */
async function read(stream: AsyncIterable<Chunk>): Promise<{ messages: Chunk[]; text: string }> {
  const messages: Chunk[] = [];
  for await (const m of stream) messages.push(m);
  return { messages, text: Buffer.concat(messages.map((m) => m.json)).toString('utf8') };
}

describe("a service's kept streams", () => {
  it('passes the first stream on as it comes, then answers the same frozen messages as a fresh stream each time', async () => {
    const { svc, client, stop } = await setUp();
    const first = await read(client.getView({ view: 'a' }));
    expect(first.text).toBe('{"rows":[1,2]}');
    const second = await read(client.getView({ view: 'a' }));
    const third = client.getView({ view: 'a' });
    expect(second.text).toBe('{"rows":[1,2]}');
    expect(svc.asked).toEqual(['a ']);
    // The same messages, frozen, in a stream of their own: two readers at once each read all of them.
    expect(second.messages).toEqual(first.messages);
    expect(second.messages[0]).toBe(first.messages[0]);
    expect(Object.isFrozen(second.messages[0])).toBe(true);
    expect(() => {
      (second.messages[0] as { json: Uint8Array }).json = Buffer.from('x');
    }).toThrow(TypeError);
    const [x, y] = await Promise.all([read(third), read(client.getView({ view: 'a' }))]);
    expect([x.text, y.text]).toEqual(['{"rows":[1,2]}', '{"rows":[1,2]}']);
    // Another request, or another caller, is another answer.
    await read(client.getView({ view: 'b' }));
    await read(client.getView({ view: 'a' }, { metadata: { caller: 'ann' } }));
    await read(client.getView({ view: 'a' }, { metadata: { caller: 'ann' } }));
    expect(svc.asked).toEqual(['a ', 'b ', 'a ann']);
    await stop();
  });

  it('does not keep an answer over its bound, and passes it on whole', async () => {
    // The pieces are 9 + 3 + 2 bytes: a bound of 12 keeps up to the second piece, not the whole answer.
    const { svc, client, stop } = await setUp(12);
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[1,2]}');
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[1,2]}');
    expect(svc.asked).toEqual(['a ', 'a ']);
    // At the bound it is kept.
    svc.state.pieces = ['{"rows":[', '1', ']}'];
    await read(client.getView({ view: 'b' }));
    await read(client.getView({ view: 'b' }));
    expect(svc.asked).toEqual(['a ', 'a ', 'b ']);
    await stop();
  });

  it('does not keep a stream that failed, nor one its reader stopped reading', async () => {
    const { svc, client, stop } = await setUp();
    svc.state.failAfter = 2;
    await expect(read(client.getView({ view: 'a' }))).rejects.toThrow('the database went away');
    svc.state.failAfter = undefined;
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[1,2]}');
    expect(svc.asked).toEqual(['a ', 'a ']);

    for await (const _first of client.getView({ view: 'b' })) break;
    expect((await read(client.getView({ view: 'b' }))).text).toBe('{"rows":[1,2]}');
    expect(svc.asked).toEqual(['a ', 'a ', 'b ', 'b ']);
    await stop();
  });

  it('asks again at once after a notice it depends on, even one still on its way, and not after another', async () => {
    const { svc, client, bus, stop } = await setUp();
    await read(client.getView({ view: 'a' }));
    svc.state.pieces = ['{"rows":[', '3', ']}'];
    await bus.notify(UNRELATED, {});
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[1,2]}');
    await bus.notify(OWNER, {});
    // The notice is still on its way: the next request's fence waits for it.
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[3]}');
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[3]}');
    expect(svc.asked).toEqual(['a ', 'a ']);
    await stop();
  });

  it('does not keep a stream read while a notice came', async () => {
    const { svc, client, bus, stop } = await setUp();
    const reading = client.getView({ view: 'a' })[Symbol.asyncIterator]();
    await reading.next();
    svc.state.pieces = ['{"rows":[', '3', ']}'];
    await bus.notify(OWNER, {});
    await new Promise((resolve) => setImmediate(resolve));
    while (!(await reading.next()).done);
    expect((await read(client.getView({ view: 'a' }))).text).toBe('{"rows":[3]}');
    expect(svc.asked).toEqual(['a ', 'a ']);
    await stop();
  });

  it('serves no kept stream while the service does not answer, and keeps none before it follows a bus', async () => {
    let up = true;
    const { svc, client, stop } = await setUp(1_000, () => up);
    await read(client.getView({ view: 'a' }));
    up = false;
    await read(client.getView({ view: 'a' }));
    up = true;
    await read(client.getView({ view: 'a' }));
    expect(svc.asked).toEqual(['a ', 'a ']);
    await stop();

    const unfollowed = service();
    const { client: plain } = keptReads(
      unfollowed,
      { getView: { stale: [OWNER], maxBytes: 1_000 } },
      { name: 'test.unfollowed-streams', ttlMs: 60_000 },
    );
    await read(plain.getView({ view: 'a' }));
    await read(plain.getView({ view: 'a' }));
    expect(unfollowed.asked).toHaveLength(2);
  });

  it('keeps the unary answers beside the streams, both dropped by a notice', async () => {
    const { svc, client, bus, stop } = await setUp();
    await client.getCount({ view: 'a' });
    await read(client.getView({ view: 'a' }));
    await client.getCount({ view: 'a' });
    await read(client.getView({ view: 'a' }));
    expect(svc.asked).toEqual(['count a', 'a ']);
    await bus.notify(OWNER, {});
    await client.getCount({ view: 'a' });
    await read(client.getView({ view: 'a' }));
    expect(svc.asked).toEqual(['count a', 'a ', 'count a', 'a ']);
    await stop();
  });

  it('sizes a message by its bytes and strings', () => {
    expect(wireBytes({ json: Buffer.from('héllo') })).toBe(6);
    expect(wireBytes({ name: 'héllo', n: 3, rows: [{ ok: true }] })).toBe(6 + 8 + 8);
  });
});
