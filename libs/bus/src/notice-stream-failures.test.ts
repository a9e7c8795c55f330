import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { metricsText } from '@platform/telemetry';
import type { BusLogger } from './bus';
import { NoticeStream } from './notice-stream';

const quiet: BusLogger = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * A JetStream API that describes a stream that is there until `fail` is set, then fails with `fail` (JetStreamManager's
 * `info` as the start asks it, STREAM.INFO requests as fences ask it); `missing` answers STREAM.INFO as JetStream does
 * for a stream that does not exist.
 */
function fakeNats(opts: { namespace?: string } = {}) {
  const ordered = opts.namespace ? `${opts.namespace}.notices-ordered.>` : 'notices-ordered.>';
  const state = {
    fail: undefined as Error | undefined,
    missing: false,
    asked: [] as string[],
    subscribed: [] as string[],
    /** What was stored on the stream: each message's subject, and whether it said its sender had been silent. */
    stored: [] as { subject: string; wasSilent: boolean }[],
  };
  // Each subscription while it lasts; a message goes to those whose subject (a prefix before '>', or exact) it matches.
  const subscriptions = new Set<{ subject: string; callback: (err: Error | null, m: unknown) => void }>();
  const matches = (filter: string, subject: string) =>
    filter.endsWith('>') ? subject.startsWith(filter.slice(0, -1)) : filter === subject;
  const described = { created: 'then', config: { republish: { dest: ordered } }, state: { last_seq: 0 }, cluster: {} };
  const nc = {
    request: async (subject: string) => {
      state.asked.push(subject);
      if (state.fail) throw state.fail;
      const answer = state.missing ? { error: { code: 404, err_code: 10059, description: 'stream not found' } } : described;
      return { data: new TextEncoder().encode(JSON.stringify(answer)) };
    },
    info: {},
    subscribe: (subject: string, o: { callback: (err: Error | null, m: unknown) => void }) => {
      state.subscribed.push(subject);
      const subscription = { subject, callback: o.callback };
      subscriptions.add(subscription);
      return { unsubscribe: () => subscriptions.delete(subscription) };
    },
    flush: async () => {},
    isClosed: () => false,
    publish: () => {},
  } as unknown as NatsConnection;
  const jsm = {
    streams: {
      info: async (name: string) => {
        state.asked.push(name);
        if (state.fail) throw state.fail;
        return described;
      },
    },
  } as unknown as JetStreamManager;
  /** A message as the stream's leader republishes it: its sequence, and the process that stored it when `from` is given. */
  const notice = (subject: string, seq: number, payload: unknown, from?: string) => {
    const headers = { get: (name: string) => (name === 'Nats-Sequence' ? String(seq) : name === 'Platform-Process' ? from : undefined) };
    const m = { subject, headers, data: new TextEncoder().encode(JSON.stringify(payload)) };
    for (const sub of [...subscriptions]) if (matches(sub.subject, subject)) sub.callback(null, m);
  };
  // Heartbeats and notices are stored and acknowledged.
  const js = {
    publish: async (subject: string, _data: unknown, o?: { headers?: { get(name: string): string } }) => {
      state.stored.push({ subject, wasSilent: Boolean(o?.headers?.get('Platform-Was-Silent')) });
      return {};
    },
  } as unknown as JetStreamClient;
  /** The subjects subscribed to now. */
  const following = () => [...subscriptions].map((sub) => sub.subject);
  /** The stream's last sequence, as the questions of fences and starts are answered. */
  const storedUpTo = (seq: number) => (described.state.last_seq = seq);
  return { nc, jsm, js, state, notice, following, storedUpTo };
}

