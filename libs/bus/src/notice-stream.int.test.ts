import { eventually, startPrivateNatsCluster, type PrivateNatsCluster } from '@platform/testing';
import { connect } from 'nats';
import { ACCOUNTS_CHANGED, type AccountsChanged, type Bus } from './index';
import { NatsBus } from './nats-bus';
import { NoticeCache } from './notice-cache';
import { NOTICE_STREAM } from './notice-stream';
import { HEARTBEAT_EVERY_MS, SILENT_AFTER_MS } from './liveness';

// Notices across a NATS cluster: a notice acknowledged through one server is handed over on another before that
// process's next catch-up (its fence) passes, also while a node is down.

describe('notices on a three-node NATS cluster', () => {
  let cluster: PrivateNatsCluster;
  const buses: Bus[] = [];
  beforeAll(async () => {
    cluster = await startPrivateNatsCluster(3);
  }, 30_000);
  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => {});
    await cluster?.dispose();
  });

  /** A bus on one node, which reconnects to the others when that one goes. */
  const busOn = async (node: number) => {
    const urls = [cluster.nodes[node].url, ...cluster.nodes.filter((_, i) => i !== node).map((n) => n.url)];
    const bus = await NatsBus.create(urls.join(','), `notice-test-${node}`);
    buses.push(bus);
    return bus;
  };

  /** Writes through `writer` and reads through `reader` at once, `rounds` times: the reader's fence always saw the notice. */
  const writeThenFence = async (writer: Bus, reader: Bus, subject: string, rounds: number) => {
    const seen: number[] = [];
    await reader.listen(subject, (_s, p) => seen.push((p as { n: number }).n));
    // After a node was lost its consumers and stream leadership move first (catch-ups time out meanwhile).
    await eventually(async () => reader.caughtUp(), 20_000, 100);
    const late: number[] = [];
    for (let n = 1; n <= rounds; n++) {
      await writer.notify(subject, { n });
      expect(await reader.caughtUp()).toBe(true);
      if (seen.at(-1) !== n) late.push(n);
    }
    expect(late).toEqual([]);
    expect(seen).toEqual(Array.from({ length: rounds }, (_, i) => i + 1));
  };

  it('hands a notice acknowledged through one server to a listener on another before that listener’s next catch-up passes', async () => {
    const writer = await busOn(0);
    const reader = await busOn(2);
    await writeThenFence(writer, reader, 'fencetest.all-up', 100);
  }, 30_000);

  it('sends the notices of a subject sent at once in fewer messages, each heard elsewhere before the next fence passes', async () => {
    const writer = await busOn(0);
    const reader = await busOn(1);
    const heard: AccountsChanged[] = [];
    await reader.listen(ACCOUNTS_CHANGED, (_s, p) => heard.push(p as AccountsChanged));
    await eventually(async () => reader.caughtUp(), 20_000, 100);
    const ids = Array.from({ length: 50 }, (_, i) => i + 1);
    await Promise.all(ids.map((id) => writer.notify(ACCOUNTS_CHANGED, { userIds: [id] } satisfies AccountsChanged)));
    expect(await reader.caughtUp()).toBe(true);
    expect(heard.flatMap((n) => n.userIds).sort((a, b) => a - b)).toEqual(ids);
    expect(heard.length).toBeGreaterThan(1);
    expect(heard.length).toBeLessThan(ids.length / 2);
  }, 30_000);

  it('fences a request once: a catch-up asked after it arrived covers its later reads, and a later request asks again', async () => {
    const writer = await busOn(0);
    const reader = await busOn(2);
    const seen: number[] = [];
    await reader.listen('fencetest.once', (_s, p) => seen.push((p as { n: number }).n));
    await eventually(async () => reader.caughtUp(), 20_000, 100);
    const arrived = performance.now();
    expect(await reader.caughtUp(arrived)).toBe(true);
    // Its next read: answered at once, without asking the stream again.
    expect(reader.caughtUp(arrived)).toBe(true);
    // A request arriving after a write asks again, and has heard the write once it passes.
    await writer.notify('fencetest.once', { n: 1 });
    const next = reader.caughtUp(performance.now());
    expect(next).not.toBe(true);
    expect(await next).toBe(true);
    expect(seen).toEqual([1]);
  }, 30_000);

  it('makes the stream again when the servers lost it, and its listeners start over at the numbers seen again', async () => {
    const writer = await busOn(0);
    const reader = await busOn(1);
    const missed: number[] = [];
    reader.onNoticesMissed(() => missed.push(Date.now()));
    await writeThenFence(writer, reader, 'fencetest.before-remade', 3);
    expect(missed).toEqual([]);
    // As after every node restarted (the stream lives in memory): gone, and numbered from 1 once made again.
    const nc = await connect({ servers: cluster.nodes[2].url });
    await (await nc.jetstreamManager()).streams.delete(NOTICE_STREAM);
    await nc.close();
    await writeThenFence(writer, reader, 'fencetest.remade', 3);
    expect(missed.length).toBeGreaterThan(0);
  }, 30_000);

  it('rests a reader nobody asks, and serves no answer it kept before a change made while it rested', async () => {
    const writer = await busOn(0);
    const reader = await NatsBus.create(cluster.nodes[2].url, 'notice-test-resting', { restAfterMs: 1_500 });
    buses.push(reader);
    const cache = new NoticeCache<string>({ name: 'rest-test', ttlMs: 60_000 });
    const stop = await cache.follow(reader, [{ subject: 'fencetest.rest', stale: () => ['the-answer'] }]);
    const heard: number[] = [];
    await reader.listen('fencetest.rest', (_s, p) => heard.push((p as { n: number }).n));
    await eventually(async () => reader.caughtUp(), 20_000, 100);
    let owner = 'before';
    const read = () => cache.through('the-answer', async () => owner, { tags: ['the-answer'] });
    expect(await read()).toBe('before');
    owner = 'after';
    // Kept: the owner's answer changed behind its back, and no notice said so.
    expect(await read()).toBe('before');

    // Nobody asks: it rests.
    expect(reader.resting).toBe(false);
    await eventually(async () => reader.resting, 10_000, 100);
    await writer.notify('fencetest.rest', { n: 1 });

    // The next read wakes it: what was kept before the change is not served, and notices are followed again from the
    // next one stored, so the notice stored while it rested is never handed over (a reader that had not rested would
    // have heard it before that fence passed).
    expect(await read()).toBe('after');
    expect(reader.resting).toBe(false);
    await writer.notify('fencetest.rest', { n: 2 });
    expect(await reader.caughtUp()).toBe(true);
    expect(heard).toEqual([2]);
    await stop();
  }, 30_000);

  it('trusts nothing kept within 3 s of a writer falling silent (its node paused, the leader elsewhere), and starts over once it is heard again', async () => {
    // The stream's leader off node 0, so the reader's fences are answered all along.
    await eventually(
      async () => {
        const leader = await cluster.streamLeader(NOTICE_STREAM);
        if (leader === 0) await cluster.stepDown(NOTICE_STREAM);
        return leader !== undefined && leader !== 0;
      },
      20_000,
      200,
    );
    const writer = await NatsBus.create(cluster.nodes[0].url, 'notice-test-paused');
    buses.push(writer);
    const reader = await busOn(2);
    await writeThenFence(writer, reader, 'fencetest.silent', 1);
    const missed: number[] = [];
    reader.onNoticesMissed(() => missed.push(Date.now()));
    cluster.nodes[0].pause();
    try {
      const pausedAt = performance.now();
      await eventually(async () => (await reader.caughtUp()) === false, 15_000, 100);
      expect(performance.now() - pausedAt).toBeLessThan(SILENT_AFTER_MS + 2 * HEARTBEAT_EVERY_MS);
    } finally {
      cluster.nodes[0].resume();
    }
    await eventually(async () => reader.caughtUp(), 15_000, 100);
    expect(missed.length).toBeGreaterThan(0);
  }, 60_000);

  it('keeps that order while a node is down, once the writer and reader are back on the others', async () => {
    const writer = await busOn(1);
    const reader = await busOn(2);
    // Warm: the stream and the reader's consumer exist before the node goes.
    await writeThenFence(writer, reader, 'fencetest.before-loss', 1);
    await cluster.nodes[0].kill();
    // Whatever was on the lost node (the stream's leader, the consumer) moves; a notice sent meanwhile waits for it.
    await writeThenFence(writer, reader, 'fencetest.one-down', 50);
    // A writer that was on the lost node moves to another and its notices still come first.
    const moved = buses[0];
    await writeThenFence(moved, reader, 'fencetest.moved-writer', 50);
    await cluster.nodes[0].start();
  }, 60_000);
});
