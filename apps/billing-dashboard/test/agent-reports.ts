import { randomUUID } from 'node:crypto';
import { createUser } from 'nkeys.js';
import { seal, signerOf, toBusPayload, type AccountLookup, type Signer } from '@platform/agent-protocol';
import { agentV1 } from '@platform/proto';
import type { BindingContract, IssuedLicenseRecord, LicensingRecords } from '../src/ingestion/attribution';

/**
 * A member cluster for tests: its key, a lookup that knows it (its bus account held by organization `ownerId`,
 * default 2), and builders of its sealed reports, which name the owner as their user as an honest agent's do.
 */
export function testCluster(opts: { ownerId?: number } = {}) {
  const ownerId = opts.ownerId ?? 2;
  const clusterUID = randomUUID();
  // A signer made once: nkeys.js derives a key pair's public key from its seed in plain JavaScript at each use
  // (milliseconds each), which every seal and every lookup paid again when they were handed the key pair.
  const signer = signerOf(createUser());
  const keys: Signer & { getPublicKey(): string } = { ...signer, getPublicKey: () => signer.publicKey };
  const accounts: AccountLookup = {
    accountOf: async (pub) => (pub === signer.publicKey ? { busPubKey: pub, revoked: false, id: 1, ownerId } : undefined),
    mayReportFor: async (_account, uid) => uid === clusterUID,
  };
  const usage = (receivedAtMs: number): agentV1.LicenseUsage => ({
    userId: ownerId,
    clusterUid: clusterUID,
    licenseId: 'lic-1',
    product: 'productdb',
    receivedAtMs,
  });
  const event = (version: number, over: Partial<agentV1.ResourceEvent> = {}): agentV1.ResourceEvent => ({
    userId: ownerId,
    clusterUid: clusterUID,
    licenseId: 'lic-1',
    product: 'productdb',
    group: 'kubedb.com',
    resource: 'postgreses',
    resourceIdJson: JSON.stringify({ group: 'kubedb.com', kind: 'Postgres', namespace: 'db', name: 'pg-1' }),
    key: 'kubedb.com/postgreses/db/pg-1',
    version,
    timestampMs: Date.UTC(2026, 5, 1) + version * 60_000,
    partialObjectMetaJson: JSON.stringify({ metadata: { name: 'pg-1', namespace: 'db' } }),
    ...over,
  });
  const sample = (startMs: number, endMs: number, over: Partial<agentV1.UsageSample> = {}): agentV1.UsageSample => ({
    product: 'productdb',
    contractId: 0,
    licenseId: 'lic-1',
    userId: ownerId,
    clusterUid: clusterUID,
    clusterName: 'hub-1',
    hosting: 'aws',
    namespace: 'db',
    namespaceUid: randomUUID(),
    group: 'kubedb.com',
    kind: 'Postgres',
    name: 'pg-1',
    objectUid: 'f0e1d2c3-0000-4000-8000-000000000001',
    version: '16.4',
    topology: agentV1.Topology.TOPOLOGY_CLUSTER,
    replicas: 3,
    startMs,
    endMs,
    resources: [
      { resource: 'cpu', request: 500, limit: 1000, used: 250 },
      { resource: 'memory', request: 2 ** 30, limit: 0, used: 2 ** 29 },
      { resource: 'storage', request: 10 * 2 ** 30, limit: 0, used: 0 },
    ],
    ...over,
  });
  return { clusterUID, ownerId, keys, accounts, usage, event, sample };
}

/**
 * contracts-licensing's records for tests: the licenses issued and the contracts binding clusters, as given (none by
 * default; push to them as a test goes), and how many times each was asked.
 */
export function testLicensing(
  known: { issued?: IssuedLicenseRecord[]; bindings?: { ownerId: number; clusterUID: string; contract: BindingContract }[] } = {},
) {
  const issued = known.issued ?? [];
  const bindings = known.bindings ?? [];
  const asked = { issuedLicenses: 0, contractsBinding: 0 };
  const records: LicensingRecords = {
    issuedLicenses: async (serials) => {
      asked.issuedLicenses++;
      return issued.filter((l) => serials.includes(l.serial));
    },
    contractsBinding: async (ownerId, clusterUID) => {
      asked.contractsBinding++;
      return bindings.filter((b) => b.ownerId === ownerId && b.clusterUID === clusterUID).map((b) => b.contract);
    },
  };
  return { records, issued, bindings, asked };
}

/** A sealed envelope as the bus carries it, with its signature broken (one bit flipped). */
export function withBadSignature(busPayload: string): string {
  const env = agentV1.Envelope.decode(Buffer.from(busPayload, 'base64'));
  const signature = Buffer.from(env.signature);
  signature[0] ^= 1;
  return toBusPayload(agentV1.Envelope.encode({ ...env, signature }).finish());
}

export { seal, toBusPayload };
