import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
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
  let deliver: ((err: Error | null, m: unknown) => void) | undefined;
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
      deliver = o.callback;
      return { unsubscribe: () => {} };
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
  const notice = (subject: string, seq: number, payload: unknown) =>
    deliver?.(null, { subject, headers: { get: () => String(seq) }, data: new TextEncoder().encode(JSON.stringify(payload)) });
  // Heartbeats and notices are stored and acknowledged.
  const js = {
    publish: async (subject: string, _data: unknown, o?: { headers?: { get(name: string): string } }) => {
      state.stored.push({ subject, wasSilent: Boolean(o?.headers?.get('Platform-Was-Silent')) });
      return {};
    },
  } as unknown as JetStreamClient;
  return { nc, jsm, js, state, notice };
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
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, 'site-a');
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
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, 'site-a');
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
    const stream = new NoticeStream(nats.nc, nats.jsm, nats.js, quiet, () => {}, undefined, 'gateway', false);
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
