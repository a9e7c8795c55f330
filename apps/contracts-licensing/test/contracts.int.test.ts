import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { InputError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import { FileObjectStorage } from '@platform/object-storage';
import type { contractsV1 } from '@platform/proto';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import type { Inventory, InventoryCluster } from '../src/contracts/inventory';
import { toContract } from '../src/contracts/service';

const ORG = 42;
const OTHER = 43;
const HUB = '0b7d4c1e-0000-4000-8000-000000000001';
const SPOKE = '0b7d4c1e-0000-4000-8000-000000000002';
const FOREIGN = '0b7d4c1e-0000-4000-8000-000000000009';
const AIRGAPPED = '0b7d4c1e-0000-4000-8000-0000000000a1';
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any;

const inv = (uid: string, ownerId: number, name: string, hubUid = ''): InventoryCluster => ({
  uid,
  name,
  displayName: name,
  provider: 'aws',
  kubernetesVersion: 'v1.31.0',
  nodeCount: 3,
  statusJson: '{}',
  hubUid,
  ownerType: 'organization',
  ownerId,
});

/** The inventory as clusters would answer: acme's hub and spoke, and another owner's cluster. */
const inventory: Inventory = {
  clusters: [inv(HUB, ORG, 'prod'), inv(SPOKE, ORG, 'spoke-1', HUB), inv(FOREIGN, OTHER, 'theirs')],
  async cluster(uid: string) {
    return this.clusters.find((c) => c.uid === uid);
  },
  async clustersByUid(uids: string[]) {
    return new Map(this.clusters.filter((c) => uids.includes(c.uid)).map((c) => [c.uid, c]));
  },
  async clustersOf(ownerType: string, ownerId: number) {
    return this.clusters.filter((c) => c.ownerType === ownerType && c.ownerId === ownerId);
  },
} as Inventory & { clusters: InventoryCluster[] };

const fields = (over: Partial<contractsV1.ContractFields> = {}): contractsV1.ContractFields => ({
  features: [],
  featuresGiven: false,
  endUnix: now + 365 * DAY,
  ...over,
});

describe('Contracts', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let contracts: Contracts;
  let dir: string;
  let storage: FileObjectStorage;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contracts-test-'));
    storage = new FileObjectStorage(dir);
    contracts = createContracts(db, storage, inventory, quiet);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const create = (over: Partial<contractsV1.CreateContractsRequest> = {}) =>
    contracts.lifecycle.create({
      ownerId: ORG,
      ownerLogin: 'acme',
      ownerType: 'organization',
      products: ['productdb'],
      fields: fields(),
      actor: 'root',
      ...over,
    });
  const events = async (id: number) => (await contracts.auditTrail.of(id, 0)).map((e) => e.event);

  it('makes one contract per product, sharing the document, and records the creation', async () => {
    const made = await create({
      products: ['productdb', 'productbackup'],
      fields: fields({ features: ['postgres', 'backup'], featuresGiven: true, emails: emails({ licenseUsers: ['ops@acme.io'] }) }),
      document: { fileName: 'MSA 2026.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7 signed') },
    });
    expect(made.map((v) => v.contract.product)).toEqual(['productdb', 'productbackup']);
    // Each contract gets the features of its own product.
    expect(made.map((v) => v.contract.features)).toEqual([['postgres'], ['backup']]);
    const [db1, backup] = made.map((v) => v.contract);
    expect(db1.document_path).toBe(backup.document_path);
    expect((await storage.get(db1.document_path))?.body.toString()).toBe('%PDF-1.7 signed');
    expect(await contracts.documents.of(db1.id, ORG)).toMatchObject({ fileName: 'MSA 2026.pdf', contentType: 'application/pdf' });
    expect(await events(db1.id)).toEqual(['contract-created: productdb']);
    const message = toContract(made[0]);
    expect(message).toMatchObject({
      ownerId: ORG,
      ownerLogin: 'acme',
      revoked: false,
      emails: { licenseUsers: ['ops@acme.io'], contactPerson: [] },
    });
  });

  it('refuses an empty product list, an unsupported product, a bad email or quota, and keeps nothing', async () => {
    const before = (await contracts.listing.list({ ownerId: 0 })).length;
    await expect(create({ products: [] })).rejects.toBeInstanceOf(InputError);
    await expect(create({ products: ['productx'] })).rejects.toThrow(/not a supported product/);
    await expect(create({ fields: fields({ emails: emails({ financeTeam: ['not-an-email'] }) }) })).rejects.toThrow(/financeTeam/);
    const quota = { enabled: true, metric: 'cpu-core-hours', limit: 10, alertThresholds: [50], disableLicenseOnLimitReached: false };
    await expect(create({ fields: fields({ quota: { ...quota, limit: -1 } }) })).rejects.toThrow(/quota.limit/);
    await expect(create({ fields: fields({ quota: { ...quota, metric: 'bananas' } }) })).rejects.toThrow(/quota.metric/);
    await expect(create({ fields: fields({ quota: { ...quota, alertThresholds: [0, 101] } }) })).rejects.toThrow(/alertThresholds/);
    await expect(create({ fields: fields({ endUnix: now - DAY, startUnix: now }) })).rejects.toThrow(/end/);
    await expect(
      create({
        document: { fileName: 'x.pdf', contentType: 'application/pdf', content: Buffer.from('x') },
        products: ['productdb', 'nope'],
      }),
    ).rejects.toThrow(/nope/);
    expect((await contracts.listing.list({ ownerId: 0 })).length).toBe(before);
  });

  it('takes the product’s quota metrics and the hour-based ones, each kept as sent; an unknown one is 400', async () => {
    const quota = (metric: string) => ({ enabled: true, metric, limit: 100, alertThresholds: [80], disableLicenseOnLimitReached: false });
    for (const metric of [
      'cpu_core_month',
      'memory_gib_month',
      'cpu-core-hours',
      'memory-gib-hours',
      'storage-gib-hours',
      'object-hours',
    ]) {
      const [made] = await create({ fields: fields({ quota: quota(metric) }) });
      expect(toContract(made).quota).toEqual(quota(metric));
      expect(toContract(await contracts.listing.get(made.contract.id, ORG)).quota?.metric).toBe(metric);
    }
    for (const metric of ['cpu-core-month', 'CPU_CORE_MONTH', 'storage_gib_month'])
      await expect(create({ fields: fields({ quota: quota(metric) }) })).rejects.toThrow(
        new InputError(
          'quota.metric: must be one of cpu_core_month, memory_gib_month, cpu-core-hours, memory-gib-hours, storage-gib-hours, object-hours',
        ),
      );
    // Renamed on update too, and answered as sent.
    const [{ contract }] = await create();
    const updated = await contracts.lifecycle.update({
      id: contract.id,
      ownerId: 0,
      fields: fields({ quota: quota('memory_gib_month') }),
      actor: 'root',
    });
    expect(toContract(updated).quota?.metric).toBe('memory_gib_month');
  });

  it('updates the fields given, replaces the document, extends, and records each change', async () => {
    const [{ contract }] = await create({ document: { fileName: 'a.pdf', contentType: 'application/pdf', content: Buffer.from('old') } });
    const oldPath = contract.document_path;
    const updated = await contracts.lifecycle.update({
      id: contract.id,
      ownerId: 0,
      fields: fields({ name: 'renewed', endUnix: undefined, allowOffline: true }),
      document: { fileName: 'b.pdf', contentType: 'application/pdf', content: Buffer.from('new') },
      actor: 'root',
    });
    expect(updated.contract).toMatchObject({ name: 'renewed', allow_offline: true, document_name: 'b.pdf' });
    expect(await storage.get(oldPath)).toBeUndefined();
    expect((await storage.get(updated.contract.document_path))?.body.toString()).toBe('new');
    await expect(
      contracts.lifecycle.update({
        id: contract.id,
        ownerId: 0,
        fields: fields({ emails: emails({ contactPerson: ['x'] }) }),
        actor: 'root',
      }),
    ).rejects.toThrow(/contactPerson/);
    const end = now + 2 * 365 * DAY;
    expect(toContract(await contracts.lifecycle.extend(contract.id, 0, end, 'root')).endUnix).toBe(end);
    await expect(contracts.lifecycle.extend(contract.id, 0, 0, 'root')).rejects.toBeInstanceOf(ValidationError);
    expect(await events(contract.id)).toEqual([
      'contract-created: productdb',
      'contract-updated: name, allowOffline, document',
      `contract-extended: end ${new Date(end * 1000).toISOString()}`,
    ]);
  });

  it('hides another owner’s contract (NotFound), and revokes once', async () => {
    const [{ contract }] = await create();
    await expect(contracts.listing.get(contract.id, OTHER)).rejects.toBeInstanceOf(NotFoundError);
    await expect(contracts.auditTrail.of(contract.id, OTHER)).rejects.toBeInstanceOf(NotFoundError);
    expect((await contracts.listing.get(contract.id, ORG)).contract.id).toBe(contract.id);
    await contracts.lifecycle.revoke(contract.id, 0, 'root');
    await contracts.lifecycle.revoke(contract.id, 0, 'root');
    expect((await contracts.listing.get(contract.id, 0)).contract.revoked).toBe(true);
    expect((await contracts.listing.list({ ownerId: ORG, activeOnly: true })).map((v) => v.contract.id)).not.toContain(contract.id);
    expect((await events(contract.id)).filter((e) => e === 'contract-revoked')).toHaveLength(1);
  });

  it('answers NotFound for another owner’s contract or none at every door naming it, and for a document never given; binding to it is 400', async () => {
    await expect(create({ products: [] })).rejects.toThrow(new InputError('products: at least one product is required'));
    const [{ contract }] = await create();
    for (const [id, ownerId] of [
      [contract.id, OTHER],
      [999_999, 0],
    ]) {
      const ref = { id, ccId: 1, ownerId, actor: 'x' };
      for (const door of [
        contracts.lifecycle.update({ id, ownerId, fields: fields({ name: 'x' }), actor: 'x' }),
        contracts.lifecycle.extend(id, ownerId, now + DAY, 'x'),
        contracts.lifecycle.setPreferences({
          id,
          ownerId,
          autoAssignCluster: true,
          usageAlertClient: [],
          usageAlertClientGiven: false,
          actor: 'x',
        }),
        contracts.documents.of(id, ownerId),
        contracts.listing.clusters(id, ownerId),
        contracts.binding.rename(ref, 'x'),
        contracts.binding.setTags(ref, []),
        contracts.binding.unbind(ref),
      ])
        await expect(door).rejects.toBeInstanceOf(NotFoundError);
      await expect(contracts.binding.bind(id, ownerId, [{ cluster: SPOKE, displayName: '', tags: [] }], 'x')).rejects.toBeInstanceOf(
        InputError,
      );
    }
    await expect(contracts.documents.of(contract.id, ORG)).rejects.toThrow(/has no document/);
    expect(await events(contract.id)).toEqual(['contract-created: productdb']);
  });

  it('binds clusters all or nothing, with their status and the features other contracts already cover', async () => {
    const [{ contract: a }] = await create({ fields: fields({ features: ['postgres', 'mysql'], featuresGiven: true }) });
    const [{ contract: b }] = await create({ fields: fields({ features: ['mysql', 'redis'], featuresGiven: true }) });
    await expect(contracts.binding.bind(a.id, 0, [], 'root')).rejects.toThrow(/at least one/);
    await expect(contracts.binding.bind(a.id, 0, [{ cluster: 'not-a-uuid', displayName: '', tags: [] }], 'root')).rejects.toThrow(
      /not a UUID/,
    );
    await expect(contracts.binding.bind(999_999, 0, [{ cluster: HUB, displayName: '', tags: [] }], 'root')).rejects.toBeInstanceOf(
      InputError,
    );
    const bound = await contracts.binding.bind(
      a.id,
      0,
      [{ cluster: HUB.toUpperCase(), displayName: 'Production', tags: ['prod'] }],
      'root',
    );
    expect(bound).toEqual([
      expect.objectContaining({
        contractId: a.id,
        cluster: HUB,
        displayName: 'Production',
        clusterStatus: { isImported: true, name: 'prod', tags: ['prod'], associatedContractId: a.id },
        duplicateContractFeatures: [],
      }),
    ]);
    // Already bound: 400, and the other cluster of the same request is not bound either.
    await expect(
      contracts.binding.bind(
        a.id,
        0,
        [
          { cluster: SPOKE, displayName: '', tags: [] },
          { cluster: HUB, displayName: '', tags: [] },
        ],
        'root',
      ),
    ).rejects.toThrow(/already associated/);
    expect((await contracts.listing.clusters(a.id, 0)).map((c) => c.cluster)).toEqual([HUB]);
    // b covers mysql too: binding the same cluster shows the overlap both ways.
    const [onB] = await contracts.binding.bind(b.id, ORG, [{ cluster: HUB, displayName: '', tags: [] }], 'alice');
    expect(onB.duplicateContractFeatures).toEqual([{ contractId: a.id, product: 'productdb', features: ['mysql'] }]);
    expect((await contracts.listing.clusters(a.id, 0))[0].duplicateContractFeatures).toEqual([
      { contractId: b.id, product: 'productdb', features: ['mysql'] },
    ]);
    // A cluster another owner enrolled is not this owner's to bind, not even from the admin side.
    await expect(contracts.binding.bind(a.id, 0, [{ cluster: FOREIGN, displayName: '', tags: [] }], 'root')).rejects.toBeInstanceOf(
      NotAllowedError,
    );
    expect((await contracts.listing.clusters(a.id, 0)).map((c) => c.cluster)).toEqual([HUB]);
    expect((await contracts.binding.importable(a.id, 0)).map((c) => c.uid)).toEqual([SPOKE]);
    await expect(contracts.binding.importable(999_999, 0)).rejects.toBeInstanceOf(InputError);
    expect(await events(b.id)).toContain(`cluster-bound: ${HUB}`);
  });

  it('renames and unbinds a bound cluster, and syncs tags across the contracts bound to it', async () => {
    const [{ contract: a }] = await create();
    const [{ contract: b }] = await create();
    const [{ contract: theirs }] = await create({ ownerId: OTHER, ownerLogin: 'other' });
    // A cluster nobody enrolled, which contracts of several owners may bind (each licenses it offline).
    const [ccA] = await contracts.binding.bind(a.id, 0, [{ cluster: AIRGAPPED, displayName: '', tags: ['old'] }], 'root');
    await contracts.binding.bind(b.id, 0, [{ cluster: AIRGAPPED, displayName: '', tags: [] }], 'root');
    await contracts.binding.bind(theirs.id, 0, [{ cluster: AIRGAPPED, displayName: '', tags: ['mine'] }], 'root');
    const tagsOf = async (id: number) =>
      (await contracts.listing.clusters(id, 0)).find((c) => c.cluster === AIRGAPPED)!.clusterStatus!.tags;
    // The owner's side: its own contracts only.
    await contracts.binding.setTags({ id: a.id, ccId: ccA.id, ownerId: ORG, actor: 'alice' }, ['blue', 'green', 'blue']);
    expect([await tagsOf(a.id), await tagsOf(b.id), await tagsOf(theirs.id)]).toEqual([['blue', 'green'], ['blue', 'green'], ['mine']]);
    // The admin side: every owner's.
    await contracts.binding.setTags({ id: a.id, ccId: ccA.id, ownerId: 0, actor: 'root' }, ['red']);
    expect([await tagsOf(a.id), await tagsOf(b.id), await tagsOf(theirs.id)]).toEqual([['red'], ['red'], ['red']]);
    await contracts.binding.rename({ id: a.id, ccId: ccA.id, ownerId: ORG, actor: 'alice' }, 'payments');
    // The contract's name for the cluster; its own name stays the inventory's (none: nobody enrolled it).
    expect((await contracts.listing.clusters(a.id, 0))[0]).toMatchObject({ displayName: 'payments', clusterStatus: { name: '' } });
    await expect(contracts.binding.rename({ id: a.id, ccId: ccA.id, ownerId: OTHER, actor: 'x' }, 'nope')).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await contracts.binding.unbind({ id: a.id, ccId: ccA.id, ownerId: ORG, actor: 'alice' });
    expect(await contracts.listing.clusters(a.id, 0)).toEqual([]);
    expect(await events(a.id)).toEqual([
      'contract-created: productdb',
      `cluster-bound: ${AIRGAPPED}`,
      `cluster-tags: ${AIRGAPPED} [blue, green]`,
      `cluster-tags: ${AIRGAPPED} [red]`,
      `cluster-renamed: ${AIRGAPPED} to payments`,
      `cluster-unbound: ${AIRGAPPED}`,
    ]);
  });

  it('refuses another owner’s enrolled cluster by every door without naming it, and records nothing of it', async () => {
    const [{ contract }] = await create({ products: ['productdb'] });
    const refusals = [
      contracts.binding.bind(contract.id, ORG, [{ cluster: FOREIGN, displayName: '', tags: [] }], 'alice'),
      contracts.binding.bind(contract.id, 0, [{ cluster: FOREIGN, displayName: '', tags: [] }], 'root'),
      contracts.binding.assign({ ownerId: ORG, cluster: FOREIGN, displayName: '', contractIds: [contract.id], actor: 'alice' }),
    ];
    for (const refused of refusals) {
      const error = await refused.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(NotAllowedError);
      // Neither the other owner's name for it nor anything else of its inventory.
      expect(JSON.stringify({ message: error!.message, ...error })).not.toMatch(/theirs/);
    }
    expect(await contracts.listing.clusters(contract.id, ORG)).toEqual([]);
    expect((await events(contract.id)).join('\n')).not.toContain(FOREIGN);
  });

  it('refuses a contract name with a NUL or over 255 characters on create and on update, and takes 255', async () => {
    const [{ contract }] = await create();
    for (const name of ['a\u0000b', 'n'.repeat(256)]) {
      await expect(create({ fields: fields({ name }) })).rejects.toThrow(/^name: at most 255 characters, without NUL/);
      await expect(
        contracts.lifecycle.update({ id: contract.id, ownerId: 0, fields: fields({ name }), actor: 'root' }),
      ).rejects.toBeInstanceOf(InputError);
    }
    const fine = await contracts.lifecycle.update({
      id: contract.id,
      ownerId: 0,
      fields: fields({ name: 'n'.repeat(255) }),
      actor: 'root',
    });
    expect(fine.contract.name).toBe('n'.repeat(255));
  });

  it('assigns one cluster to several contracts atomically, answers its status, and lists associated clusters', async () => {
    const [{ contract: a }] = await create({ ownerId: 77, ownerLogin: 'solo', ownerType: 'user' });
    const [{ contract: b }] = await create({ ownerId: 77, ownerLogin: 'solo', ownerType: 'user' });
    const uid = '0b7d4c1e-0000-4000-8000-0000000000aa';
    await expect(
      contracts.binding.assign({ ownerId: 77, cluster: uid, displayName: 'x', contractIds: [a.id, 999_999], actor: 'solo' }),
    ).rejects.toBeInstanceOf(InputError);
    expect(await contracts.listing.clusters(a.id, 77)).toEqual([]);
    await contracts.binding.assign({ ownerId: 77, cluster: uid, displayName: 'edge', contractIds: [a.id, b.id], actor: 'solo' });
    await contracts.binding.assign({ ownerId: 77, cluster: uid, displayName: 'edge', contractIds: [a.id], actor: 'solo' }); // no-op
    expect(await contracts.binding.associated(77)).toEqual([
      { cluster: uid, displayName: 'edge', tags: [], associatedContractIds: [a.id, b.id] },
    ]);
    expect((await contracts.listing.clusterStatus(77, uid, 0)).clusterStatus).toMatchObject({
      isImported: false,
      associatedContractId: b.id,
    });
    expect((await contracts.listing.clusterStatus(77, uid, a.id)).contractId).toBe(a.id);
    const unknown = await contracts.listing.clusterStatus(77, '0b7d4c1e-0000-4000-8000-0000000000bb', 0);
    expect(unknown).toMatchObject({ id: 0, contractId: 0, clusterStatus: { isImported: false, associatedContractId: 0 } });
    expect((await contracts.listing.list({ ownerId: 77, boundTo: uid })).length).toBe(2);
    expect((await contracts.listing.list({ ownerId: 77, notBoundTo: uid })).length).toBe(0);
  });

  it('changes preferences: auto-assignment and valid usage-alert recipients only, the admin-only lists kept', async () => {
    const [{ contract }] = await create({ fields: fields({ emails: emails({ contactPerson: ['c@acme.io'] }) }) });
    await expect(
      contracts.lifecycle.setPreferences({
        id: contract.id,
        ownerId: ORG,
        usageAlertClient: ['bad'],
        usageAlertClientGiven: true,
        actor: 'alice',
      }),
    ).rejects.toBeInstanceOf(InputError);
    const view = await contracts.lifecycle.setPreferences({
      id: contract.id,
      ownerId: ORG,
      autoAssignCluster: true,
      usageAlertClient: ['alerts@acme.io'],
      usageAlertClientGiven: true,
      actor: 'alice',
    });
    expect(view.contract.auto_assign_cluster).toBe(true);
    expect(view.contract.emails.usageAlertClient).toEqual(['alerts@acme.io']);
    expect(view.contract.emails.contactPerson).toEqual(['c@acme.io']);
    expect((await events(contract.id)).at(-1)).toBe('preferences-updated: autoAssignCluster=true, usageAlertClient=[alerts@acme.io]');
  });

  it('leaves a revoked contract out of the active offline ones; revoking or deleting an unknown contract is NotFound', async () => {
    const [kept, revoked] = (await create({ products: ['productdb', 'productbackup'], fields: fields({ allowOffline: true }) })).map(
      (v) => v.contract,
    );
    await contracts.lifecycle.revoke(revoked.id, 0, 'root');
    const offline = (await contracts.listing.list({ ownerId: ORG, activeOnly: true, offlineOnly: true })).map((v) => v.contract.id);
    expect(offline).toContain(kept.id);
    expect(offline).not.toContain(revoked.id);
    await expect(contracts.lifecycle.revoke(999_999, 0, 'root')).rejects.toBeInstanceOf(NotFoundError);
    await expect(contracts.lifecycle.delete(999_999, 0)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deletes a contract with its bindings and events, and its document once nothing refers to it', async () => {
    const made = await create({
      products: ['productvault', 'productingress'],
      document: { fileName: 'c.pdf', contentType: 'application/pdf', content: Buffer.from('shared') },
    });
    const [one, two] = made.map((v) => v.contract);
    await contracts.binding.bind(one.id, 0, [{ cluster: HUB, displayName: '', tags: [] }], 'root');
    await contracts.lifecycle.delete(one.id, 0);
    await expect(contracts.listing.get(one.id, 0)).rejects.toBeInstanceOf(NotFoundError);
    expect(await storage.get(two.document_path)).toBeDefined();
    await contracts.lifecycle.delete(two.id, 0);
    expect(await storage.get(two.document_path)).toBeUndefined();
  });
});

function emails(over: Partial<contractsV1.ContractEmails>): contractsV1.ContractEmails {
  return {
    contactPerson: [],
    signingAuthority: [],
    licenseUsers: [],
    financeTeam: [],
    usageAlertClient: [],
    usageAlertAdmin: [],
    ...over,
  };
}
