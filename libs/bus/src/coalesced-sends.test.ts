import { CoalescedSends, type Merge } from './coalesced-sends';

// Notices sent while one of their subject is on its way go together in the next message: what a stream stores, and
// when each sender hears back.

/** A store whose messages are acknowledged (or refused) by hand, in the order they were sent. */
class Store {
  readonly sent: { subject: string; payload: number[]; ack: () => void; fail: (err: Error) => void }[] = [];

  readonly store = (subject: string, payload: number[]) =>
    new Promise<void>((ack, fail) => this.sent.push({ subject, payload, ack: () => ack(), fail }));
}

const concat: Merge<number[]> = (a, b) => [...a, ...b];
/** Merges up to three numbers a message. */
const atMostThree: Merge<number[]> = (a, b) => (a.length + b.length > 3 ? undefined : [...a, ...b]);
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Each send's outcome, as the sender sees it. */
function outcomes(sends: Promise<void>[]): string[] {
  const seen = sends.map(() => 'waiting');
  sends.forEach((s, i) =>
    s.then(
      () => (seen[i] = 'stored'),
      (err: Error) => (seen[i] = `failed: ${err.message}`),
    ),
  );
  return seen;
}

describe('sends coalesced by subject', () => {
  it('sends a lone notice at once, and those sent while it is on its way as one message once it is stored', async () => {
    const db = new Store();
    const sends = new CoalescedSends(db.store, () => concat);
    const seen = outcomes([sends.send('s', [1]), sends.send('s', [2]), sends.send('s', [3])]);
    await settle();
    expect(db.sent.map((m) => m.payload)).toEqual([[1]]);

    db.sent[0].ack();
    await settle();
    expect(seen).toEqual(['stored', 'waiting', 'waiting']);
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3]]);

    const later = outcomes([sends.send('s', [4])]);
    db.sent[1].ack();
    await settle();
    expect(seen).toEqual(['stored', 'stored', 'stored']);
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3], [4]]);
    db.sent[2].ack();
    await settle();
    expect(later).toEqual(['stored']);

    // Nothing on its way any more: the next one goes at once again.
    void sends.send('s', [5]);
    await settle();
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3], [4], [5]]);
  });

  it('keeps subjects apart, and sends a subject without a merge as it comes', async () => {
    const db = new Store();
    const sends = new CoalescedSends(db.store, (subject) => (subject === 'plain' ? undefined : concat));
    for (const [subject, n] of [
      ['a', 1],
      ['b', 2],
      ['a', 3],
      ['plain', 4],
      ['plain', 5],
      ['b', 6],
    ] as const)
      void sends.send(subject, [n]);
    await settle();
    expect(db.sent.map((m) => [m.subject, m.payload])).toEqual([
      ['a', [1]],
      ['b', [2]],
      ['plain', [4]],
      ['plain', [5]],
    ]);
    for (const m of [...db.sent]) m.ack();
    await settle();
    expect(db.sent.slice(4).map((m) => [m.subject, m.payload])).toEqual([
      ['a', [3]],
      ['b', [6]],
    ]);
  });

  it('fails every send a refused message carried, and goes on with the next', async () => {
    const db = new Store();
    const sends = new CoalescedSends(db.store, () => concat);
    const seen = outcomes([sends.send('s', [1]), sends.send('s', [2]), sends.send('s', [3])]);
    await settle();
    db.sent[0].fail(new Error('no leader'));
    await settle();
    expect(seen).toEqual(['failed: no leader', 'waiting', 'waiting']);
    db.sent[1].fail(new Error('timed out'));
    await settle();
    expect(seen).toEqual(['failed: no leader', 'failed: timed out', 'failed: timed out']);

    const after = outcomes([sends.send('s', [4])]);
    await settle();
    db.sent[2].ack();
    await settle();
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3], [4]]);
    expect(after).toEqual(['stored']);
  });

  it('sends apart, one after another, what a merge refuses to put together', async () => {
    const db = new Store();
    const sends = new CoalescedSends(db.store, () => atMostThree);
    const seen = outcomes([1, 2, 3, 4, 5, 6].map((n) => sends.send('s', [n])));
    await settle();
    db.sent[0].ack();
    await settle();
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3, 4]]);
    db.sent[1].ack();
    await settle();
    expect(seen).toEqual(['stored', 'stored', 'stored', 'stored', 'waiting', 'waiting']);
    expect(db.sent.map((m) => m.payload)).toEqual([[1], [2, 3, 4], [5, 6]]);
  });
});

describe('sends that linger', () => {
  afterEach(() => jest.useRealTimers());

  it('waits lingerMs before the first message, so that what is sent meanwhile goes with it', async () => {
    jest.useFakeTimers();
    const db = new Store();
    const sends = new CoalescedSends(db.store, () => concat, { lingerMs: 25 });
    const seen = outcomes([sends.send('s', [1]), sends.send('s', [2])]);
    await jest.advanceTimersByTimeAsync(24);
    expect(db.sent).toEqual([]);
    void sends.send('s', [3]);
    await jest.advanceTimersByTimeAsync(1);
    expect(db.sent.map((m) => m.payload)).toEqual([[1, 2, 3]]);

    // While it is on its way the next ones wait for it, not for a linger of their own.
    void sends.send('s', [4]);
    db.sent[0].ack();
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toEqual(['stored', 'stored']);
    expect(db.sent.map((m) => m.payload)).toEqual([[1, 2, 3], [4]]);
  });

  it('sends what lingers at once on flush, and resolves once every message is stored or failed', async () => {
    jest.useFakeTimers();
    const db = new Store();
    const sends = new CoalescedSends(db.store, () => atMostThree, { lingerMs: 1_000 });
    const seen = outcomes([1, 2, 3, 4].map((n) => sends.send('s', [n])));
    const other = outcomes([sends.send('t', [9])]);
    let flushed = false;
    void sends.flush().then(() => (flushed = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(db.sent.map((m) => [m.subject, m.payload])).toEqual([
      ['s', [1, 2, 3]],
      ['t', [9]],
    ]);
    db.sent[0].ack();
    db.sent[1].fail(new Error('down'));
    await jest.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(false);
    expect(db.sent.map((m) => m.payload)).toEqual([[1, 2, 3], [9], [4]]);
    db.sent[2].ack();
    await jest.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(true);
    expect(seen).toEqual(['stored', 'stored', 'stored', 'stored']);
    expect(other).toEqual(['failed: down']);
    await expect(sends.flush()).resolves.toBeUndefined();
  });
});
