import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { InputError, NotFoundError, ValidationError } from '@platform/errors';
import type { ObjectStorage } from '@platform/object-storage';
import type { contractsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import { featuresFor } from './catalog';
import { ContractsStore, json, unix, type ContractClusterRow, type ContractFilter, type ContractRow } from './contracts-store';
import { enrolledElsewhere, memoInventory, notThisAccountsCluster, ownedBy, type Inventory, type InventoryCluster } from './inventory';
import { checkEmails, checkFeatures, checkName, checkPeriod, checkProducts, checkQuota, checkRecipients, checkRestrictions, clusterUid, EMAIL_LISTS } from './validation';

const OWNER_TYPES = ['organization', 'user'];
const MAX_TAGS = 50;
const MAX_TAG_LENGTH = 63;

/** A contract with the status of each cluster bound to it. */
export interface ContractView {
  contract: ContractRow;
  clusters: contractsV1.ContractClusterStatus[];
}

/**
 * Contracts (4.3, 4.4; docs/contracts.md): their rows, the clusters bound to them and the audit
 * trail. Every change writes its audit event in the transaction of the change. `ownerId` scopes a call to one
 * account's contracts (0: any owner, the site-admin routes); another owner's contract is NotFound.
 */
export class Contracts {
  private readonly store: ContractsStore;

  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly inventory: Inventory,
    private readonly log: Logger,
  ) {
    this.store = ContractsStore.create(db);
  }

  /** One contract per product, sharing the fields and the document (stored once). */
  async create(req: contractsV1.CreateContractsRequest): Promise<ContractView[]> {
    const products = [...new Set(req.products)];
    checkProducts(products);
    if (!req.ownerId || !OWNER_TYPES.includes(req.ownerType) || !req.ownerLogin)
      throw new InputError('the owner account is required (org, or the caller)');
    const f = req.fields ?? ({ features: [], featuresGiven: false } as contractsV1.ContractFields);
    checkFeatures(products, f.features);
    checkName(f.name);
    const emails = emailsOf(f.emails);
    checkEmails(emails);
    const quota = f.quota ?? { enabled: false, metric: '', limit: 0, alertThresholds: [], disableLicenseOnLimitReached: false };
    checkQuota(quota);
    const restrictions = f.restrictions ?? '';
    checkRestrictions(restrictions);
    const startUnix = f.startUnix ?? Math.floor(Date.now() / 1000);
    if (f.endUnix === undefined) throw new InputError('end: the end of the contract is required', [{ field: 'end', description: 'missing' }]);
    checkPeriod(startUnix, f.endUnix);
    const document = await this.storeDocument(req.document);
    try {
      const rows = await this.db.transaction(async (trx) => {
        const created: ContractRow[] = [];
        for (const product of products) {
          const row = await this.store.insert(
            {
              owner_id: req.ownerId,
              owner_login: req.ownerLogin,
              owner_type: req.ownerType,
              name: f.name ?? '',
              product,
              features: json(featuresFor(product, f.features)),
              emails: json(emails),
              quota: json(quotaJson(quota)),
              start_at: new Date(startUnix * 1000),
              end_at: new Date(f.endUnix! * 1000),
              document_path: document?.path ?? '',
              document_name: document?.name ?? '',
              document_type: document?.type ?? '',
              allow_offline: f.allowOffline ?? false,
              auto_assign_cluster: f.autoAssignCluster ?? false,
              disable_analytics: f.disableAnalytics ?? false,
              enable_client_billing: f.enableClientBilling ?? false,
              restrictions,
            },
            trx,
          );
          await this.store.event(row.id, req.actor, `contract-created: ${product}`, trx);
          created.push(row);
        }
        return created;
      });
      return rows.map((contract) => ({ contract, clusters: [] }));
    } catch (err) {
      if (document) await this.discardDocument(document.path);
      throw err;
    }
  }

  async list(filter: ContractFilter): Promise<ContractView[]> {
    const contracts = await this.store.list({
      ...filter,
      boundTo: filter.boundTo ? clusterUid(filter.boundTo) : undefined,
      notBoundTo: filter.notBoundTo ? clusterUid(filter.notBoundTo) : undefined,
    });
    return this.views(contracts);
  }

  async get(id: number, ownerId: number): Promise<ContractView> {
    return (await this.views([await this.contract(id, ownerId)]))[0];
  }

  /** Replaces the fields given, and the document when one is given (the old one is deleted once the change commits). */
  async update(req: contractsV1.UpdateContractRequest): Promise<ContractView> {
    const f = req.fields ?? ({ features: [], featuresGiven: false } as contractsV1.ContractFields);
    checkName(f.name);
    if (f.emails) checkEmails(emailsOf(f.emails));
    if (f.quota) checkQuota(f.quota);
    if (f.restrictions !== undefined) checkRestrictions(f.restrictions);
    const document = await this.storeDocument(req.document);
    let replaced = '';
    try {
      const row = await this.db.transaction(async (trx) => {
        const current = await this.contract(req.id, req.ownerId, trx, true);
        if (f.featuresGiven) checkFeatures([current.product], f.features);
        const changes: Record<string, unknown> = {};
        const changed: string[] = [];
        const set = (column: string, field: string, value: unknown) => {
          changes[column] = value;
          changed.push(field);
        };
        if (f.name !== undefined) set('name', 'name', f.name);
        if (f.featuresGiven) set('features', 'features', json(featuresFor(current.product, f.features)));
        if (f.emails) set('emails', 'emails', json(emailsOf(f.emails)));
        if (f.quota) set('quota', 'quota', json(quotaJson(f.quota)));
        const start = f.startUnix ?? unix(current.start_at);
        const end = f.endUnix ?? unix(current.end_at);
        if (f.startUnix !== undefined || f.endUnix !== undefined) checkPeriod(start, end);
        if (f.startUnix !== undefined) set('start_at', 'start', new Date(start * 1000));
        if (f.endUnix !== undefined) set('end_at', 'end', new Date(end * 1000));
        if (f.allowOffline !== undefined) set('allow_offline', 'allowOffline', f.allowOffline);
        if (f.autoAssignCluster !== undefined) set('auto_assign_cluster', 'autoAssignCluster', f.autoAssignCluster);
        if (f.disableAnalytics !== undefined) set('disable_analytics', 'disableAnalytics', f.disableAnalytics);
        if (f.enableClientBilling !== undefined) set('enable_client_billing', 'enableClientBilling', f.enableClientBilling);
        if (f.restrictions !== undefined) set('restrictions', 'restrictions', f.restrictions);
        if (document) {
          replaced = current.document_path;
          changes.document_path = document.path;
          changes.document_name = document.name;
          changes.document_type = document.type;
          changed.push('document');
        }
        if (changed.length === 0) return current;
        const updated = await this.store.update(current.id, changes, trx);
        await this.store.event(current.id, req.actor, `contract-updated: ${changed.join(', ')}`, trx);
        return updated;
      });
      if (replaced) await this.discardDocument(replaced);
      return (await this.views([row]))[0];
    } catch (err) {
      if (document) await this.discardDocument(document.path);
      throw err;
    }
  }

  /**
   * Deletes the contract with its bindings and events; its licenses go on the revocation list in the same
   * transaction (their records stay), its document once the deletion commits.
   */
  async delete(id: number, ownerId: number): Promise<void> {
    const removed = await this.db.transaction(async (trx) => {
      const current = await this.contract(id, ownerId, trx, true);
      await this.store.revokeLicenses(id, trx);
      await this.store.delete(id, trx);
      return current;
    });
    // Shared by the contracts created together: deleted only when no other contract names it.
    if (removed.document_path && (await this.db.table('contracts').where({ document_path: removed.document_path }).first('id')) === undefined)
      await this.discardDocument(removed.document_path);
  }

  /** Replaces the end only. */
  async extend(id: number, ownerId: number, endUnix: number, actor: string): Promise<ContractView> {
    if (!Number.isSafeInteger(endUnix) || endUnix <= 0)
      throw new ValidationError('end: a Unix time in seconds is required', [{ field: 'end', description: 'missing or not a time' }]);
    const row = await this.db.transaction(async (trx) => {
      const current = await this.contract(id, ownerId, trx, true);
      if (endUnix <= unix(current.start_at))
        throw new ValidationError('end: must be after the start of the contract', [{ field: 'end', description: 'not after start' }]);
      const updated = await this.store.update(id, { end_at: new Date(endUnix * 1000) }, trx);
      await this.store.event(id, actor, `contract-extended: end ${new Date(endUnix * 1000).toISOString()}`, trx);
      return updated;
    });
    return (await this.views([row]))[0];
  }

  /**
   * Marks the contract revoked and puts its licenses on the revocation list, in one transaction;
   * revoking a revoked contract changes nothing more.
   */
  async revoke(id: number, ownerId: number, actor: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const current = await this.contract(id, ownerId, trx, true);
      if (current.revoked) return;
      await this.store.update(id, { revoked: true }, trx);
      await this.store.revokeLicenses(id, trx);
      await this.store.event(id, actor, 'contract-revoked', trx);
    });
  }

  async document(id: number, ownerId: number): Promise<contractsV1.ContractDocument> {
    const c = await this.contract(id, ownerId);
    if (!c.document_path) throw new NotFoundError(`contract ${id} has no document`);
    return { path: c.document_path, fileName: c.document_name, contentType: c.document_type };
  }

  async audit(id: number, ownerId: number): Promise<contractsV1.AuditEvent[]> {
    await this.contract(id, ownerId);
    return (await this.store.events(id)).map((e) => ({
      id: e.id,
      contractId: e.contract_id,
      addedBy: e.added_by,
      event: e.event,
      createdUnix: unix(e.created_at),
    }));
  }

  async clusters(id: number, ownerId: number): Promise<contractsV1.ContractClusterStatus[]> {
    return (await this.get(id, ownerId)).clusters;
  }

  /**
   * Binds clusters, all or nothing. 400 for an empty list, a cluster that is not a UUID, one named twice, one
   * already bound to this contract, or an unknown contract (the user routes give 400 for it); 403 for a cluster
   * another account enrolled.
   */
  async bind(id: number, ownerId: number, refs: contractsV1.ClusterReference[], actor: string): Promise<contractsV1.ContractClusterStatus[]> {
    if (refs.length === 0) throw new InputError('clusters: at least one cluster is required', [{ field: 'clusters', description: 'empty' }]);
    const wanted = refs.map((r, i) => ({ uid: clusterUid(r.cluster, `clusters[${i}].cluster`), displayName: r.displayName, tags: tagsOf(r.tags) }));
    const uids = wanted.map((w) => w.uid);
    const twice = uids.find((u, i) => uids.indexOf(u) !== i);
    if (twice) throw new InputError(`clusters: ${twice} is given twice`);
    const found = await this.store.find(id, ownerId);
    if (!found) throw new InputError(`contract ${id} does not exist`);
    await this.refuseEnrolledElsewhere([found.owner_id], uids);
    await this.db.transaction(async (trx) => {
      const contract = await this.store.find(id, ownerId, trx, true);
      if (!contract) throw new InputError(`contract ${id} does not exist`);
      const bound = new Set((await this.store.clustersOf([id], trx)).map((c) => c.cluster_uid));
      const already = uids.find((u) => bound.has(u));
      if (already) throw new InputError(`cluster ${already} is already associated with contract ${id}`);
      await this.store.bind(
        wanted.map((w) => ({ contract_id: id, cluster_uid: w.uid, display_name: w.displayName, tags: w.tags })),
        trx,
      );
      for (const uid of uids) await this.store.event(id, actor, `cluster-bound: ${uid}`, trx);
    });
    return this.clusters(id, ownerId);
  }

  /** The owner's inventory clusters not bound to the contract; 400 for an unknown contract. */
  async importable(id: number, ownerId: number): Promise<contractsV1.ImportableCluster[]> {
    const contract = await this.store.find(id, ownerId);
    if (!contract) throw new InputError(`contract ${id} does not exist`);
    const bound = new Set((await this.store.clustersOf([id])).map((c) => c.cluster_uid));
    const all = await this.inventory.clustersOf(contract.owner_type, contract.owner_id);
    return all
      .filter((c) => !bound.has(c.uid))
      .map((c) => ({
        uid: c.uid,
        name: c.name,
        displayName: c.displayName,
        provider: c.provider,
        kubernetesVersion: c.kubernetesVersion,
        nodeCount: c.nodeCount,
        statusJson: c.statusJson,
        hubUid: c.hubUid,
      }));
  }

  async unbind(ref: contractsV1.ContractClusterRef): Promise<void> {
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      await this.store.unbind(cc.id, trx);
      await this.store.event(ref.id, ref.actor, `cluster-unbound: ${cc.cluster_uid}`, trx);
    });
  }

  async rename(ref: contractsV1.ContractClusterRef, name: string): Promise<void> {
    const clean = name.trim();
    if (!clean || clean.length > 255)
      throw new ValidationError('clusterName: 1 to 255 characters', [{ field: 'clusterName', description: 'empty or too long' }]);
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      await this.store.renameCluster(cc.id, clean, trx);
      await this.store.event(ref.id, ref.actor, `cluster-renamed: ${cc.cluster_uid} to ${clean}`, trx);
    });
  }

  /**
   * Replaces the tag set of a bound cluster and syncs it to every contract bound to the same cluster UUID: of
   * every owner on the admin side (`ownerId` 0), of the owner's own contracts otherwise. Each contract whose
   * tags change gets an audit event.
   */
  async setTags(ref: contractsV1.ContractClusterRef, tags: string[]): Promise<void> {
    const clean = tagsOf(tags);
    await this.db.transaction(async (trx) => {
      const cc = await this.binding(ref, trx);
      const same = await this.store.bindingsOf(cc.cluster_uid, ref.ownerId, trx);
      await this.store.setTags(
        same.map((b) => b.id),
        clean,
        trx,
      );
      for (const contractId of new Set(same.map((b) => b.contract_id)))
        await this.store.event(contractId, ref.actor, `cluster-tags: ${cc.cluster_uid} [${clean.join(', ')}]`, trx);
    });
  }

  /** A cluster's status as bound to the owner's active contracts (the first binding), or to `contractId`. */
  async clusterStatus(ownerId: number, cluster: string, contractId: number): Promise<contractsV1.ContractClusterStatus> {
    return (await this.batchStatus(ownerId, [cluster], contractId))[0];
  }

  async batchStatus(ownerId: number, clusters: string[], contractId: number): Promise<contractsV1.ContractClusterStatus[]> {
    const uids = clusters.map((c, i) => clusterUid(c, `clusters[${i}]`));
    const candidates = contractId
      ? [await this.contract(contractId, ownerId)]
      : await this.store.list({ ownerId, activeOnly: true });
    const context = await this.statusContext(candidates);
    return Promise.all(
      uids.map(async (uid) => {
        for (const contract of candidates) {
          const cc = context.bindings.get(contract.id)?.find((b) => b.cluster_uid === uid);
          if (cc) return this.status(contract, cc, context);
        }
        const inv = await context.inventory.cluster(uid);
        const visible = !!inv && (!ownerId || ownedBy(inv, ownerId));
        return {
          id: 0,
          contractId: 0,
          cluster: uid,
          displayName: '',
          clusterStatus: { isImported: visible, name: visible ? inv.name : '', tags: [], associatedContractId: 0 },
          duplicateContractFeatures: [],
          error: '',
        };
      }),
    );
  }

  /** Binds one cluster to several contracts of the owner, all or nothing; a contract it is bound to already stays as it is. */
  async assign(req: contractsV1.AssignClusterRequest): Promise<void> {
    const uid = clusterUid(req.cluster, 'clusterId');
    const ids = [...new Set(req.contractIds)];
    if (ids.length === 0) throw new InputError('contractIds: at least one contract is required', [{ field: 'contractIds', description: 'empty' }]);
    const owners: number[] = [];
    for (const id of ids) {
      const contract = await this.store.find(id, req.ownerId);
      if (!contract) throw new InputError(`contract ${id} does not exist`);
      owners.push(contract.owner_id);
    }
    await this.refuseEnrolledElsewhere(owners, [uid]);
    await this.db.transaction(async (trx) => {
      for (const id of ids) {
        const contract = await this.store.find(id, req.ownerId, trx, true);
        if (!contract) throw new InputError(`contract ${id} does not exist`);
      }
      const bound = new Set((await this.store.clustersOf(ids, trx)).filter((c) => c.cluster_uid === uid).map((c) => c.contract_id));
      const fresh = ids.filter((id) => !bound.has(id));
      await this.store.bind(
        fresh.map((id) => ({ contract_id: id, cluster_uid: uid, display_name: req.displayName, tags: [] })),
        trx,
      );
      for (const id of fresh) await this.store.event(id, req.actor, `cluster-bound: ${uid}`, trx);
    });
  }

  /** Per cluster bound to the owner's active contracts: those contracts, its display name and tags. */
  /**
   * For each cluster UUID, how many active contracts of any owner bind it (the dashboard's noOfAssociatedContracts):
   * "associated" as in AssociatedClusters, active contracts only. At most 1,000 UUIDs; a bad one is 400.
   */
  async countClusterContracts(clusters: string[]): Promise<Record<string, number>> {
    if (clusters.length > 1000) throw new InputError('at most 1000 clusters at a time');
    const uids = [...new Set(clusters.map((c) => clusterUid(c)))];
    const counts = await this.store.activeContractCounts(uids);
    return Object.fromEntries(uids.map((uid) => [uid, counts.get(uid) ?? 0]));
  }

  async associated(ownerId: number): Promise<contractsV1.AssociatedCluster[]> {
    const contracts = await this.store.list({ ownerId, activeOnly: true });
    const bindings = await this.store.clustersOf(contracts.map((c) => c.id));
    const byCluster = new Map<string, contractsV1.AssociatedCluster>();
    for (const b of bindings) {
      const entry = byCluster.get(b.cluster_uid) ?? { cluster: b.cluster_uid, displayName: '', tags: [], associatedContractIds: [] };
      entry.associatedContractIds.push(b.contract_id);
      entry.displayName ||= b.display_name;
      entry.tags = b.tags;
      byCluster.set(b.cluster_uid, entry);
    }
    return [...byCluster.values()];
  }

  /** What the owner may change: auto-assignment and the client's usage-alert recipients. 400 for a recipient that is not an email. */
  async setPreferences(req: contractsV1.SetPreferencesRequest): Promise<ContractView> {
    if (req.usageAlertClientGiven) checkRecipients('usageAlertClient', req.usageAlertClient);
    const row = await this.db.transaction(async (trx) => {
      const current = await this.contract(req.id, req.ownerId, trx, true);
      const changes: Record<string, unknown> = {};
      const changed: string[] = [];
      if (req.autoAssignCluster !== undefined) {
        changes.auto_assign_cluster = req.autoAssignCluster;
        changed.push(`autoAssignCluster=${req.autoAssignCluster}`);
      }
      if (req.usageAlertClientGiven) {
        changes.emails = json({ ...current.emails, usageAlertClient: req.usageAlertClient });
        changed.push(`usageAlertClient=[${req.usageAlertClient.join(', ')}]`);
      }
      if (changed.length === 0) return current;
      const updated = await this.store.update(current.id, changes, trx);
      await this.store.event(current.id, req.actor, `preferences-updated: ${changed.join(', ')}`, trx);
      return updated;
    });
    return (await this.views([row]))[0];
  }

  /** The contract, or NotFound (also for another owner's contract). */
  async contract(id: number, ownerId: number, trx?: Knex.Transaction, lock = false): Promise<ContractRow> {
    const row = await this.store.find(id, ownerId, trx, lock);
    if (!row) throw new NotFoundError(`contract ${id} does not exist`);
    return row;
  }

  /** 403 when one of the clusters is enrolled by an account other than one of these contract owners (docs/licensing.md). */
  private async refuseEnrolledElsewhere(ownerIds: number[], uids: string[]): Promise<void> {
    const clusters = await Promise.all(uids.map((uid) => this.inventory.cluster(uid)));
    uids.forEach((uid, i) => {
      if (ownerIds.some((ownerId) => enrolledElsewhere(clusters[i], ownerId))) throw notThisAccountsCluster(uid);
    });
  }

  /** A binding of the contract (scoped to the owner); NotFound otherwise. */
  private async binding(ref: contractsV1.ContractClusterRef, trx: Knex.Transaction): Promise<ContractClusterRow> {
    await this.contract(ref.id, ref.ownerId, trx, true);
    const cc = await this.store.cluster(ref.id, ref.ccId, trx);
    if (!cc) throw new NotFoundError(`contract ${ref.id} has no cluster ${ref.ccId}`);
    return cc;
  }

  /** Contracts with the status of their clusters, the inventory asked once per cluster. */
  private async views(contracts: ContractRow[]): Promise<ContractView[]> {
    const context = await this.statusContext(contracts);
    return Promise.all(
      contracts.map(async (contract) => ({
        contract,
        clusters: await Promise.all((context.bindings.get(contract.id) ?? []).map((cc) => this.status(contract, cc, context))),
      })),
    );
  }

  /** What the status of bindings needs: each contract's bindings, the owners' other active contracts by cluster, the inventory. */
  private async statusContext(contracts: ContractRow[]) {
    const inventory = memoInventory(this.inventory);
    const bindings = groupBy(await this.store.clustersOf(contracts.map((c) => c.id)), (b) => b.contract_id);
    const owners = [...new Set(contracts.map((c) => c.owner_id))];
    const active = (await Promise.all(owners.map((ownerId) => this.store.list({ ownerId, activeOnly: true })))).flat();
    const activeBindings = await this.store.clustersOf(active.map((c) => c.id));
    const activeById = new Map(active.map((c) => [c.id, c]));
    const activeByCluster = groupBy(activeBindings, (b) => b.cluster_uid);
    return { inventory, bindings, activeById, activeByCluster };
  }

  private async status(
    contract: ContractRow,
    cc: ContractClusterRow,
    context: Awaited<ReturnType<Contracts['statusContext']>>,
  ): Promise<contractsV1.ContractClusterStatus> {
    let inv: InventoryCluster | undefined;
    let error = '';
    try {
      inv = await context.inventory.cluster(cc.cluster_uid);
    } catch (err) {
      // The inventory being away does not fail the contract's answer: the status says so.
      error = `cluster inventory unavailable: ${(err as Error).message}`;
      this.log.warn({ err, cluster: cc.cluster_uid }, 'cluster inventory unavailable for a contract cluster status');
    }
    const duplicates: contractsV1.DuplicateContractFeatures[] = [];
    for (const other of context.activeByCluster.get(cc.cluster_uid) ?? []) {
      const o = context.activeById.get(other.contract_id);
      if (!o || o.id === contract.id || o.owner_id !== contract.owner_id) continue;
      const overlap = o.features.filter((f) => contract.features.includes(f));
      if (overlap.length > 0) duplicates.push({ contractId: o.id, product: o.product, features: overlap });
    }
    return {
      id: cc.id,
      contractId: cc.contract_id,
      cluster: cc.cluster_uid,
      displayName: cc.display_name,
      clusterStatus: {
        isImported: ownedBy(inv, contract.owner_id),
        // Another account's cluster lends the binding nothing of its own (its name stays with its owner).
        name: cc.name || (ownedBy(inv, contract.owner_id) ? inv.name : ''),
        tags: cc.tags,
        associatedContractId: cc.contract_id,
      },
      duplicateContractFeatures: duplicates,
      error,
    };
  }

  /** Stores an uploaded document under a fresh key; undefined when none was given. */
  private async storeDocument(doc: contractsV1.Document | undefined): Promise<{ path: string; name: string; type: string } | undefined> {
    if (!doc) return undefined;
    const name = safeFileName(doc.fileName);
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(doc.contentType) ? doc.contentType : 'application/octet-stream';
    const path = `contracts/documents/${randomUUID()}/${name}`;
    await this.storage.put(path, Buffer.from(doc.content), type);
    return { path, name: doc.fileName.slice(0, 255) || name, type };
  }

  /** Deletes a stored document nothing refers to any more; a failure leaves an unreferenced object, logged. */
  private async discardDocument(path: string): Promise<void> {
    await this.storage.delete(path).catch((err) => this.log.warn({ err, path }, 'could not delete a contract document'));
  }
}


