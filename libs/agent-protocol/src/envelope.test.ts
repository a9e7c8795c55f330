import { randomUUID } from 'node:crypto';
import { createUser, type KeyPair } from 'nkeys.js';
import { agentV1 } from '@platform/proto';
import { metricsText } from '@platform/telemetry';
import {
  AgentMessageRefused,
  MAX_ENVELOPE_BYTES,
  open,
  seal,
  signingBytes,
  toBusPayload,
  type AccountLookup,
  type BusAccountRef,
  type OpenExpectations,
} from './envelope';
import { InMemorySeenIds } from './seen-ids';
import { kindEnum, subjectOf, type KindName } from './subjects';

const HUB = '0b6f6c2e-7d3a-4f51-9a3e-1c2d3e4f5a6b';
const SPOKE = '5d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const OTHER_OWNERS = 'a1b2c3d4-e5f6-4789-8abc-def012345678';

/** Accounts as a store would hold them: who holds which key, whether revoked, which clusters each owner has. */
class FakeAccounts implements AccountLookup {
  readonly accounts = new Map<string, BusAccountRef>();
  readonly clustersOf = new Map<number, Set<string>>();
  lookups = 0;

  add(keys: KeyPair, ownerId: number, clusters: string[], revoked = false): BusAccountRef {
    const account = { busPubKey: keys.getPublicKey(), revoked, ownerId, id: this.accounts.size + 1 };
    this.accounts.set(account.busPubKey, account);
    this.clustersOf.set(ownerId, new Set([...(this.clustersOf.get(ownerId) ?? []), ...clusters]));
    return account;
  }
  async accountOf(busPubKey: string) {
    this.lookups++;
    return this.accounts.get(busPubKey);
  }
  async mayReportFor(account: BusAccountRef, clusterUID: string) {
    return this.clustersOf.get(account.ownerId!)?.has(clusterUID) ?? false;
  }
}

function usage(clusterUid = HUB): agentV1.LicenseUsage {
  return { userId: 7, clusterUid, licenseId: 'lic-1', product: 'productdb', receivedAtMs: 1_780_000_000_000 };
}

/** An envelope built field by field and signed over the same signing bytes `seal` uses. */
function rawEnvelope(keys: KeyPair, fields: Partial<agentV1.Envelope> & { kindName?: KindName }): Uint8Array {
  const kind = fields.kindName ?? 'license-usage';
  const env: agentV1.Envelope = {
    messageId: fields.messageId ?? randomUUID(),
    clusterUid: fields.clusterUid ?? HUB,
    kind: fields.kind ?? kindEnum(kind),
    sentAtMs: fields.sentAtMs ?? Date.now(),
    payload: fields.payload ?? Buffer.from(agentV1.LicenseUsage.encode(usage()).finish()),
    senderPubKey: fields.senderPubKey ?? keys.getPublicKey(),
    signature: Buffer.alloc(0),
  };
  env.signature =
    fields.signature ??
    Buffer.from(
      keys.sign(
        signingBytes({
          messageId: env.messageId,
          clusterUID: env.clusterUid,
          kind,
          sentAtMs: env.sentAtMs,
          senderPubKey: env.senderPubKey,
          payload: env.payload,
        }),
      ),
    );
  return agentV1.Envelope.encode(env).finish();
}

/** Re-encodes sealed bytes with some fields changed and the signature left as it was. */
function tamper(bytes: Uint8Array, change: (env: agentV1.Envelope) => void): Uint8Array {
  const env = agentV1.Envelope.decode(bytes);
  change(env);
  return agentV1.Envelope.encode(env).finish();
}

async function refusal(input: unknown, expected: OpenExpectations): Promise<AgentMessageRefused> {
  try {
    await open(input, expected);
  } catch (err) {
    if (err instanceof AgentMessageRefused) return err;
    throw err;
  }
  throw new Error('the message was accepted');
}