describe('NoticeStream when NATS fails a question', () => {
  // Closed after each test, so that no heartbeat of theirs outlives it.
  const streams: NoticeStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) await stream.close();
  });
  it('answers a fence false, never a rejection, when the stream API fails', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {});
    streams.push(stream);
    await stream.listen('identity.>', () => {});
    nats.state.fail = Object.assign(new Error('TIMEOUT'), { name: 'NatsError', code: 'TIMEOUT' });
    await expect(stream.caughtUp()).resolves.toBe(false);
  });

  it('passes a fence once the stream is asked, and asks the stream of its own namespace', async () => {
    const nats = fakeNats({ namespace: 'site-a' });
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { namespace: 'site-a' });
    streams.push(stream);
    await stream.listen('identity.>', () => {});
    await expect(stream.caughtUp()).resolves.toBe(true);
    expect(nats.state.asked).toContain('$JS.API.STREAM.INFO.SITE_A_NOTICES');
  });

  it('answers a fence false when the stream is gone and could not be found again', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {});
    streams.push(stream);
    await stream.listen('identity.>', () => {});
    nats.state.missing = true;
    await expect(stream.caughtUp()).resolves.toBe(false);
    // Looked for again (and made, were it not there) before the fence gave up: asked twice as a fence, once to make it.
    expect(nats.state.asked.filter((s) => s.startsWith('$JS.API.STREAM.INFO.'))).toHaveLength(2);
  });

  it('hands a notice to every listener when one of them throws, and logs the failure', async () => {
    const nats = fakeNats();
    const errors: string[] = [];
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, { ...quiet, error: (_o, msg) => errors.push(msg) }, () => {});
    streams.push(stream);
    const heard: string[] = [];
    await stream.listen('identity.>', () => {
      throw new Error('listener bug');
    });
    await stream.listen('identity.>', (subject) => heard.push(subject));
    expect(() => nats.notice('notices-ordered.identity.orgs.changed', 1, {})).not.toThrow();
    expect(heard).toEqual(['identity.orgs.changed']);
    expect(errors).toEqual(['a notice listener failed']);
  });

  it("uses the installation's own stream and subjects in a namespace", async () => {
    const nats = fakeNats({ namespace: 'site-a' });
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { namespace: 'site-a' });
    streams.push(stream);
    const heard: string[] = [];
    await stream.listen('identity.>', (subject) => heard.push(subject));
    expect(nats.state.asked).toContain('SITE_A_NOTICES');
    expect(nats.state.subscribed).toEqual(['site-a.notices-ordered.>']);
    nats.notice('site-a.notices-ordered.identity.orgs.changed', 1, {});
    expect(heard).toEqual(['identity.orgs.changed']);
  });
});

describe('NoticeStream heartbeats', () => {
  // The heartbeat's interval and the silence's measure (performance.now) both follow jest's clock.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const heartbeats = (stored: { subject: string }[]) => stored.filter((m) => m.subject === 'notices._alive').length;

  it('beats every second from the start, as every process that may send notices does', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {});
    await stream.listen('identity.>', () => {});
    await jest.advanceTimersByTimeAsync(5_000);
    expect(heartbeats(nats.state.stored)).toBeGreaterThanOrEqual(4);
    await stream.close();
  });

  it('sends nothing for a process that sends no notices, until its first notice, which tells the readers to start over', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { name: 'gateway', beatsFromStart: false });
    await stream.listen('identity.>', () => {});
    await jest.advanceTimersByTimeAsync(5_000);
    expect(nats.state.stored).toEqual([]);

    await stream.publish('identity.orgs.changed', { orgIds: [1] });
    expect(nats.state.stored).toEqual([{ subject: 'notices.identity.orgs.changed', wasSilent: true }]);
    // From then on it is a process the others wait on, and it beats.
    await jest.advanceTimersByTimeAsync(3_000);
    expect(heartbeats(nats.state.stored)).toBeGreaterThanOrEqual(2);
    await stream.close();
  });
});

