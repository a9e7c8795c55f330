import { subjectOf } from '@platform/agent-protocol';
import { openDatabase, type Database } from '@platform/db';
import { agentV1 } from '@platform/proto';
import { metricsText } from '@platform/telemetry';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { Ingestion, openWithAccounts } from '../src/ingestion/ingestion';
import { seal, testCluster, testLicensing, toBusPayload } from './agent-reports';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/**
 * Reports are attributed from what the platform knows, never from their claims (docs/billing-ingestion.md,
 * "Attribution"): the user is the issued license's holder, else the cluster's owner; a usage sample's contract is
 * the issued license's, else the one it names only when the owner's contract binds the cluster for the product; a
 * license the platform issued for another cluster refuses the report. Refused claims are counted by reason.
 */
describe('billing ingestion attributes reports from the platform’s records', () => {
  // Organization 2 owns the cluster; organization 3 is another tenant, whose member user 7 is (b1).
  const cluster = testCluster({ ownerId: 2 });
  const other = testCluster({ ownerId: 3 });
  const { clusterUID, keys } = cluster;
  const OTHER_MEMBER = 7;
  const licensing = testLicensing({
    issued: [
      { serial: '1001', contractId: 41, ownerId: 2, clusterUid: clusterUID.toUpperCase() },
      { serial: '1002', contractId: 45, ownerId: 5, clusterUid: clusterUID },
      { serial: '2001', contractId: 42, ownerId: 3, clusterUid: other.clusterUID },
    ],
    bindings: [
      { ownerId: 2, clusterUID, contract: { id: 41, product: 'productdb' } },
      { ownerId: 2, clusterUID, contract: { id: 43, product: 'productbackup' } },
      // Organization 3 bound the cluster's UUID to its own contract: that makes the contract bind it, not the cluster 3's.
      { ownerId: 3, clusterUID, contract: { id: 42, product: 'productdb' } },
    ],
  });
  let db: Database;
  let drop: () => Promise<void>;
  let ingestion: Ingestion;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    ingestion = new Ingestion(db, openWithAccounts(cluster.accounts), licensing.records, quiet);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** A counter's value in this process's /metrics text, 0 when absent. */
  const metric = async (series: string) => {
    const line = (await metricsText()).body.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const claims = (kind: string, reason: string) => metric(`billing_agent_claims_refused_total{kind="${kind}",reason="${reason}"}`);
  const seen = async () => Number((await db.table('agent_seen_messages').count({ n: '*' }))[0].n);
  let hour = 0;
  /** A sample of a fresh object (its own natural key), an hour long. */
  const sample = (over: Partial<agentV1.UsageSample>) => {
    const start = Date.UTC(2026, 8, 1) + hour++ * 3_600_000;
    const objectUid = `f0e1d2c3-0000-4000-8000-${String(hour).padStart(12, '0')}`;
    return cluster.sample(start, start + 3_600_000, { objectUid, ...over });
  };
  const send = async (over: Partial<agentV1.UsageSample>) => {
    const message = toBusPayload(seal('usage-sample', sample(over), keys));
    const outcome = await ingestion.receive('usage-sample', subjectOf(clusterUID, 'usage-sample'), message);
    return { outcome, message };
  };
  const contractOf = async (licenseId: string) =>
    (await db.table('usage_samples').where({ cluster_uid: clusterUID, license_id: licenseId }).distinct('contract_id', 'user_id')).map(
      (r) => [Number(r.contract_id), Number(r.user_id)],
    );

  it('attributes a usage sample naming another organization’s contract to no contract, and counts the refused claim', async () => {
    const before = await claims('usage-sample', 'contract-mismatch');
    expect((await send({ licenseId: 'forged-contract', contractId: 42 })).outcome).toBe('applied');
    expect(await contractOf('forged-contract')).toEqual([[0, 2]]);
    expect(await db.table('usage_samples').where({ contract_id: 42 }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await claims('usage-sample', 'contract-mismatch')).toBe(before + 1);
  });

  it('keeps the contract a sample names when the cluster’s owner has it binding the cluster for the sample’s product; else none', async () => {
    const before = await claims('usage-sample', 'contract-mismatch');
    await send({ licenseId: 'own-contract', contractId: 41 });
    expect(await contractOf('own-contract')).toEqual([[41, 2]]);
    await send({ licenseId: 'no-contract', contractId: 0 });
    expect(await contractOf('no-contract')).toEqual([[0, 2]]);
    // The owner's contract of another product, and a contract that does not exist.
    await send({ licenseId: 'other-product', contractId: 43 });
    await send({ licenseId: 'unknown-contract', contractId: 999_999 });
    expect(await contractOf('other-product')).toEqual([[0, 2]]);
    expect(await contractOf('unknown-contract')).toEqual([[0, 2]]);
    expect(await claims('usage-sample', 'contract-mismatch')).toBe(before + 2);
  });

  it('attributes a sample under a license the platform issued for the cluster to its contract and holder, whatever it names', async () => {
    await send({ licenseId: '1001', contractId: 0, userId: OTHER_MEMBER });
    expect(await contractOf('1001')).toEqual([[41, 2]]);
    // An offline license: its contract's owner (account 5) holds it, though organization 2 owns the cluster.
    await send({ licenseId: '1002', contractId: 42, userId: 2 });
    expect(await contractOf('1002')).toEqual([[45, 5]]);
  });

  it('attributes license usage naming another organization’s member to the cluster’s owner, and counts the refused claim', async () => {
    const before = await claims('license-usage', 'user-mismatch');
    const forged = { ...cluster.usage(Date.UTC(2026, 8, 2)), userId: OTHER_MEMBER, licenseId: 'lic-forged-user' };
    expect(
      await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), toBusPayload(seal('license-usage', forged, keys))),
    ).toBe('applied');
    expect(await db.table('licensed_products').where({ user_id: OTHER_MEMBER }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await db.table('licensed_products').where({ license_id: 'lic-forged-user' }).pluck('user_id')).toEqual([2]);
    expect(await claims('license-usage', 'user-mismatch')).toBe(before + 1);

    // The same for a resource event and a sample: their rows are the owner's.
    const event = cluster.event(1, { userId: OTHER_MEMBER, key: 'kubedb.com/postgreses/db/forged-user' });
    expect(
      await ingestion.receive('resource-event', subjectOf(clusterUID, 'resource-event'), toBusPayload(seal('resource-event', event, keys))),
    ).toBe('applied');
    expect(await db.table('resource_events').where({ key: event.key }).pluck('user_id')).toEqual([2]);
    await send({ licenseId: 'sample-forged-user', userId: OTHER_MEMBER });
    expect(await contractOf('sample-forged-user')).toEqual([[0, 2]]);
  });

  it('never makes an unknown user id a licensed user: the usage is the cluster owner’s', async () => {
    const unknown = { ...cluster.usage(Date.UTC(2026, 8, 3)), userId: 999_999, licenseId: 'lic-unknown-user' };
    expect(
      await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), toBusPayload(seal('license-usage', unknown, keys))),
    ).toBe('applied');
    expect(await db.table('licensed_products').where({ user_id: 999_999 }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await db.table('licensed_products').where({ license_id: 'lic-unknown-user' }).pluck('user_id')).toEqual([2]);
  });

  it('attributes license usage under an issued license to its holder', async () => {
    const usage = { ...cluster.usage(Date.UTC(2026, 8, 4)), licenseId: '1002' };
    await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), toBusPayload(seal('license-usage', usage, keys)));
    expect(await db.table('licensed_products').where({ license_id: '1002' }).pluck('user_id')).toEqual([5]);
  });

  it('refuses a report naming a license the platform issued for another cluster: nothing written, its id not kept, counted', async () => {
    const before = { seen: await seen(), claims: await claims('license-usage', 'license-of-other-cluster') };
    const stolen = { ...cluster.usage(Date.UTC(2026, 8, 5)), licenseId: '2001', userId: 3 };
    expect(
      await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), toBusPayload(seal('license-usage', stolen, keys))),
    ).toBe('refused');
    expect((await send({ licenseId: '2001', contractId: 42 })).outcome).toBe('refused');
    expect(await db.table('licensed_products').where({ license_id: '2001' }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await db.table('usage_samples').where({ license_id: '2001' }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await seen()).toBe(before.seen);
    expect(await claims('license-usage', 'license-of-other-cluster')).toBe(before.claims + 1);
  });

  it('applies a redelivered forged report once and counts its refused claim once', async () => {
    const before = await claims('usage-sample', 'user-mismatch');
    const { message } = await send({ licenseId: 'redelivered', userId: OTHER_MEMBER });
    const subject = subjectOf(clusterUID, 'usage-sample');
    expect(await ingestion.receive('usage-sample', subject, message)).toBe('duplicate');
    expect(
      await ingestion.receiveBatch('usage-sample', [
        { subject, payload: message },
        { subject, payload: message },
      ]),
    ).toEqual([true, true]);
    expect(await contractOf('redelivered')).toEqual([[0, 2]]);
    expect(await claims('usage-sample', 'user-mismatch')).toBe(before + 1);
  });

  it('asks the records once per batch, and hands a batch back when they cannot be read, keeping nothing of it', async () => {
    const subject = subjectOf(clusterUID, 'usage-sample');
    const batch = [0, 1, 2].map((i) => ({
      subject,
      payload: toBusPayload(seal('usage-sample', sample({ licenseId: `batch-${i}`, contractId: 41 }), keys)),
    }));
    const asked = { ...licensing.asked };
    expect(await ingestion.receiveBatch('usage-sample', batch)).toEqual([true, true, true]);
    expect(licensing.asked).toEqual({ issuedLicenses: asked.issuedLicenses + 1, contractsBinding: asked.contractsBinding + 1 });

    const down = new Ingestion(
      db,
      openWithAccounts(cluster.accounts),
      { issuedLicenses: () => Promise.reject(new Error('contracts-licensing is unavailable')), contractsBinding: async () => [] },
      quiet,
    );
    const before = await seen();
    const again = [0, 1].map((i) => ({ subject, payload: toBusPayload(seal('usage-sample', sample({ licenseId: `down-${i}` }), keys)) }));
    expect(await down.receiveBatch('usage-sample', again)).toEqual([false, false]);
    expect(await seen()).toBe(before);
    // Delivered again once contracts-licensing answers: applied.
    expect(await ingestion.receiveBatch('usage-sample', again)).toEqual([true, true]);
    expect(await seen()).toBe(before + 2);
  });
});
