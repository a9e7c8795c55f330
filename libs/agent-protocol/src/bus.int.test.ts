import { randomUUID } from 'node:crypto';
import { createUser } from 'nkeys.js';
import { InProcessBus, type Bus } from '@platform/bus';
import { NatsBus } from '@platform/bus/nats';
import { DeadlineError } from '@platform/errors';
import { testNatsUrl } from '@platform/testing';
import type { agentV1 } from '@platform/proto';
import { open, seal, toBusPayload, type AccountLookup } from './envelope';
import { answerResourceHistory, fetchResourceHistory } from './resource-history';
import { InMemorySeenIds } from './seen-ids';
import { subjectOf } from './subjects';

/** The protocol on a real bus: reports through the durable stream, requests beside it. Same assertions on NATS and in-process. */
function overBus(connect: () => Promise<Bus>) {
  let bus: Bus;
  const hub = randomUUID();
  const keys = createUser();
  const accounts: AccountLookup = {
    accountOf: async (pub) => (pub === keys.getPublicKey() ? { busPubKey: pub, revoked: false } : undefined),
    mayReportFor: async (_a, uid) => uid === hub,
  };
  beforeAll(async () => {
    bus = await connect();
  });
  afterAll(() => bus?.close());

  it('delivers a sealed report to a durable consumer, which applies it once though it arrives three times', async () => {
    const seen = new InMemorySeenIds();
    const applied: agentV1.LicenseUsage[] = [];
    let deliveries = 0;
    const usage = { userId: 7, clusterUid: hub, licenseId: 'lic-1', product: 'productdb', receivedAtMs: 1_780_000_000_000 };
    const message = toBusPayload(seal('license-usage', usage, keys));
    const done = new Promise<void>((resolve) => {
      void bus
        .consume({ durable: `agent-test-${hub.slice(0, 8)}`, subject: `agent.v1.${hub}.>` }, async (subject, payload) => {
          const msg = await open(payload, { accounts, subject, kinds: ['license-usage'] });
          deliveries++;
          if (await seen.remember(msg.messageId, { clusterUID: msg.clusterUID, kind: msg.kind }))
            applied.push(msg.payload as agentV1.LicenseUsage);
          if (deliveries === 3) resolve();
        })
        .then((stop) => done.then(stop));
    });
    for (let i = 0; i < 3; i++) await bus.publish(subjectOf(hub, 'license-usage'), message);
    await done;
    expect(applied).toEqual([usage]);
  });

  it('answers a resource-history request while the report stream exists, and times out cleanly without a responder', async () => {
    const items = [{ key: 'k', lastSeenMs: 1, values: [] }];
    const stop = await answerResourceHistory(bus, hub, keys, async () => items);
    const reply = await fetchResourceHistory(
      bus,
      { clusterUID: hub, userId: 7, licenseId: 'lic-1', product: 'productdb' },
      { accounts, timeoutMs: 2_000 },
    );
    expect(reply.items).toEqual(items);
    await stop();
    const err = await fetchResourceHistory(
      bus,
      { clusterUID: hub, userId: 7, licenseId: 'lic-1', product: 'productdb' },
      { accounts, timeoutMs: 300 },
    ).catch((e) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.message).toContain(hub);
  });
}

describe('agent protocol over NATS (JetStream)', () => {
  overBus(async () => NatsBus.create(await testNatsUrl(), 'agent-protocol-test'));
});

describe('agent protocol over the in-process bus', () => {
  overBus(async () => new InProcessBus());
});