function emailsOf(e: contractsV1.ContractEmails | undefined): Record<string, string[]> {
  return Object.fromEntries(EMAIL_LISTS.map((list) => [list, [...new Set((e?.[list] ?? []).map((a) => a.trim()).filter(Boolean))]]));
}

function quotaJson(q: contractsV1.Quota) {
  return {
    enabled: q.enabled,
    metric: q.metric,
    limit: q.limit,
    alertThresholds: [...new Set(q.alertThresholds)].sort((a, b) => a - b),
    disableLicenseOnLimitReached: q.disableLicenseOnLimitReached,
  };
}

/** Tags: trimmed, distinct, at most 50 of at most 63 characters (400 otherwise). */
function tagsOf(tags: string[]): string[] {
  const clean = [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
  if (clean.length > MAX_TAGS || clean.some((t) => t.length > MAX_TAG_LENGTH))
    throw new ValidationError(`tags: at most ${MAX_TAGS} tags of at most ${MAX_TAG_LENGTH} characters`, [{ field: 'tags', description: 'too many or too long' }]);
  return clean;
}

/** An object-key-safe file name: letters, digits, '.', '_' and '-', starting with a letter or digit. */
function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 120);
  return clean || 'document';
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const item of items) {
    const list = map.get(key(item));
    if (list) list.push(item);
    else map.set(key(item), [item]);
  }
  return map;
}
