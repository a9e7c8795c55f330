import type { BusLogger } from './bus';
import { Outage } from './outage';

/** A logger that keeps its lines as "level message". */
function capture() {
  const lines: { line: string; obj: object }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push({ line: `${level} ${msg}`, obj });
    };
  const log: BusLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  return { log, lines };
}

/** A send whose acknowledgement the test gives (or refuses) when it likes. */
function pendingSend() {
  let acknowledge!: () => void;
  let refuse!: (err: Error) => void;
  const sent = new Promise<void>((resolve, reject) => {
    acknowledge = resolve;
    refuse = reject;
  });
  return { send: () => sent, acknowledge, refuse };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Outage: how long a writer waits for its notice', () => {
  afterEach(() => jest.useRealTimers());

  it('resolves once the notice is acknowledged', async () => {
    const { log, lines } = capture();
    const outage = new Outage(log, 50);
    const pending = pendingSend();
    let done = false;
    const notice = outage.notice(pending.send).then(() => (done = true));
    await tick();
    expect(done).toBe(false);
    pending.acknowledge();
    await notice;
    expect(lines).toEqual([]);
  });

  it('answers the writer after its bound while the stream does not acknowledge, says so once, and once when it acknowledges again', async () => {
    const { log, lines } = capture();
    const outage = new Outage(log, 50);
    const stuck = [pendingSend(), pendingSend(), pendingSend()];
    // Three writers at once, none acknowledged: each is answered after the bound (on fake time: exactly then), not
    // after the stream's retries.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let answered = 0;
    const writers = Promise.all(stuck.map((p) => outage.notice(p.send).then(() => answered++)));
    await jest.advanceTimersByTimeAsync(49);
    expect(answered).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(answered).toBe(3);
    await writers;
    jest.useRealTimers();
    expect(lines.map((l) => l.line)).toEqual([
      'warn notices not acknowledged in time by the notice stream; writers are answered without waiting, the notices follow',
    ]);
    // The late ones go on: one is stored after all, one is given up on (logged once, counted).
    stuck[0].acknowledge();
    stuck[1].refuse(new Error('no leader'));
    stuck[2].refuse(new Error('no leader'));
    await tick();
    expect(lines.map((l) => l.line)).toHaveLength(2);
    expect(lines[1].line).toMatch(/^warn a deferred notice could not be stored/);
    // The next notice acknowledged in time ends it.
    await outage.notice(async () => {});
    expect(lines[2]).toEqual({
      line: 'info notices acknowledged in time again',
      obj: { slowMs: expect.any(Number), lateNotices: 3, droppedNotices: 2 },
    });
  });

  it('answers at once while the connection is down, and counts the notice as deferred', async () => {
    const { log, lines } = capture();
    const outage = new Outage(log, 60_000);
    outage.begin('127.0.0.1:4222');
    // At once: with no time passing (fake timers), not after the minute's bound.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let answered = false;
    const writer = outage.notice(pendingSend().send).then(() => (answered = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(answered).toBe(true);
    await writer;
    jest.useRealTimers();
    outage.end('127.0.0.1:4222');
    expect(lines.map((l) => l.line)).toEqual(['warn NATS connection lost; reconnecting', 'info NATS connection restored']);
    expect(lines[1].obj).toEqual({ server: '127.0.0.1:4222', disconnectedMs: expect.any(Number), deferredNotices: 1 });
  });

  it('stops waiting when the connection is lost while a writer waits', async () => {
    const { log } = capture();
    const outage = new Outage(log, 60_000);
    const notice = outage.notice(pendingSend().send);
    await tick();
    outage.begin('127.0.0.1:4222');
    await notice;
  });

  it('says nothing of notices given up on because the bus is closing', async () => {
    const { log, lines } = capture();
    const outage = new Outage(log, 10);
    const stuck = pendingSend();
    await outage.notice(stuck.send);
    outage.close();
    stuck.refuse(new Error('closed'));
    await tick();
    expect(lines.map((l) => l.line)).toEqual([
      'warn notices not acknowledged in time by the notice stream; writers are answered without waiting, the notices follow',
    ]);
  });
});
