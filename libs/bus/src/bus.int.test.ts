import { randomBytes } from 'node:crypto';
import { testNatsUrl } from '@platform/testing';
import { BusTimeoutError, InProcessBus, type Bus, type BusLogger } from './index';
import { NatsBus } from './nats-bus';

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

describe('NATS bus in an installation namespace', () => {
  busContract(async () => NatsBus.create(await testNatsUrl(), 'bus-test-ns', { namespace: `bus-test-${randomBytes(3).toString('hex')}` }));
});

describe('two installations on one NATS server', () => {
  const id = randomBytes(3).toString('hex');
  const lines: { level: string; msg: string; obj: object }[] = [];
  const log: BusLogger = {
    info: (obj, msg) => lines.push({ level: 'info', msg, obj }),
    warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }),
    error: (obj, msg) => lines.push({ level: 'error', msg, obj }),
  };
  let first: NatsBus;
  let firstAgain: NatsBus;
  let second: NatsBus;
  beforeAll(async () => {
    const url = await testNatsUrl();
    first = await NatsBus.create(url, 'first', { namespace: `first-${id}`, installation: `first-${id}` });
    firstAgain = await NatsBus.create(url, 'first-again', { namespace: `first-${id}`, installation: `first-${id}` });
    second = await NatsBus.create(url, 'second', { namespace: `second-${id}`, installation: `second-${id}`, log });
  });
  afterAll(async () => {
    await Promise.all([first?.close(), firstAgain?.close(), second?.close()]);
  });

  it('keep their durable messages apart, though their subjects and consumers have the same names', async () => {
    const heard = { first: [] as unknown[], second: [] as unknown[] };
    const subject = 'agent.v1.6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e.usage-sample';
    const stops = [
      await first.consume({ durable: 'billing-dashboard-usage-sample', subject: 'agent.v1.*.usage-sample' }, async (s, p) => {
        expect(s).toBe(subject);
        heard.first.push(p);
      }),
      await second.consume({ durable: 'billing-dashboard-usage-sample', subject: 'agent.v1.*.usage-sample' }, async (_s, p) => {
        heard.second.push(p);
      }),
    ];
    try {
      await first.publish(subject, { from: 'first', n: 1 });
      await second.publish(subject, { from: 'second', n: 1 });
      await first.publish(subject, { from: 'first', n: 2 });
      await waitFor(() => heard.first.length === 2 && heard.second.length === 1);
      expect(heard).toEqual({
        first: [
          { from: 'first', n: 1 },
          { from: 'first', n: 2 },
        ],
        second: [{ from: 'second', n: 1 }],
      });
    } finally {
      for (const stop of stops) await stop();
    }
  });

  it('keep their notices and requests apart, and one installation hears its own replicas', async () => {
    const heard = { firstAgain: [] as unknown[], second: [] as unknown[] };
    await firstAgain.listen(`identity.${id}.>`, (_s, p) => heard.firstAgain.push(p));
    await second.listen(`identity.${id}.>`, (_s, p) => heard.second.push(p));
    await first.notify(`identity.${id}.changed`, { n: 1 });
    expect(await firstAgain.caughtUp()).toBe(true);
    expect(await second.caughtUp()).toBe(true);
    expect(heard).toEqual({ firstAgain: [{ n: 1 }], second: [] });

    const stop = await second.reply(`agent-rpc.v1.${id}.resource-history`, async () => 'second answers');
    try {
      await expect(first.request(`agent-rpc.v1.${id}.resource-history`, {}, 200)).rejects.toBeInstanceOf(BusTimeoutError);
      await expect(second.request(`agent-rpc.v1.${id}.resource-history`, {})).resolves.toBe('second answers');
    } finally {
      await stop();
    }
  });

  it('says at start that the server carries another installation, and which', async () => {
    await waitFor(() => lines.some((l) => l.level === 'warn'));
    expect(lines).toContainEqual({
      level: 'warn',
      msg: "this NATS server also carries another installation's messages; this one uses its own namespace and never reads theirs",
      obj: expect.objectContaining({ namespace: `second-${id}`, otherNamespaces: expect.arrayContaining([`first-${id}`]) }),
    });
  });

  it('says loudly at start when another installation already uses its namespace', async () => {
    const clash: string[] = [];
    const loud: BusLogger = { info: () => {}, warn: () => {}, error: (_o, msg) => clash.push(msg) };
    const other = await NatsBus.create(await testNatsUrl(), 'clash', { namespace: `first-${id}`, installation: `third-${id}`, log: loud });
    try {
      await waitFor(() => clash.length > 0);
      expect(clash).toEqual([
        "another installation uses this namespace on this NATS server: the two take each other's messages; give one of them another BUS_NAMESPACE",
      ]);
    } finally {
      await other.close();
    }
  });

  it('says nothing of a clash when the same installation starts again in another process, as a restore of it does', async () => {
    const said: { level: string; msg: string }[] = [];
    const log: BusLogger = {
      info: () => {},
      warn: (_o, msg) => said.push({ level: 'warn', msg }),
      error: (_o, msg) => said.push({ level: 'error', msg }),
    };
    // Another process: none of this module's memory of what it has looked at on the server.
    let Fresh!: typeof NatsBus;
    await jest.isolateModulesAsync(async () => {
      ({ NatsBus: Fresh } = await import('./nats-bus'));
    });
    const restored = await Fresh.create(await testNatsUrl(), 'restored', { namespace: `first-${id}`, installation: `first-${id}`, log });
    try {
      // The other installations' warning follows the claim: once it is said, the claim has been checked.
      await waitFor(() => said.some((l) => l.level === 'warn'));
      expect(said.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await restored.close();
    }
  });
});
