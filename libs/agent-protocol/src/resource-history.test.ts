import { createUser, type KeyPair } from 'nkeys.js';
import { InProcessBus } from '@platform/bus';
import { DeadlineError, UnavailableError } from '@platform/errors';
import { agentV1 } from '@platform/proto';
import type { AccountLookup, BusAccountRef } from './envelope';
import { answerResourceHistory, fetchResourceHistory } from './resource-history';
import { subjectOf } from './subjects';

const HUB = '0b6f6c2e-7d3a-4f51-9a3e-1c2d3e4f5a6b';
const OTHER = 'a1b2c3d4-e5f6-4789-8abc-def012345678';

function accountsFor(keys: KeyPair, clusters: string[], revoked = false): AccountLookup {
  return {
    accountOf: async (pub) => (pub === keys.getPublicKey() ? { busPubKey: pub, revoked } : undefined),
    mayReportFor: async (_a: BusAccountRef, uid) => clusters.includes(uid),
  };
}

const ITEMS: agentV1.ResourceHistoryItem[] = [
  {
    key: 'kubedb.com/postgreses/demo/pg',
    lastSeenMs: 1_780_000_000_000,
    values: [{ resourceIdJson: '{"name":"pg"}', licenseId: 'lic-1', version: 2, timestampMs: 1_779_000_000_000 }],
  },
];
const QUERY = { clusterUID: HUB, userId: 7, licenseId: 'lic-1', product: 'productdb', group: 'kubedb.com', resource: 'postgreses' };

describe('resource-history request/reply', () => {
  let bus: InProcessBus;
  let keys: KeyPair;
  const stops: (() => Promise<void>)[] = [];

  beforeEach(() => {
    bus = new InProcessBus();
    keys = createUser();
  });
  afterEach(async () => {
    jest.useRealTimers();
    for (const stop of stops.splice(0)) await stop();
    await bus.close();
  });

  it('asks the cluster with the query and returns its verified answer', async () => {
    const asked: agentV1.ResourceHistoryRequest[] = [];
    // Both sides' clocks: the cluster's reads the request a second after it was sent, within its deadline.
    stops.push(
      await answerResourceHistory(
        bus,
        HUB,
        keys,
        async (req) => {
          asked.push(req);
          return ITEMS;
        },
        { now: () => 1_780_000_001_000 },
      ),
    );
    const reply = await fetchResourceHistory(bus, QUERY, {
      accounts: accountsFor(keys, [HUB]),
      timeoutMs: 2_000,
      now: () => 1_780_000_000_000,
    });
    expect(reply.items).toEqual(ITEMS);
    expect(reply.error).toBe('');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      clusterUid: HUB,
      userId: 7,
      licenseId: 'lic-1',
      product: 'productdb',
      group: 'kubedb.com',
      resource: 'postgreses',
    });
    expect(asked[0].requestId).toBe(reply.requestId);
    // The asker's deadline, by its clock: when it asked and the time it waits.
    expect(asked[0].deadlineMs).toBe(1_780_000_002_000);
  });

  it("passes the cluster's own failure through in `error`", async () => {
    stops.push(
      await answerResourceHistory(bus, HUB, keys, async () => {
        throw new Error('productdb is not installed');
      }),
    );
    const reply = await fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [HUB]) });
    expect(reply).toMatchObject({ items: [], error: 'productdb is not installed' });
  });

  it('answers 504 with a message naming the cluster when nobody answers', async () => {
    const err = await fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [HUB]), timeoutMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.httpStatus).toBe(504);
    expect(err.message).toBe(`cluster ${HUB} did not answer the resource-history request within 100 ms`);
  });

  it('answers 503 naming the cluster when the bus fails the request otherwise', async () => {
    const failing = Object.assign(new InProcessBus(), {
      request: async () => {
        throw Object.assign(new Error('PERMISSIONS_VIOLATION'), { name: 'NatsError', code: 'PERMISSIONS_VIOLATION' });
      },
    });
    const err = await fetchResourceHistory(failing, QUERY, { accounts: accountsFor(keys, [HUB]) }).catch((e) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.httpStatus).toBe(503);
    expect(err.message).toBe(`cluster ${HUB} could not be asked for its resource history: the message bus failed the request`);
  });

  it('answers 504 when the cluster is too slow; a cluster declines a request past its deadline', async () => {
    // On fake time, a cluster that answers only once the asker has given up: the 504 comes when the asker's 100 ms
    // have passed, not a millisecond before.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let release!: () => void;
    const asked = new Promise<void>((resolve) => (release = resolve));
    stops.push(await answerResourceHistory(bus, HUB, keys, () => asked.then(() => ITEMS)));
    let err: unknown;
    const asking = fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [HUB]), timeoutMs: 100 }).catch((e) => (err = e));
    await jest.advanceTimersByTimeAsync(99);
    expect(err).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(err).toBeInstanceOf(DeadlineError);
    await asking;
    release();
    jest.useRealTimers();
    // A request already past its deadline (by the cluster's clock, a minute ahead of the asker's here) is declined
    // without asking the handler.
    const handler = jest.fn(async () => ITEMS);
    stops.push(await answerResourceHistory(bus, OTHER, keys, handler, { now: () => 1_780_000_060_000 }));
    const expired = await fetchResourceHistory(
      bus,
      { ...QUERY, clusterUID: OTHER },
      { accounts: accountsFor(keys, [OTHER]), timeoutMs: 10_000, now: () => 1_780_000_000_000 },
    ).catch((e) => e);
    expect(expired).toBeInstanceOf(UnavailableError);
    expect(expired.message).toBe(`cluster ${OTHER} declined the resource-history request`);
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses an answer from an account that does not own the cluster, or a revoked one (503)', async () => {
    stops.push(await answerResourceHistory(bus, HUB, keys, async () => ITEMS));
    const notOwned = await fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [OTHER]) }).catch((e) => e);
    expect(notOwned).toBeInstanceOf(UnavailableError);
    expect(notOwned.message).toMatch(/refused \(cluster-not-owned\)/);
    const revoked = await fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [HUB], true) }).catch((e) => e);
    expect(revoked.message).toMatch(/refused \(revoked-account\)/);
  });

  it('refuses an answer to another request', async () => {
    // A replayed answer: sealed properly, but for an earlier request id.
    const { seal, toBusPayload } = await import('./envelope');
    const old = toBusPayload(
      seal('resource-history', { requestId: '11111111-2222-4333-8444-555555555555', items: ITEMS, error: '' }, keys, { clusterUID: HUB }),
    );
    stops.push(await bus.reply(subjectOf(HUB, 'resource-history'), async () => old));
    const err = await fetchResourceHistory(bus, QUERY, { accounts: accountsFor(keys, [HUB]) }).catch((e) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toMatch(/another resource-history request/);
  });
});
