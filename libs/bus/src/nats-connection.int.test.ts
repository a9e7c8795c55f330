import { eventually, freePort, startPrivateNats, type PrivateNats } from '@platform/testing';
import { BusConnectError, InProcessBus, type BusHealth, type BusLogger } from './index';
import { NatsBus } from './nats-bus';

/** A logger that keeps its lines. */
function capture() {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push({ level, msg, obj });
    };
  const log: BusLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  return { log, lines, text: () => JSON.stringify(lines) };
}

describe('NATS connection loss after start', () => {
  let nats: PrivateNats;
  beforeAll(async () => {
    // A server of this test's own, since the shared one must not be stopped.
    nats = await startPrivateNats();
  });
  afterAll(() => nats?.dispose());

  it('reports the loss, logs it without credentials, retries, and reports the reconnect', async () => {
    const { log, lines, text } = capture();
    const url = `nats://tester:s3cret-pass@127.0.0.1:${nats.port}`;
    const bus = await NatsBus.create(url, 'loss-test', { log });
    const changes: BusHealth[] = [];
    bus.onHealthChange((h) => changes.push(h));
    try {
      const started = bus.health();
      expect(started).toEqual({ connected: true, since: expect.any(Date) });
      await bus.reply('clusters.loss.echo', async (p) => p);

      await nats.kill();
      await eventually(async () => !bus.health().connected, 5_000, 20);
      expect(bus.health().since.getTime()).toBeGreaterThanOrEqual(started.since.getTime());
      expect(lines).toContainEqual({ level: 'warn', msg: 'NATS connection lost; reconnecting', obj: { server: `127.0.0.1:${nats.port}` } });

      await nats.start();
      await eventually(async () => bus.health().connected, 10_000, 50);
      expect(lines).toContainEqual({
        level: 'info',
        msg: 'NATS connection restored',
        obj: { server: `127.0.0.1:${nats.port}`, disconnectedMs: expect.any(Number), deferredNotices: 0 },
      });
      expect(changes.map((c) => c.connected)).toEqual([false, true]);
      // Subscriptions come back with the connection.
      await expect(bus.request('clusters.loss.echo', { n: 1 })).resolves.toEqual({ n: 1 });
      expect(text()).not.toContain('s3cret');
    } finally {
      await bus.close();
    }
  }, 30_000);

  it('logs an outage once when it starts and once when it ends, however many writes send notices meanwhile', async () => {
    const { log, lines } = capture();
    const bus = await NatsBus.create(`nats://127.0.0.1:${nats.port}`, 'outage-test', { log });
    try {
      await nats.kill();
      await eventually(async () => !bus.health().connected, 5_000, 20);
      // A burst of writes, each announcing its change: none waits for NATS or fails.
      const began = Date.now();
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          bus.notify('identity.outage.changed', { i }).then(
            () => 'sent',
            (err) => String(err),
          ),
        ),
      );
      expect(outcomes.filter((o) => o !== 'sent')).toEqual([]);
      // Answered while NATS is still down (it starts again only after this), well within the client's timeouts.
      expect(Date.now() - began).toBeLessThan(3_000);
      await new Promise((r) => setTimeout(r, 500));
      await nats.start();
      await eventually(async () => bus.health().connected, 10_000, 50);
      await eventually(async () => lines.some((l) => l.msg === 'NATS connection restored'), 5_000, 20);
      expect(lines.map(({ level, msg }) => `${level} ${msg}`)).toEqual([
        'info NATS connected',
        'warn NATS connection lost; reconnecting',
        'info NATS connection restored',
      ]);
      const restored = lines[2].obj as { disconnectedMs: number; deferredNotices: number };
      expect(restored.deferredNotices).toBe(200);
      expect(restored.disconnectedMs).toBeGreaterThanOrEqual(500);
    } finally {
      await bus.close();
    }
  }, 30_000);

  it('stores a notice sent right after the server came back at once, not after a question asked while it was away', async () => {
    const url = `nats://127.0.0.1:${nats.port}`;
    const writer = await NatsBus.create(url, 'back-writer');
    const reader = await NatsBus.create(url, 'back-reader');
    try {
      const seen: number[] = [];
      await reader.listen('identity.back.changed', (_s, p) => seen.push((p as { n: number }).n));
      await writer.notify('identity.back.changed', { n: 0 });
      await nats.kill();
      await eventually(async () => !writer.health().connected && !reader.health().connected, 5_000, 20);
      // A write while away: answered at once, its notice waits for the connection. Before, its retries asked JetStream
      // whether the stream was there while away, and every notice after the connection was back waited for that
      // question's 5 s timeout (twice, when the stream had to be made again).
      const away = Date.now();
      await writer.notify('identity.back.changed', { n: 1 });
      // Short of the 5 s question timeout it must not wait for, however busy the machine.
      expect(Date.now() - away).toBeLessThan(3_000);
      await new Promise((r) => setTimeout(r, 1_500));
      await nats.start();
      await eventually(async () => writer.health().connected && reader.health().connected, 10_000, 20);
      // The reader trusts what it keeps again once a fence passes (the stream, in memory, was made again).
      await eventually(async () => reader.caughtUp(), 10_000, 20);
      const began = Date.now();
      await writer.notify('identity.back.changed', { n: 2 });
      expect(Date.now() - began).toBeLessThan(3_000);
      // In the one order: the reader's next fence has handed it over.
      expect(await reader.caughtUp()).toBe(true);
      expect(seen.at(-1)).toBe(2);
    } finally {
      await writer.close();
      await reader.close();
    }
  }, 30_000);

  it('retries an unreachable server for a bounded time at start, then fails with host:port only', async () => {
    const { log, lines, text } = capture();
    const port = await freePort();
    const began = Date.now();
    const err = await NatsBus.create(`nats://tester:s3cret-pass@127.0.0.1:${port}`, 'start-test', { log, startupTimeoutMs: 1_500 }).catch(
      (e) => e,
    );
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_000);
    expect(err).toBeInstanceOf(BusConnectError);
    expect(err).toMatchObject({
      server: `127.0.0.1:${port}`,
      kind: 'unreachable',
      reason: 'not reachable within 1.5 s (connection refused)',
    });
    expect(err.message).toBe(`cannot use NATS at 127.0.0.1:${port}: not reachable within 1.5 s (connection refused)`);
    expect(err.message + text()).not.toContain('s3cret');
    expect(lines).toEqual([]);
  });

  it('fails at once, naming the credentials, when the server refuses them', async () => {
    const { log, text } = capture();
    const nats = await startPrivateNats({ user: { name: 'tester', password: 'right-pass' } });
    try {
      // Given a minute: a refusal that were tried again until then would outlast the test's bound.
      const err = await NatsBus.create(`nats://tester:s3cret-wrong@127.0.0.1:${nats.port}`, 'start-test', {
        log,
        startupTimeoutMs: 60_000,
      }).catch((e) => e);
      expect(err).toBeInstanceOf(BusConnectError);
      expect(err).toMatchObject({ server: `127.0.0.1:${nats.port}`, kind: 'credentials', reason: 'the server refused the credentials' });
      expect(err.message + text()).not.toContain('s3cret');
      // The right ones, in the URL as NATS_URL carries them, connect.
      const bus = await NatsBus.create(`nats://tester:right-pass@127.0.0.1:${nats.port}`, 'start-test', { log });
      await bus.close();
    } finally {
      await nats.dispose();
    }
  }, 20_000);

  it('connects with a token carried in the URL', async () => {
    const { log } = capture();
    const nats = await startPrivateNats({ token: 's3cret-token' });
    try {
      const bus = await NatsBus.create(`nats://s3cret-token@127.0.0.1:${nats.port}`, 'start-test', { log });
      expect(bus.health().connected).toBe(true);
      await bus.close();
      const err = await NatsBus.create(nats.url, 'start-test', { log, startupTimeoutMs: 60_000 }).catch((e) => e);
      expect(err).toMatchObject({ kind: 'credentials' });
    } finally {
      await nats.dispose();
    }
  }, 20_000);

  it('fails at once when the server has no JetStream', async () => {
    const { log } = capture();
    const nats = await startPrivateNats({ jetstream: false });
    try {
      const err = await NatsBus.create(nats.url, 'start-test', { log, startupTimeoutMs: 60_000 }).catch((e) => e);
      expect(err).toBeInstanceOf(BusConnectError);
      expect(err).toMatchObject({ kind: 'no-jetstream', reason: 'JetStream is not enabled' });
    } finally {
      await nats.dispose();
    }
  }, 20_000);

  it('the in-process bus is always connected', () => {
    const bus = new InProcessBus();
    expect(bus.health()).toEqual({ connected: true, since: expect.any(Date) });
    const stop = bus.onHealthChange(() => {
      throw new Error('never called');
    });
    stop();
  });
});
