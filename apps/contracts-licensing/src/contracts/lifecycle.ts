import type { Database } from '@platform/db';
import { InputError, ValidationError } from '@platform/errors';
import type { contractsV1 } from '@platform/proto';
import { featuresFor } from './catalog';
import type { ContractView } from './cluster-status';
import { json, unix, type ContractRow, type ContractsStore } from './contracts-store';
import type { ContractDocuments } from './documents';
import type { ContractListing } from './listing';
import {
  checkEmails,
  checkFeatures,
  checkName,
  checkPeriod,
  checkProducts,
  checkQuota,
  checkRecipients,
  checkRestrictions,
  EMAIL_LISTS,
} from './validation';

const OWNER_TYPES = ['organization', 'user'];

/**
 * A contract's life: creating (one per product), updating its fields and document, extending, revoking,
 * deleting, and the owner's preferences. Every change writes its audit event in the transaction of the change.
 */
export class ContractLifecycle {
  constructor(
    private readonly db: Database,
    private readonly store: ContractsStore,
    private readonly listing: ContractListing,
    private readonly documents: ContractDocuments,
  ) {}

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
    if (f.endUnix === undefined)
      throw new InputError('end: the end of the contract is required', [{ field: 'end', description: 'missing' }]);
    checkPeriod(startUnix, f.endUnix);
    const document = await this.documents.store(req.document);
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
      if (document) await this.documents.discard(document.path);
      throw err;
    }
  }

  /** Replaces the fields given, and the document when one is given (the old one is deleted once the change commits). */
  async update(req: contractsV1.UpdateContractRequest): Promise<ContractView> {
    const f = req.fields ?? ({ features: [], featuresGiven: false } as contractsV1.ContractFields);
    checkName(f.name);
    if (f.emails) checkEmails(emailsOf(f.emails));
    if (f.quota) checkQuota(f.quota);
    if (f.restrictions !== undefined) checkRestrictions(f.restrictions);
    const document = await this.documents.store(req.document);
    let replaced = '';
    try {
      const row = await this.db.transaction(async (trx) => {
        const current = await this.listing.contract(req.id, req.ownerId, trx, true);
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
      if (replaced) await this.documents.discard(replaced);
      return await this.listing.afterChange(row);
    } catch (err) {
      if (document) await this.documents.discard(document.path);
      throw err;
    }
  }

  /**
   * Deletes the contract with its bindings and events; its licenses go on the revocation list in the same
   * transaction (their records stay), its document once the deletion commits.
   */
  async delete(id: number, ownerId: number): Promise<void> {
    const removed = await this.db.transaction(async (trx) => {
      const current = await this.listing.contract(id, ownerId, trx, true);
      await this.store.revokeLicenses(id, trx);
      await this.store.delete(id, trx);
      return current;
    });
    // Shared by the contracts created together: deleted only when no other contract names it.
    await this.documents.discardUnlessNamed(removed.document_path);
  }

  /** Replaces the end only. */
  async extend(id: number, ownerId: number, endUnix: number, actor: string): Promise<ContractView> {
    if (!Number.isSafeInteger(endUnix) || endUnix <= 0)
      throw new ValidationError('end: a Unix time in seconds is required', [{ field: 'end', description: 'missing or not a time' }]);
    const row = await this.db.transaction(async (trx) => {
      const current = await this.listing.contract(id, ownerId, trx, true);
      if (endUnix <= unix(current.start_at))
        throw new ValidationError('end: must be after the start of the contract', [{ field: 'end', description: 'not after start' }]);
      const updated = await this.store.update(id, { end_at: new Date(endUnix * 1000) }, trx);
      await this.store.event(id, actor, `contract-extended: end ${new Date(endUnix * 1000).toISOString()}`, trx);
      return updated;
    });
    return await this.listing.afterChange(row);
  }

  /**
   * Marks the contract revoked and puts its licenses on the revocation list, in one transaction;
   * revoking a revoked contract changes nothing more.
   */
  async revoke(id: number, ownerId: number, actor: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const current = await this.listing.contract(id, ownerId, trx, true);
      if (current.revoked) return;
      await this.store.update(id, { revoked: true }, trx);
      await this.store.revokeLicenses(id, trx);
      await this.store.event(id, actor, 'contract-revoked', trx);
    });
  }

  /** What the owner may change: auto-assignment and the client's usage-alert recipients. 400 for a recipient that is not an email. */
  async setPreferences(req: contractsV1.SetPreferencesRequest): Promise<ContractView> {
    if (req.usageAlertClientGiven) checkRecipients('usageAlertClient', req.usageAlertClient);
    const row = await this.db.transaction(async (trx) => {
      const current = await this.listing.contract(req.id, req.ownerId, trx, true);
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
    return await this.listing.afterChange(row);
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
