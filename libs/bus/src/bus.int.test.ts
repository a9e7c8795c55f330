import { randomBytes } from 'node:crypto';
import { testNatsUrl } from '@platform/testing';
import { BusTimeoutError, InProcessBus, NatsBus, type Bus } from './index';

/** The contract both buses keep; the same assertions run on NATS and on the in-process bus. */
function busContract(open: () => Promise<Bus>) {
  let bus: Bus;
  const id = randomBytes(4).toString('hex');
  beforeAll(async () => {
    bus = await open();
  });
  afterAll(() => bus?.close());

  it('answers a request with the reply of the subscribed handler', async () => {
    const stop = await bus.reply(`clusters.${id}.resources`, async (p) => ({ echoed: p }));
    await expect(bus.request(`clusters.${id}.resources`, { kind: 'Pod' })).resolves.toEqual({ echoed: { kind: 'Pod' } });
    await stop();
  });

  it('fails a request nobody answers', async () => {
    await expect(bus.request(`clusters.${id}.nobody`, {}, 200)).rejects.toBeInstanceOf(BusTimeoutError);
  });

  it('delivers durable messages in order and redelivers after a failed handler', async () => {
    const seen: unknown[] = [];
    let failures = 0;
    const done = new Promise<void>((resolve) => {
      void bus
        .consume({ durable: `test-${id}`, subject: `billing.${id}.>` }, async (_s, payload) => {
          if ((payload as { n: number }).n === 2 && failures === 0) {
            failures += 1;
            throw new Error('transient');
          }
          seen.push(payload);
          if (seen.length === 3) resolve();
        })
        .then((stop) => done.then(stop));
    });
    for (const n of [1, 2, 3]) await bus.publish(`billing.${id}.license`, { n });
    await done;
    expect(failures).toBe(1);
    expect(seen.map((p) => (p as { n: number }).n).sort()).toEqual([1, 2, 3]);
  });

  it('hands messages over in batches of at most maxBatch, and redelivers only those a batch did not finish', async () => {
    const batches: number[][] = [];
    let failedOnce = false;
    const applied = new Set<number>();
    const stop = await bus.consumeBatches({ durable: `batch-${id}`, subject: `billing.${id}.batch`, maxBatch: 5 }, async (messages) => {
      const ns = messages.map((m) => (m.payload as { n: number }).n);
      batches.push(ns);
      // A slow handler: what arrives meanwhile makes the next batch.
      await new Promise((r) => setTimeout(r, 50));
      return ns.map((n) => {
        if (n === 7 && !failedOnce) {
          failedOnce = true;
          return false;
        }
        applied.add(n);
        return true;
      });
    });
    for (let n = 1; n <= 12; n++) await bus.publish(`billing.${id}.batch`, { n });
    await waitFor(() => applied.size === 12);
    await stop();
    expect(batches.every((b) => b.length >= 1 && b.length <= 5)).toBe(true);
    expect(batches.some((b) => b.length > 1)).toBe(true);
    // 7 came twice (once refused), every other message once.
    expect(batches.flat().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12]);
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('NATS bus (JetStream)', () => {
  busContract(async () => NatsBus.create(await testNatsUrl(), 'bus-test'));
});

describe('in-process bus', () => {
  busContract(async () => new InProcessBus());
});
