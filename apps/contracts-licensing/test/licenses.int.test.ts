import { X509Certificate as NodeCertificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { InputError, MethodNotAllowedError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import { FileObjectStorage } from '@platform/object-storage';
import type { contractsV1 } from '@platform/proto';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import type { Inventory, InventoryCluster } from '../src/contracts/inventory';
import { Licenses } from '../src/licenses/licenses';
import { measureQuota, type UsageSource } from '../src/licenses/quota';
import { ContractsStore } from '../src/contracts/contracts-store';
import { authorityFromPem, generateAuthority, LicenseRejectedError, x509, type LicenseAuthority } from '../src/licensing';

const ORG = 42;
const HUB = '0b7d4c1e-0000-4000-8000-000000000001';
const SPOKE = '0b7d4c1e-0000-4000-8000-000000000002';
const AIRGAPPED = '0b7d4c1e-0000-4000-8000-0000000000a1';
const NEW = '0b7d4c1e-0000-4000-8000-0000000000a2';
/** UUIDs no account enrolled (LATER until a test enrolls it). */
const UNENROLLED = '0b7d4c1e-0000-4000-8000-0000000000b1';
const UNENROLLED_2 = '0b7d4c1e-0000-4000-8000-0000000000b2';
const UNENROLLED_3 = '0b7d4c1e-0000-4000-8000-0000000000b3';
const LATER = '0b7d4c1e-0000-4000-8000-0000000000b4';
/** Bound by one contract only, never enrolled: registration's air-gapped cluster. */
const OFFLINE_ONLY = '0b7d4c1e-0000-4000-8000-0000000000c1';
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);
const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any;

const inv = (uid: string, name: string): InventoryCluster => ({
  uid,
  name,
  displayName: name,
  provider: 'gcp',
  kubernetesVersion: 'v1.31.0',
  nodeCount: 3,
  statusJson: '{}',
  hubUid: '',
  ownerType: 'organization',
  ownerId: ORG,
});
const known = [inv(HUB, 'prod'), inv(SPOKE, 'spoke'), inv(NEW, 'new')];
const inventory: Inventory = {
  cluster: async (uid) => known.find((c) => c.uid === uid),
  clustersByUid: async (uids) => new Map(known.filter((c) => uids.includes(c.uid)).map((c) => [c.uid, c])),
  clustersOf: async () => known,
};

describe('Licenses', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let authority: LicenseAuthority;
  let contracts: Contracts;
  let licenses: Licenses;
  /** Core-hours and GiB-hours of memory the bound clusters reported. */
  let used = 0;
  let usedMemory = 0;
  const usage: UsageSource = {
    usage: async () => ({ cpuCoreHours: used, memoryGibHours: usedMemory, storageGibHours: 0, objectHours: 0 }),
  };

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'licenses-test-'));
    const ca = await generateAuthority();
    authority = await authorityFromPem(ca.certificatePem, ca.privateKeyPem);
    contracts = createContracts(db, new FileObjectStorage(dir), inventory, quiet);
    licenses = new Licenses(db, authority, contracts, inventory, usage, quiet);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const contract = async (over: Partial<contractsV1.ContractFields> = {}, owner = ORG) =>
    (
      await contracts.lifecycle.create({
        ownerId: owner,
        ownerLogin: 'acme',
        ownerType: 'organization',
        products: ['productdb'],
        fields: { features: ['postgres', 'mysql'], featuresGiven: true, endUnix: now + 30 * DAY, ...over },
        actor: 'root',
      })
    )[0].contract;
  const bind = async (id: number, uid: string) =>
    (await contracts.binding.bind(id, 0, [{ cluster: uid, displayName: '', tags: [] }], 'root')).find((c) => c.cluster === uid)!;
  const events = async (id: number) => (await contracts.auditTrail.of(id, 0)).map((e) => e.event);

  it('issues a license for a bound cluster, records it, and another implementation reads it as issued', async () => {
    const c = await contract({ disableAnalytics: true, endUnix: now + 90 * DAY });
    const cc = await bind(c.id, HUB);
    const license = await licenses.issueForBinding({
      contractId: c.id,
      ccId: cc.id,
      ownerId: 0,
      actor: 'root',
      ownerEmail: 'owner@acme.io',
    });
    expect(license).toMatchObject({ contractId: c.id, expiryUnix: now + 90 * DAY });
    const cert = new NodeCertificate(Buffer.from(license.license));
    expect(cert.subject).toContain(`CN=${HUB}`);
    expect(cert.subjectAltName).toBe(`DNS:${HUB}, email:owner@acme.io`);
    expect(cert.checkIssued(new NodeCertificate(authority.certificatePem))).toBe(true);
    expect(BigInt(`0x${cert.serialNumber}`).toString()).toBe(license.serial);
    expect(cert.subject.split('\n')).toEqual(expect.arrayContaining(['C=productdb', 'O=postgres', 'O=mysql', 'L=DisableAnalytics=true']));
    expect(await db.table('issued_licenses').where({ serial: license.serial }).first()).toMatchObject({
      contract_id: c.id,
      cluster_uid: HUB,
      revoked_at: null,
    });
    expect(await events(c.id)).toContain(`license-issued: ${license.serial} for ${HUB}`);
    await expect(
      licenses.issueForBinding({ contractId: c.id, ccId: 999_999, ownerId: 0, actor: 'root', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: 7, actor: 'x', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses (405) a revoked or expired contract, and an offline license the contract does not allow', async () => {
    const revoked = await contract();
    const ccR = await bind(revoked.id, HUB);
    await contracts.lifecycle.revoke(revoked.id, 0, 'root');
    await expect(
      licenses.issueForBinding({ contractId: revoked.id, ccId: ccR.id, ownerId: 0, actor: 'root', ownerEmail: '' }),
    ).rejects.toThrow(/revoked/);
    const expired = await contract({ startUnix: now - 60 * DAY, endUnix: now - DAY });
    const ccE = await bind(expired.id, HUB);
    await expect(
      licenses.issueForBinding({ contractId: expired.id, ccId: ccE.id, ownerId: 0, actor: 'root', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(MethodNotAllowedError);
    const online = await contract();
    const ccA = await bind(online.id, AIRGAPPED);
    await expect(
      licenses.issueForBinding({ contractId: online.id, ccId: ccA.id, ownerId: 0, actor: 'root', ownerEmail: '' }),
    ).rejects.toThrow(/offline/);
    const offline = await contract({ allowOffline: true });
    const ccO = await bind(offline.id, AIRGAPPED);
    const license = await licenses.issueForBinding({ contractId: offline.id, ccId: ccO.id, ownerId: 0, actor: 'root', ownerEmail: '' });
    expect(new NodeCertificate(Buffer.from(license.license)).subject).toContain('L=AllowOffline=true');
  });

  it('records each quota threshold once, and refuses (403) when the quota is used up and disabling is on', async () => {
    const c = await contract({
      quota: { enabled: true, metric: 'cpu-core-hours', limit: 100, alertThresholds: [50, 80, 90], disableLicenseOnLimitReached: true },
    });
    const cc = await bind(c.id, SPOKE);
    const issue = () => licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: ORG, actor: 'alice', ownerEmail: '' });
    used = 85;
    await issue();
    await issue();
    const crossed = (await events(c.id)).filter((e) => e.startsWith('quota-threshold-crossed'));
    expect(crossed).toEqual([
      'quota-threshold-crossed: 50% of 100 cpu-core-hours (used 85.00)',
      'quota-threshold-crossed: 80% of 100 cpu-core-hours (used 85.00)',
    ]);
    used = 100;
    await expect(issue()).rejects.toBeInstanceOf(NotAllowedError);
    expect((await events(c.id)).filter((e) => e.startsWith('quota-threshold-crossed'))).toHaveLength(3);
    used = 0;
  });

  it('measures what a contract used of its quota when asked, as license issuing does: the figure its refusal names', async () => {
    const store = ContractsStore.create(db);
    const measure = (id: number, ownerId = ORG) => measureQuota({ id, ownerId }, store, inventory, usage);
    const c = await contract({
      quota: { enabled: true, metric: 'cpu-core-hours', limit: 100, alertThresholds: [50], disableLicenseOnLimitReached: true },
    });
    used = 120;
    // Nothing bound, nothing counted.
    expect(await measure(c.id)).toMatchObject({ enabled: true, metric: 'cpu-core-hours', limit: 100, used: 0 });
    const cc = await bind(c.id, SPOKE);
    const asked = Math.floor(Date.now() / 1000);
    const measured = await measure(c.id);
    expect(measured).toMatchObject({ enabled: true, metric: 'cpu-core-hours', limit: 100, used: 120 });
    // Measured when asked, not read back from an earlier measure.
    expect(measured.measuredUnix).toBeGreaterThanOrEqual(asked);
    await expect(licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: ORG, actor: 'alice', ownerEmail: '' })).rejects.toThrow(
      'has used its quota: 120.00 of 100 cpu-core-hours',
    );
    // Another owner's contract is not found; a contract without a quota says so.
    await expect(measure(c.id, ORG + 1)).rejects.toBeInstanceOf(NotFoundError);
    expect(await measure((await contract()).id)).toMatchObject({ enabled: false, used: 0 });
    used = 0;
  });

  it('counts the product’s month metrics in core-months and GiB-months (hours over 730), named as the contract names them', async () => {
    const cpu = await contract({
      quota: { enabled: true, metric: 'cpu_core_month', limit: 100, alertThresholds: [50, 80, 90], disableLicenseOnLimitReached: true },
    });
    const ccCpu = await bind(cpu.id, SPOKE);
    const issueCpu = () => licenses.issueForBinding({ contractId: cpu.id, ccId: ccCpu.id, ownerId: ORG, actor: 'alice', ownerEmail: '' });
    // 85 core-months of use; read as core-hours it would be 62,050 times the limit.
    used = 85 * 730;
    await issueCpu();
    expect((await events(cpu.id)).filter((e) => e.startsWith('quota-threshold-crossed'))).toEqual([
      'quota-threshold-crossed: 50% of 100 cpu_core_month (used 85.00)',
      'quota-threshold-crossed: 80% of 100 cpu_core_month (used 85.00)',
    ]);
    used = 100 * 730;
    await expect(issueCpu()).rejects.toThrow(
      new NotAllowedError(`contract ${cpu.id} has used its quota: 100.00 of 100 cpu_core_month; licenses are disabled until it is raised`),
    );
    used = 0;

    const memory = await contract({
      quota: { enabled: true, metric: 'memory_gib_month', limit: 2, alertThresholds: [50], disableLicenseOnLimitReached: true },
    });
    const ccMemory = await bind(memory.id, SPOKE);
    const issueMemory = () =>
      licenses.issueForBinding({ contractId: memory.id, ccId: ccMemory.id, ownerId: ORG, actor: 'alice', ownerEmail: '' });
    usedMemory = 730; // one GiB-month: half the limit
    await issueMemory();
    expect((await events(memory.id)).filter((e) => e.startsWith('quota-threshold-crossed'))).toEqual([
      'quota-threshold-crossed: 50% of 2 memory_gib_month (used 1.00)',
    ]);
    usedMemory = 2 * 730;
    await expect(issueMemory()).rejects.toThrow(/used its quota: 2\.00 of 2 memory_gib_month/);
    usedMemory = 0;
  });

  it('issues for a cluster from the owner’s contract that has it bound, or one that auto-assigns it', async () => {
    // Clusters nobody enrolled: their licenses are offline ones, which the contracts allow.
    const owner = 501;
    const bound = await contract({ allowOffline: true }, owner);
    await contracts.binding.bind(bound.id, owner, [{ cluster: UNENROLLED, displayName: '', tags: [] }], 'bob');
    const byCluster = await licenses.issueForCluster({
      ownerId: owner,
      cluster: UNENROLLED,
      features: ['postgres'],
      actor: 'bob',
      ownerEmail: 'bob@acme.io',
    });
    expect(byCluster.contractId).toBe(bound.id);
    // No contract of the owner grants the feature asked for.
    await expect(
      licenses.issueForCluster({ ownerId: owner, cluster: UNENROLLED, features: ['kafka'], actor: 'bob', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    // Not bound anywhere: a contract that auto-assigns binds it and issues.
    await expect(
      licenses.issueForCluster({ ownerId: owner, cluster: UNENROLLED_2, features: [], actor: 'bob', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    const auto = await contract({ autoAssignCluster: true, allowOffline: true }, owner);
    const assigned = await licenses.issueForCluster({ ownerId: owner, cluster: UNENROLLED_2, features: [], actor: 'bob', ownerEmail: '' });
    expect(assigned.contractId).toBe(auto.id);
    expect((await contracts.listing.clusters(auto.id, owner)).map((c) => c.cluster)).toEqual([UNENROLLED_2]);
    // Only a revoked contract has it, and none auto-assigns: 405.
    await contracts.lifecycle.revoke(bound.id, 0, 'root');
    await contracts.lifecycle.revoke(auto.id, 0, 'root');
    await expect(
      licenses.issueForCluster({ ownerId: owner, cluster: UNENROLLED, features: ['postgres'], actor: 'bob', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(MethodNotAllowedError);
    await expect(
      licenses.issueForCluster({ ownerId: owner, cluster: 'nope', features: [], actor: 'bob', ownerEmail: '' }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('searches the organizations the caller may issue for beside its own account, as one account; an enrolled cluster only its enroller’s', async () => {
    const CLUSTER = '0b7d4c1e-0000-4000-8000-0000000000b5';
    const [person, orgA, orgB] = [503, 504, 505];
    const own = await contract({ allowOffline: true, autoAssignCluster: true }, person);
    const ofA = await contract({ allowOffline: true }, orgA);
    await contracts.binding.bind(ofA.id, orgA, [{ cluster: CLUSTER, displayName: '', tags: [] }], 'bob');
    const issue = (also: number[], cluster = CLUSTER) =>
      licenses.issueForCluster({ ownerId: person, alsoOwnerIds: also, cluster, features: [], actor: 'bob', ownerEmail: 'bob@acme.io' });
    // A contract of an organization binds it: that one, before the person's own contract that would take it on; the
    // person's address is not the license's (the license is the organization's).
    const fromA = await issue([orgA, orgB]);
    expect(fromA.contractId).toBe(ofA.id);
    expect(new NodeCertificate(Buffer.from(fromA.license)).subjectAltName).not.toContain('bob@acme.io');
    // The newest contract binding it, whichever account's.
    const ofB = await contract({ allowOffline: true }, orgB);
    await contracts.binding.bind(ofB.id, orgB, [{ cluster: CLUSTER, displayName: '', tags: [] }], 'bob');
    expect((await issue([orgA, orgB])).contractId).toBe(ofB.id);
    // Without the organizations, the person's own auto-assigning contract takes the cluster on, with the person's address.
    const fromOwn = await issue([]);
    expect(fromOwn.contractId).toBe(own.id);
    expect(new NodeCertificate(Buffer.from(fromOwn.license)).subjectAltName).toContain('bob@acme.io');
    // HUB is ORG's: ORG's contract binding it when ORG is among the accounts, and no other account's contract ever.
    const ofOrg = await contract({}, ORG);
    await bind(ofOrg.id, HUB);
    expect((await issue([orgA, ORG], HUB)).contractId).toBe(ofOrg.id);
    await expect(issue([orgA, orgB], HUB)).rejects.toThrow(new NotFoundError(`no active contract of the account covers cluster ${HUB}`));
    expect(await contracts.listing.clusters(own.id, person)).toEqual([expect.objectContaining({ cluster: CLUSTER })]);
  });

  it('never binds, licenses or counts the usage of a cluster another account enrolled, nor shows its name', async () => {
    const other = 502;
    const c = await contract(
      {
        allowOffline: true,
        autoAssignCluster: true,
        quota: { enabled: true, metric: 'cpu-core-hours', limit: 10, alertThresholds: [50], disableLicenseOnLimitReached: true },
      },
      other,
    );
    // HUB is ORG's: binding it, directly or by assignment, is refused, and nothing is bound.
    await expect(contracts.binding.bind(c.id, other, [{ cluster: HUB, displayName: '', tags: [] }], 'eve')).rejects.toBeInstanceOf(
      NotAllowedError,
    );
    await expect(
      contracts.binding.assign({ ownerId: other, cluster: SPOKE, displayName: '', contractIds: [c.id], actor: 'eve' }),
    ).rejects.toBeInstanceOf(NotAllowedError);
    await expect(contracts.binding.bind(c.id, 0, [{ cluster: HUB, displayName: '', tags: [] }], 'root')).rejects.toBeInstanceOf(
      NotAllowedError,
    );
    expect(await contracts.listing.clusters(c.id, other)).toEqual([]);
    // By cluster: answered as a cluster no contract covers, and the auto-assigning contract stays empty.
    await expect(licenses.issueForCluster({ ownerId: other, cluster: HUB, features: [], actor: 'eve', ownerEmail: '' })).rejects.toThrow(
      new NotFoundError(`no active contract of the account covers cluster ${HUB}`),
    );
    expect(await contracts.listing.clusters(c.id, other)).toEqual([]);
    // A UUID bound while nobody had enrolled it, then enrolled by ORG: no more licenses, no name, no usage counted.
    const cc = await bind(c.id, LATER);
    const asked: string[][] = [];
    const counting = new Licenses(
      db,
      authority,
      contracts,
      inventory,
      { usage: async (_p, uids, ...rest) => (asked.push(uids), usage.usage(_p, uids, ...rest)) },
      quiet,
    );
    used = 9;
    await counting.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: other, actor: 'eve', ownerEmail: '' });
    expect(asked).toEqual([[LATER]]);
    known.push(inv(LATER, 'orgs-own-name'));
    try {
      await expect(
        counting.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: other, actor: 'eve', ownerEmail: '' }),
      ).rejects.toBeInstanceOf(NotAllowedError);
      const statuses = await contracts.listing.clusters(c.id, other);
      expect(statuses.map((s) => s.clusterStatus)).toEqual([expect.objectContaining({ isImported: false, name: '' })]);
      const [status] = await contracts.listing.batchStatus(other, [LATER], 0);
      expect(status.clusterStatus).toMatchObject({ isImported: false, name: '' });
      // The quota of another contract binding it no longer counts what ORG's cluster reported.
      const quota = await contract(
        {
          allowOffline: true,
          quota: { enabled: true, metric: 'cpu-core-hours', limit: 10, alertThresholds: [50], disableLicenseOnLimitReached: true },
        },
        other,
      );
      await db.table('contract_clusters').insert({ contract_id: quota.id, cluster_uid: LATER, display_name: '', tags: JSON.stringify([]) });
      const unenrolled = await bind(quota.id, UNENROLLED_3);
      asked.length = 0;
      used = 50;
      await expect(
        counting.issueForBinding({ contractId: quota.id, ccId: unenrolled.id, ownerId: other, actor: 'eve', ownerEmail: '' }),
      ).rejects.toBeInstanceOf(NotAllowedError);
      expect(asked).toEqual([[UNENROLLED_3]]);
    } finally {
      known.pop();
      used = 0;
    }
  });

  it('verifies a registration for real, and refuses it once the contract is revoked; the CRL lists the license', async () => {
    const c = await contract({ allowOffline: true });
    const cc = await bind(c.id, SPOKE);
    const offlineCc = await bind(c.id, OFFLINE_ONLY);
    const license = await licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: 0, actor: 'root', ownerEmail: '' });
    const register = (over: Partial<Parameters<Licenses['verifyRegistration']>[0]> = {}) =>
      licenses.verifyRegistration({
        license: license.license,
        clusterUid: SPOKE,
        features: ['postgres'],
        caCert: Buffer.alloc(0),
        ...over,
      });
    expect(await register()).toMatchObject({ serial: license.serial, clusterUid: SPOKE, features: ['postgres', 'mysql'] });
    expect(await register({ caCert: Buffer.from(authority.certificatePem) })).toMatchObject({ serial: license.serial });
    await expect(register({ features: [] })).rejects.toBeInstanceOf(InputError);
    // Empty features are refused before the license is read, whatever it is.
    await expect(register({ features: [' '], license: Buffer.from('not a certificate') })).rejects.toThrow(/^features: /);
    await expect(register({ features: ['kafka'] })).rejects.toMatchObject({ reason: 'no-feature-overlap' });
    await expect(register({ clusterUid: HUB })).rejects.toMatchObject({ reason: 'wrong-cluster' });
    const tampered = Buffer.from(license.license);
    tampered[tampered.length - 10] ^= 1;
    await expect(register({ license: tampered })).rejects.toBeInstanceOf(LicenseRejectedError);
    // What follows the one certificate makes it no license: trailing bytes, a second certificate, a PEM bundle.
    const pem = (der: Uint8Array) => `-----BEGIN CERTIFICATE-----\n${Buffer.from(der).toString('base64')}\n-----END CERTIFICATE-----\n`;
    for (const more of [
      Buffer.concat([license.license, Buffer.alloc(3)]),
      Buffer.concat([license.license, license.license]),
      Buffer.from(pem(license.license) + pem(license.license)),
      Buffer.from(pem(license.license) + 'trailing text'),
    ])
      await expect(register({ license: more })).rejects.toMatchObject({ reason: 'malformed' });
    expect(await register({ license: Buffer.from(pem(license.license)) })).toMatchObject({ serial: license.serial });

    // A cluster nobody enrolled that the owner's contract binds (air-gapped, licensed offline) registers.
    const airgapped = await licenses.issueForBinding({ contractId: c.id, ccId: offlineCc.id, ownerId: 0, actor: 'root', ownerEmail: '' });
    expect(await register({ license: airgapped.license, clusterUid: OFFLINE_ONLY })).toMatchObject({
      serial: airgapped.serial,
      clusterUid: OFFLINE_ONLY,
      ownerId: ORG,
      contractId: c.id,
      email: 'acme@users.noreply.platform.local',
    });
    // A bad license is 422 whatever the cluster, known or not.
    for (const bad of [Buffer.from('not a certificate'), tampered, Buffer.alloc(0)])
      await expect(register({ license: bad, clusterUid: OFFLINE_ONLY })).rejects.toBeInstanceOf(LicenseRejectedError);
    // Once no contract of the owner binds it, it is a cluster the platform does not know (400).
    await contracts.binding.unbind({ id: c.id, ccId: offlineCc.id, ownerId: 0, actor: 'root' });
    await expect(register({ license: airgapped.license, clusterUid: OFFLINE_ONLY })).rejects.toThrow(
      new InputError(`cluster ${OFFLINE_ONLY} is not registered with the platform`),
    );

    // Recorded once however often it registers; listed with its holder.
    const first = await licenses.recordRegistration({
      serial: license.serial,
      clusterUid: SPOKE,
      holderId: 0,
      holderLogin: '',
      holderEmail: 'h@acme.io',
    });
    const again = await licenses.recordRegistration({
      serial: license.serial,
      clusterUid: SPOKE,
      holderId: 7,
      holderLogin: 'holder',
      holderEmail: 'h@acme.io',
    });
    expect(again).toMatchObject({
      serial: license.serial,
      clusterUid: SPOKE,
      holderId: 7,
      holderLogin: 'holder',
      ownerId: ORG,
      contractId: c.id,
    });
    expect(again.firstRegisteredUnix).toBe(first.firstRegisteredUnix);
    expect((await licenses.registrations()).filter((r) => r.serial === license.serial)).toHaveLength(1);
    await expect(
      licenses.recordRegistration({ serial: license.serial, clusterUid: HUB, holderId: 0, holderLogin: '', holderEmail: '' }),
    ).rejects.toBeInstanceOf(NotFoundError);

    await contracts.lifecycle.revoke(c.id, 0, 'root');
    await expect(register()).rejects.toMatchObject({ reason: 'revoked' });
    const crl = new x509.X509Crl(Buffer.from((await licenses.revocationList()).der));
    expect(await crl.verify({ publicKey: new x509.X509Certificate(authority.certificatePem).publicKey })).toBe(true);
    const listed = crl.entries.map((e) => BigInt(`0x${e.serialNumber}`).toString());
    expect(listed).toEqual(expect.arrayContaining([license.serial, airgapped.serial]));
  });

  it('reads issued licenses by ID with their owner, plan, email and times; a revoked one says when', async () => {
    const c = await contract({
      emails: { licenseUsers: ['ops@acme.io'] } as contractsV1.ContractFields['emails'],
      endUnix: now + 60 * DAY,
    });
    const cc = await bind(c.id, HUB);
    const license = await licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: 0, actor: 'root', ownerEmail: '' });
    const [issued, ...rest] = await licenses.issued([license.serial, '999999999', 'not-a-serial', license.serial]);
    expect(rest).toEqual([]);
    expect(issued).toMatchObject({
      serial: license.serial,
      contractId: c.id,
      ownerId: ORG,
      email: 'ops@acme.io',
      clusterUid: HUB,
      planName: 'productdb-enterprise',
      features: ['postgres', 'mysql'],
      notAfterUnix: now + 60 * DAY,
      revokedUnix: 0,
    });
    expect(Math.abs(issued.issuedUnix - Date.now() / 1000)).toBeLessThan(60);
    await contracts.lifecycle.revoke(c.id, 0, 'root');
    expect((await licenses.issued([license.serial]))[0].revokedUnix).toBeGreaterThan(0);
    expect(await licenses.issued([])).toEqual([]);
  });

  it('counts, per cluster, the active contracts of any owner that bind it', async () => {
    const C1 = '0b7d4c1e-0000-4000-8000-0000000000c1';
    const C2 = '0b7d4c1e-0000-4000-8000-0000000000c2';
    const unbound = '0b7d4c1e-0000-4000-8000-0000000000c3';
    await bind((await contract({ endUnix: now + 40 * DAY })).id, C1);
    await bind((await contract({ endUnix: now + 20 * DAY }, ORG + 1)).id, C1);
    await bind((await contract({ endUnix: now + 50 * DAY })).id, C2);
    const revoked = await contract({ endUnix: now + 10 * DAY });
    await bind(revoked.id, C1);
    await contracts.lifecycle.revoke(revoked.id, 0, 'root');
    const counted = await contracts.binding.countClusterContracts([C1, C2.toUpperCase(), unbound]);
    expect(counted.counts).toEqual({ [C1]: 2, [C2]: 1, [unbound]: 0 });
    // When the first counted contract of each cluster ends (the revoked one counts for nothing): the count holds until then.
    expect(counted.endsUnix).toEqual({ [C1]: now + 20 * DAY, [C2]: now + 50 * DAY });
    await expect(contracts.binding.countClusterContracts(['garbage'])).rejects.toBeInstanceOf(InputError);
  });

  it('puts a deleted contract’s licenses on the revocation list too', async () => {
    const c = await contract();
    const cc = await bind(c.id, HUB);
    const license = await licenses.issueForBinding({ contractId: c.id, ccId: cc.id, ownerId: 0, actor: 'root', ownerEmail: '' });
    await contracts.lifecycle.delete(c.id, 0);
    const pem = (await licenses.revocationList()).pem;
    const crl = new x509.X509Crl(pem);
    expect(crl.entries.map((e) => BigInt(`0x${e.serialNumber}`).toString())).toContain(license.serial);
  });
});