describe('agent envelope', () => {
  let keys: KeyPair;
  let accounts: FakeAccounts;

  beforeEach(() => {
    keys = createUser();
    accounts = new FakeAccounts();
    accounts.add(keys, 1, [HUB, SPOKE]);
  });

  describe('round trip', () => {
    const payloads: {
      [K in KindName]:
        agentV1.InventoryReport | agentV1.LicenseUsage | agentV1.ResourceEvent | agentV1.UsageSample | agentV1.ResourceHistoryReply;
    } = {
      inventory: {
        hub: {
          uid: HUB,
          name: 'hub-1',
          displayName: 'Hub 1',
          provider: 'aws',
          kubernetesVersion: 'v1.30.4',
          nodeCount: 5,
          statusJson: '{"phase":"Ready"}',
          createdAtMs: 1_700_000_000_000,
          namespaces: [{ name: 'default', uid: randomUUID(), createdAtMs: 1_700_000_000_000 }],
          features: [{ name: 'productdb-operator', version: 'v2025.1.0', enabled: true }],
          connectedUsers: [],
        },
        spokes: [
          {
            uid: SPOKE,
            name: 'spoke-1',
            displayName: 'Spoke 1',
            provider: 'gcp',
            kubernetesVersion: 'v1.29.1',
            nodeCount: 3,
            statusJson: '{}',
            createdAtMs: 1_700_000_100_000,
            namespaces: [],
            features: [],
            connectedUsers: [],
          },
        ],
        managerEndpoint: 'https://hub-1.example.com',
        observedAtMs: 1_780_000_000_000,
      },
      'license-usage': usage(),
      'resource-event': {
        userId: 7,
        clusterUid: HUB,
        licenseId: 'lic-1',
        product: 'productdb',
        group: 'kubedb.com',
        resource: 'postgreses',
        resourceIdJson: '{"group":"kubedb.com","kind":"Postgres","namespace":"demo","name":"pg"}',
        key: 'kubedb.com/postgreses/demo/pg',
        version: 3,
        timestampMs: 1_780_000_000_000,
        partialObjectMetaJson: '{"metadata":{"name":"pg","namespace":"demo"}}',
      },
      'usage-sample': {
        product: 'productdb',
        contractId: 12,
        licenseId: 'lic-1',
        userId: 7,
        clusterUid: HUB,
        clusterName: 'hub-1',
        hosting: 'gks',
        namespace: 'demo',
        namespaceUid: randomUUID(),
        group: 'kubedb.com',
        kind: 'Postgres',
        name: 'pg',
        objectUid: randomUUID(),
        version: '16.4',
        topology: agentV1.Topology.TOPOLOGY_CLUSTER,
        replicas: 3,
        startMs: 1_780_000_000_000,
        endMs: 1_780_003_600_000,
        resources: [
          { resource: 'cpu', request: 1500, limit: 3000, used: 700 },
          { resource: 'memory', request: 3 * 2 ** 30, limit: 6 * 2 ** 30, used: 2 ** 31 },
        ],
      },
      'resource-history': {
        requestId: randomUUID(),
        items: [
          {
            key: 'kubedb.com/postgreses/demo/pg',
            lastSeenMs: 1_780_000_000_000,
            values: [{ resourceIdJson: '{}', licenseId: 'lic-1', version: 1, timestampMs: 1_779_000_000_000 }],
          },
        ],
        error: '',
      },
    };

    for (const kind of Object.keys(payloads) as KindName[]) {
      it(`seals and opens a ${kind} message, as bytes and as the bus's base64 text`, async () => {
        const sentAt = new Date('2026-06-15T10:00:00Z');
        const messageId = randomUUID();
        const bytes = seal(kind, payloads[kind] as never, keys, { clusterUID: HUB, messageId, sentAt });
        for (const input of [bytes, toBusPayload(bytes)]) {
          const opened = await open(input, { accounts, subject: subjectOf(HUB, kind) });
          expect(opened).toMatchObject({ kind, messageId, clusterUID: HUB, sentAt, senderPubKey: keys.getPublicKey() });
          expect(opened.account.ownerId).toBe(1);
          expect(opened.payload).toEqual(payloads[kind]);
        }
      });
    }

    it('takes the seed as text or bytes, defaults the cluster to the payload and gives each message a new id', async () => {
      const seedText = new TextDecoder().decode(keys.getSeed());
      const before = Date.now();
      const sealed = seal('license-usage', usage(SPOKE), seedText);
      const after = Date.now();
      const a = await open(sealed, { accounts });
      const b = await open(seal('license-usage', usage(SPOKE), keys.getSeed()), { accounts });
      expect(a.clusterUID).toBe(SPOKE);
      expect(a.messageId).not.toBe(b.messageId);
      // Sent when it was sealed, however long that took.
      expect(a.sentAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(a.sentAt.getTime()).toBeLessThanOrEqual(after);
    });

    it('refuses to seal what could never be opened', () => {
      expect(() => seal('license-usage', usage(), keys, { clusterUID: SPOKE })).toThrow(/about cluster/);
      expect(() => seal('license-usage', usage('HUB-1'), keys)).toThrow(/not a lower-case UUID/);
      expect(() => seal('resource-history', { requestId: 'r', items: [], error: '' }, keys)).toThrow(/not a lower-case UUID/);
      expect(() => seal('license-usage', usage(), keys, { messageId: 'm-1' })).toThrow(/message id/);
    });
  });

  describe('refusals', () => {
    it.each([
      ['bytes that are no envelope', () => new Uint8Array([0xff, 0xff, 0xff, 0x0f])],
      ['text that is not base64', () => 'not base64!'],
      ['a JSON object', () => ({ envelope: 'x' })],
      ['an empty envelope', () => new Uint8Array()],
    ])('malformed: %s', async (_what, input) => {
      expect((await refusal(input(), { accounts })).reason).toBe('malformed');
      expect(accounts.lookups).toBe(0);
    });

    it('malformed: fields out of form, each named', async () => {
      const expectMalformed = async (bytes: Uint8Array, detail: RegExp) => {
        const err = await refusal(bytes, { accounts });
        expect(err.reason).toBe('malformed');
        expect(err.detail).toMatch(detail);
      };
      await expectMalformed(rawEnvelope(keys, { messageId: 'not-a-uuid' }), /message id/);
      await expectMalformed(rawEnvelope(keys, { clusterUid: HUB.toUpperCase() }), /cluster UID/);
      await expectMalformed(rawEnvelope(keys, { kind: 99 as agentV1.Kind }), /unknown kind/);
      await expectMalformed(rawEnvelope(keys, { kind: agentV1.Kind.KIND_UNSPECIFIED }), /unknown kind/);
      await expectMalformed(rawEnvelope(keys, { sentAtMs: 0 }), /sent-at/);
      await expectMalformed(rawEnvelope(keys, { senderPubKey: 'ABC' }), /nkey user key/);
      await expectMalformed(rawEnvelope(keys, { signature: Buffer.alloc(10) }), /64 bytes/);
      // A user key with a broken checksum.
      const pub = keys.getPublicKey();
      const broken = pub.slice(0, -1) + (pub.endsWith('A') ? 'B' : 'A');
      await expectMalformed(rawEnvelope(keys, { senderPubKey: broken }), /sender public key/);
      // Signed correctly, but the payload does not decode as the kind, or names another cluster.
      await expectMalformed(rawEnvelope(keys, { payload: Buffer.from([0x0a, 0xff]) }), /payload is not a license-usage/);
      await expectMalformed(
        rawEnvelope(keys, { payload: Buffer.from(agentV1.LicenseUsage.encode(usage(SPOKE)).finish()) }),
        /payload is about cluster/,
      );
      await expectMalformed(new Uint8Array(MAX_ENVELOPE_BYTES + 1), /more than/);
      expect(accounts.lookups).toBe(0);
    });

    it('subject-mismatch: another kind, another cluster, not a protocol subject, a kind not accepted', async () => {
      const bytes = seal('license-usage', usage(), keys);
      for (const subject of [
        subjectOf(HUB, 'usage-sample'),
        subjectOf(SPOKE, 'license-usage'),
        `agent.v2.${HUB}.license-usage`,
        `platform.agent.v1.${HUB}.license-usage`,
        subjectOf(HUB, 'resource-history'),
      ]) {
        const err = await refusal(bytes, { accounts, subject });
        expect(err.reason).toBe('subject-mismatch');
        expect(err).toMatchObject({ clusterUID: HUB });
      }
      expect((await refusal(bytes, { accounts, kinds: ['inventory'] })).reason).toBe('subject-mismatch');
      await expect(open(bytes, { accounts, subject: subjectOf(HUB, 'license-usage'), kinds: ['license-usage'] })).resolves.toBeDefined();
    });

    it('bad-signature: signed by another key than the one named, or a flipped signature bit', async () => {
      const other = createUser();
      accounts.add(other, 1, [HUB]);
      const claimsOther = tamper(seal('license-usage', usage(), keys), (env) => (env.senderPubKey = other.getPublicKey()));
      expect((await refusal(claimsOther, { accounts })).reason).toBe('bad-signature');
      const flipped = tamper(seal('license-usage', usage(), keys), (env) => (env.signature[5] ^= 1));
      expect((await refusal(flipped, { accounts })).reason).toBe('bad-signature');
      expect(accounts.lookups).toBe(0);
    });

    it('unknown-account: a valid signature by a key no account holds', async () => {
      const err = await refusal(seal('license-usage', usage(), createUser()), { accounts });
      expect(err.reason).toBe('unknown-account');
    });

    it('revoked-account: a valid signature by a revoked account', async () => {
      const revoked = createUser();
      accounts.add(revoked, 1, [HUB], true);
      const err = await refusal(seal('license-usage', usage(), revoked), { accounts });
      expect(err.reason).toBe('revoked-account');
    });

    it("cluster-not-owned: a live account reporting about another owner's cluster", async () => {
      const stranger = createUser();
      accounts.add(stranger, 2, [OTHER_OWNERS]);
      const err = await refusal(seal('license-usage', usage(HUB), stranger), { accounts });
      expect(err.reason).toBe('cluster-not-owned');
      expect(err.messageId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(open(seal('license-usage', usage(OTHER_OWNERS), stranger), { accounts })).resolves.toBeDefined();
    });

    it('lets a failing lookup through unchanged (ingestion retries it; it is no refusal)', async () => {
      const down: AccountLookup = {
        accountOf: async () => {
          throw new Error('database down');
        },
        mayReportFor: async () => true,
      };
      await expect(open(seal('license-usage', usage(), keys), { accounts: down })).rejects.toThrow('database down');
    });
  });

  describe('counts', () => {
    async function count(line: string): Promise<number> {
      const { body } = await metricsText();
      const found = body.split('\n').find((l) => l.startsWith(`${line} `));
      return found ? Number(found.split(' ').pop()) : 0;
    }

    it('counts opened messages by kind and refusals by reason and kind', async () => {
      const openedLine = 'agent_messages_opened_total{kind="license-usage"}';
      const badSigLine = 'agent_messages_refused_total{reason="bad-signature",kind="license-usage"}';
      const malformedLine = 'agent_messages_refused_total{reason="malformed",kind="unknown"}';
      const before = await Promise.all([count(openedLine), count(badSigLine), count(malformedLine)]);
      await open(seal('license-usage', usage(), keys), { accounts });
      await refusal(
        tamper(seal('license-usage', usage(), keys), (env) => (env.signature[0] ^= 1)),
        { accounts },
      );
      await refusal(new Uint8Array([0xff]), { accounts });
      await refusal(new Uint8Array([0xff]), { accounts });
      const after = await Promise.all([count(openedLine), count(badSigLine), count(malformedLine)]);
      expect(after.map((n, i) => n - before[i])).toEqual([1, 1, 2]);
    });
  });

  describe('tampering and replay', () => {
    it('detects a tampered payload', async () => {
      const bytes = tamper(seal('license-usage', usage(), keys), (env) => {
        const changed = agentV1.LicenseUsage.decode(env.payload);
        changed.product = 'productvault';
        env.payload = Buffer.from(agentV1.LicenseUsage.encode(changed).finish());
      });
      expect((await refusal(bytes, { accounts })).reason).toBe('bad-signature');
    });

    it('detects a swapped cluster UID, message id, kind or sent-at even between clusters the sender owns', async () => {
      const original = seal('resource-history', { requestId: randomUUID(), items: [], error: '' }, keys, { clusterUID: HUB });
      const swaps: ((env: agentV1.Envelope) => void)[] = [
        (env) => (env.clusterUid = SPOKE),
        (env) => (env.messageId = randomUUID()),
        (env) => (env.sentAtMs += 1),
      ];
      for (const swap of swaps) expect((await refusal(tamper(original, swap), { accounts })).reason).toBe('bad-signature');
      // The subject names the swapped cluster, as a forwarder re-publishing it would: still refused.
      const swapped = tamper(original, (env) => (env.clusterUid = SPOKE));
      expect((await refusal(swapped, { accounts, subject: subjectOf(SPOKE, 'resource-history') })).reason).toBe('bad-signature');
      const kindSwapped = tamper(seal('license-usage', usage(), keys), (env) => (env.kind = agentV1.Kind.KIND_RESOURCE_EVENT));
      expect((await refusal(kindSwapped, { accounts })).reason).toBe('bad-signature');
    });

    it('exposes the message id, so a replayed message is recognised as seen', async () => {
      const seen = new InMemorySeenIds();
      const bytes = seal('license-usage', usage(), keys);
      const applied: string[] = [];
      for (let delivery = 0; delivery < 3; delivery++) {
        const msg = await open(bytes, { accounts });
        if (await seen.remember(msg.messageId, { clusterUID: msg.clusterUID, kind: msg.kind })) applied.push(msg.messageId);
      }
      expect(applied).toHaveLength(1);
      // A replay that changes the id to pass deduplication breaks the signature instead.
      const renamed = tamper(bytes, (env) => (env.messageId = randomUUID()));
      expect((await refusal(renamed, { accounts })).reason).toBe('bad-signature');
    });
  });
});