describe('NoticeStream rests while nobody asks for a kept answer', () => {
  /** `bus_notices_resting` as /metrics shows it: how many of the process's notice streams rest. */
  const restingMetric = async () => Number(/^bus_notices_resting (\d+)$/m.exec((await metricsText()).body)?.[1]);
  // The rest's measure (performance.now) and the heartbeat's interval, which looks at it, both follow jest's clock.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('stops receiving notices, heartbeats still, once no fence was asked for a while; the next fence follows them again and starts over', async () => {
    const nats = fakeNats();
    const startedOver: string[] = [];
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => startedOver.push('gap'), { restAfterMs: 10_000 });
    const heard: string[] = [];
    await stream.listen('identity.>', (subject) => heard.push(subject));
    await expect(stream.caughtUp()).resolves.toBe(true);
    nats.notice('notices-ordered.identity.orgs.changed', 1, {});
    expect(heard).toEqual(['identity.orgs.changed']);

    // Asked again within the rest's time: it still follows everything.
    await jest.advanceTimersByTimeAsync(8_000);
    nats.storedUpTo(1);
    await expect(stream.caughtUp()).resolves.toBe(true);
    await jest.advanceTimersByTimeAsync(8_000);
    expect(nats.following()).toEqual(['notices-ordered.>']);
    expect(stream.isResting).toBe(false);

    // Nothing asked for more than the rest's time: heartbeats alone, and the process says so in its metrics.
    await jest.advanceTimersByTimeAsync(3_000);
    expect(nats.following()).toEqual(['notices-ordered._alive']);
    expect(stream.isResting).toBe(true);
    expect(await restingMetric()).toBe(1);
    nats.notice('notices-ordered.identity.orgs.changed', 2, {});
    expect(heard).toEqual(['identity.orgs.changed']);
    expect(startedOver).toEqual([]);

    // The next fence: every notice followed again from the stream's last one, the listeners told to start over first,
    // and the fence passes; notices after it are handed over in order, with no gap counted.
    nats.storedUpTo(2);
    await expect(stream.caughtUp()).resolves.toBe(true);
    expect(nats.following()).toEqual(['notices-ordered.>']);
    expect(stream.isResting).toBe(false);
    expect(await restingMetric()).toBe(0);
    expect(startedOver).toEqual(['gap']);
    nats.notice('notices-ordered.identity.orgs.changed', 3, {});
    expect(heard).toEqual(['identity.orgs.changed', 'identity.orgs.changed']);
    expect(startedOver).toEqual(['gap']);
    await stream.close();
  });

  it('knows at the wake who fell silent while it rested, and trusts nothing until that process is heard again', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { restAfterMs: 2_000 });
    await stream.listen('identity.>', () => {});
    // A writer heard, then the reader rests: the writer's heartbeats still reach it, then stop (its node cut off).
    nats.notice('notices-ordered._alive', 1, {}, 'orgs-teams/1');
    await jest.advanceTimersByTimeAsync(3_000);
    expect(nats.following()).toEqual(['notices-ordered._alive']);
    for (let i = 0; i < 3; i++) {
      nats.notice('notices-ordered._alive', 2 + i, {}, 'orgs-teams/1');
      await jest.advanceTimersByTimeAsync(1_000);
    }
    await jest.advanceTimersByTimeAsync(3_500);
    // Silent for 3.5 s as the rest heard it: the wake's fence does not pass.
    nats.storedUpTo(4);
    await expect(stream.caughtUp()).resolves.toBe(false);
    // Heard again: it passes.
    nats.notice('notices-ordered._alive', 5, {}, 'orgs-teams/1');
    nats.storedUpTo(5);
    await expect(stream.caughtUp()).resolves.toBe(true);
    await stream.close();
  });

  it('rests sooner once many notices passed unasked, not before its second, and a fence counts them anew', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { restAfterMs: 30_000, restAfterNotices: 5 });
    const heard: number[] = [];
    await stream.listen('identity.>', (_subject, payload) => heard.push((payload as { n: number }).n));
    await expect(stream.caughtUp()).resolves.toBe(true);
    // Four notices and a fence: the fence starts the count again, so four more do not reach five.
    for (let n = 1; n <= 4; n++) nats.notice('notices-ordered.identity.orgs.changed', n, { n });
    nats.storedUpTo(4);
    await expect(stream.caughtUp()).resolves.toBe(true);
    for (let n = 5; n <= 8; n++) nats.notice('notices-ordered.identity.orgs.changed', n, { n });
    await jest.advanceTimersByTimeAsync(2_000);
    expect(stream.isResting).toBe(false);
    // The fifth since the fence, past the least time followed: at the next heartbeat it rests, long before 30 s.
    nats.notice('notices-ordered.identity.orgs.changed', 9, { n: 9 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(stream.isResting).toBe(true);
    expect(nats.following()).toEqual(['notices-ordered._alive']);
    nats.notice('notices-ordered.identity.orgs.changed', 10, { n: 10 });
    expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The next fence follows every notice again.
    nats.storedUpTo(10);
    await expect(stream.caughtUp()).resolves.toBe(true);
    nats.notice('notices-ordered.identity.orgs.changed', 11, { n: 11 });
    expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 11]);
    await stream.close();
  });

  it('does not rest sooner within its least time, however many notices pass', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { restAfterMs: 30_000, restAfterNotices: 5 });
    await stream.listen('identity.>', () => {});
    await expect(stream.caughtUp()).resolves.toBe(true);
    await jest.advanceTimersByTimeAsync(500);
    for (let n = 1; n <= 50; n++) nats.notice('notices-ordered.identity.orgs.changed', n, {});
    nats.storedUpTo(50);
    await expect(stream.caughtUp()).resolves.toBe(true);
    await jest.advanceTimersByTimeAsync(900);
    expect(stream.isResting).toBe(false);
    await stream.close();
  });

  it('does not rest while a fence waits for its notices', async () => {
    const nats = fakeNats();
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, { restAfterMs: 1_000 });
    await stream.listen('identity.>', () => {});
    nats.storedUpTo(1);
    // The stream has stored a notice this process has not heard yet: the fence waits (at most its second).
    const fence = stream.caughtUp();
    await jest.advanceTimersByTimeAsync(900);
    nats.notice('notices-ordered.identity.orgs.changed', 1, {});
    await expect(fence).resolves.toBe(true);
    expect(nats.following()).toEqual(['notices-ordered.>']);
    await stream.close();
  });
});
