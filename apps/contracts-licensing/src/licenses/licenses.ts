import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { InputError, MethodNotAllowedError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import { PRODUCTS } from '../contracts/catalog';
import type { Contracts } from '../contracts/contracts';
import { ContractsStore, json, unix, type ContractRow } from '../contracts/contracts-store';
import { enrolledElsewhere, notThisAccountsCluster, ownedBy, type Inventory } from '../contracts/inventory';
import { clusterUid } from '../contracts/validation';
import { issueLicense, revocationList, verifyLicense, type LicenseAuthority } from '../licensing';
import { quotaUse, type UsageSource } from './quota';


/**
 * Licenses from contracts (the contracts' issue-license, license registration; docs/licensing.md): the checks before issuing
 * (contract valid, offline allowed, quota), the certificate from the platform CA, its record in
 * `issued_licenses` with an audit event, registration's verification, and the revocation list of the licenses
 * of revoked or deleted contracts.
 */
export class Licenses {
  private readonly store: ContractsStore;

  constructor(
    private readonly db: Database,
    private readonly authority: LicenseAuthority,
    private readonly contracts: Contracts,
    private readonly inventory: Inventory,
    private readonly usage: UsageSource,
    private readonly log: Logger,
  ) {
    this.store = ContractsStore.create(db);
  }

  /** A license for the cluster bound as `ccId` to the contract (scoped to the owner); NotFound for either. */
  async issueForBinding(req: licensingV1.IssueContractLicenseRequest): Promise<licensingV1.License> {
    const contract = await this.contracts.listing.contract(req.contractId, req.ownerId);
    const cc = await this.store.cluster(contract.id, req.ccId);
    if (!cc) throw new NotFoundError(`contract ${contract.id} has no cluster ${req.ccId}`);
    return this.issue(contract, cc.cluster_uid, cc.id, req.actor, req.ownerEmail);
  }

  /**
   * A license for a cluster from the owner's active contract that has it bound (the newest one granting a
   * requested feature), or else from one that auto-assigns clusters, binding it first. The owner's accounts are
   * `ownerId` and `alsoOwnerIds` (the organizations the caller may issue licenses for), searched as one: the newest
   * bound contract of any of them, else the first that auto-assigns, `ownerId`'s first. An enrolled cluster is its
   * enroller's alone: only that account's contracts are searched, none when it is not among them. 405 when only
   * revoked or expired contracts have it; 404 when no contract of the accounts can cover it. The SAN email is
   * `ownerEmail` only for a contract of `ownerId`.
   */
  async issueForCluster(
    req: Omit<licensingV1.IssueClusterLicenseRequest, 'alsoOwnerIds'> & Partial<Pick<licensingV1.IssueClusterLicenseRequest, 'alsoOwnerIds'>>,
  ): Promise<licensingV1.License> {
    if (!req.cluster) throw new ValidationError('cluster: the cluster UUID is required', [{ field: 'cluster', description: 'missing' }]);
    let uid: string;
    try {
      uid = clusterUid(req.cluster);
    } catch {
      throw new ValidationError('cluster: must be a UUID', [{ field: 'cluster', description: 'not a UUID' }]);
    }
    const uncovered = () =>
      new NotFoundError(`no active contract of the account covers cluster ${uid}${req.features.length ? ` for ${req.features.join(', ')}` : ''}`);
    const accounts = [...new Set([req.ownerId, ...(req.alsoOwnerIds ?? [])].filter((id) => id > 0))];
    // Another account's enrolled cluster is answered as one no contract covers: the caller learns nothing of it.
    const inv = await this.inventory.cluster(uid);
    const owners = accounts.filter((id) => !enrolledElsewhere(inv, id));
    if (owners.length === 0) throw uncovered();
    const grants = (c: ContractRow) => req.features.length === 0 || c.features.some((f) => req.features.includes(f));
    const emailOf = (c: ContractRow) => (Number(c.owner_id) === req.ownerId ? req.ownerEmail : '');
    // Rows only: the views' cluster statuses would ask the inventory for every bound cluster.
    const bound = (await Promise.all(owners.map((ownerId) => this.store.list({ ownerId, boundTo: uid }))))
      .flat()
      .filter(grants)
      .sort((a, b) => b.id - a.id);
    const valid = bound.find((c) => isActive(c));
    if (valid) {
      const cc = (await this.store.clustersOf([valid.id])).find((b) => b.cluster_uid === uid);
      return this.issue(valid, uid, cc?.id ?? null, req.actor, emailOf(valid));
    }
    for (const ownerId of owners) {
      const auto = (await this.store.list({ ownerId, activeOnly: true })).find((c) => c.auto_assign_cluster && grants(c));
      if (!auto) continue;
      await this.contracts.binding.assign({ ownerId, cluster: uid, displayName: '', contractIds: [auto.id], actor: req.actor });
      const cc = (await this.store.clustersOf([auto.id])).find((b) => b.cluster_uid === uid);
      return this.issue(auto, uid, cc?.id ?? null, req.actor, emailOf(auto));
    }
    if (bound.length > 0) throw invalid(bound[0]);
    throw uncovered();
  }

  /**
   * Verifies a license presented at registration, as the command-line verifier does (exactly one certificate, the
   * platform CA's, for this cluster, valid, not revoked, granting a requested feature): 422 for anything that is no
   * such license, whatever the cluster. Then the cluster must be one a contract of the license's owner binds, and
   * not one another account enrolled; otherwise the answer is the one for a cluster the platform does not know
   * (400), so registration tells nothing about who enrolled what. A cluster that never enrolled (air-gapped, licensed
   * offline) registers like an enrolled one.
   */
  async verifyRegistration(req: licensingV1.VerifyRegistrationRequest): Promise<licensingV1.VerifiedRegistration> {
    const features = req.features.map((f) => f.trim()).filter(Boolean);
    if (features.length === 0) throw new InputError('features: at least one feature is required', [{ field: 'features', description: 'empty' }]);
    const clusterUID = req.clusterUid.trim().toLowerCase();
    const unknown = () =>
      new InputError(`cluster ${clusterUID} is not registered with the platform`, [
        { field: 'clusterUID', description: 'unknown cluster' },
      ]);
    // The license's record, read once: verification asks whether it is revoked, then whose it is.
    let record: Promise<IssuedRecord | undefined> | undefined;
    const recordOf = (serial: string) => (record ??= this.issuedRecord(serial));
    const verified = await verifyLicense(
      req.license,
      {
        clusterUID,
        features,
        caCert: req.caCert.length > 0 ? req.caCert : undefined,
        isRevoked: async (serial) => !!(await recordOf(serial))?.revoked_at,
      },
      this.authority,
    );
    const issued = await recordOf(verified.serial);
    // A license of the platform's CA the platform has no record of has no owner whose contracts could bind the cluster.
    if (!issued || issued.owner_id == null) throw unknown();
    const ownerId = Number(issued.owner_id);
    if (enrolledElsewhere(await this.inventory.cluster(clusterUID), ownerId)) throw unknown();
    const bound = await this.store.list({ ownerId, boundTo: clusterUID });
    if (bound.length === 0) throw unknown();
    return {
      serial: verified.serial,
      clusterUid: verified.clusterUID,
      features: verified.features,
      expiryUnix: unix(verified.notAfter),
      email: verified.email ?? '',
      ownerId,
      ownerLogin: issued.owner_login ?? '',
      contractId: Number(issued.contract_id),
    };
  }

  /**
   * Records a verified registration once per license: the cluster and the holder (the license's SAN email, and the
   * holder's account when registration found or made one, registration.ts). Registering again refreshes
   * `last_registered_at` and fills in an account found since. NotFound for a license not issued for that cluster.
   */
  async recordRegistration(req: licensingV1.RecordRegistrationRequest): Promise<licensingV1.Registration> {
    const clusterUID = req.clusterUid.trim().toLowerCase();
    await this.issuedFor(req.serial, clusterUID);
    const now = new Date();
    await this.db
      .table('license_registrations')
      .insert({
        serial: req.serial,
        cluster_uid: clusterUID,
        holder_email: req.holderEmail,
        holder_id: req.holderId,
        holder_login: req.holderLogin,
        first_registered_at: now,
        last_registered_at: now,
      })
      .onConflict('serial')
      .merge(
        req.holderId
          ? { last_registered_at: now, holder_id: req.holderId, holder_login: req.holderLogin }
          : { last_registered_at: now },
      );
    const [registration] = await this.registrations(req.serial);
    return registration;
  }

  /** NotFound unless the license `serial` was issued for the cluster (a lower-case UUID); with `trx`, within it. */
  async issuedFor(serial: string, clusterUID: string, trx?: Knex.Transaction): Promise<void> {
    const issued = await this.db.table('issued_licenses', trx).where({ serial, cluster_uid: clusterUID }).first('serial');
    if (!issued) throw new NotFoundError(`license ${serial} was not issued for cluster ${clusterUID}`);
  }

  /** The registered licenses, the latest registered first; with `serial`, that one only. */
  async registrations(serial?: string): Promise<licensingV1.Registration[]> {
    const q = this.db
      .table('license_registrations as r')
      .join('issued_licenses as l', 'l.serial', 'r.serial')
      .leftJoin('contracts as c', 'c.id', 'l.contract_id')
      .orderBy([
        { column: 'r.last_registered_at', order: 'desc' },
        { column: 'r.serial', order: 'asc' },
      ])
      .select('r.*', 'l.contract_id', 'l.features', 'l.not_after', 'c.owner_id', 'c.owner_login');
    if (serial) q.where('r.serial', serial);
    return (await q).map((r: Record<string, any>) => ({
      serial: r.serial,
      clusterUid: r.cluster_uid,
      contractId: Number(r.contract_id),
      ownerId: Number(r.owner_id ?? 0),
      ownerLogin: r.owner_login ?? '',
      holderEmail: r.holder_email,
      holderId: Number(r.holder_id),
      holderLogin: r.holder_login,
      features: r.features ?? [],
      firstRegisteredUnix: unix(r.first_registered_at),
      lastRegisteredUnix: unix(r.last_registered_at),
      expiryUnix: unix(r.not_after),
    }));
  }

  private issuedRecord(serial: string): Promise<IssuedRecord | undefined> {
    return this.db
      .table('issued_licenses')
      .leftJoin('contracts', 'contracts.id', 'issued_licenses.contract_id')
      .where('issued_licenses.serial', serial)
      .first('issued_licenses.revoked_at', 'issued_licenses.contract_id', 'contracts.owner_id', 'contracts.owner_login');
  }

  /** The revocation list: every license of a revoked or deleted contract, signed by the platform CA. */
  async revocationList(): Promise<licensingV1.RevocationListResponse> {
    const rows: { serial: string; revoked_at: Date }[] = await this.db.table('issued_licenses').whereNotNull('revoked_at').select('serial', 'revoked_at');
    const list = await revocationList(
      this.authority,
      rows.map((r) => ({ serial: r.serial, revokedAt: new Date(r.revoked_at) })),
    );
    return { der: Buffer.from(list.der), pem: list.pem };
  }

  /**
   * The issued licenses among these serials, with their contract's owner, plan and first license user; serials of
   * no issued license are left out. One query: a license whose contract was deleted keeps what its row holds.
   */
  async issued(serials: string[]): Promise<licensingV1.IssuedLicense[]> {
    if (serials.length > 1000) throw new InputError('at most 1000 license IDs at a time');
    // A serial is decimal (issued_licenses.serial); anything else names no license.
    const wanted = [...new Set(serials.filter((s) => /^\d{1,20}$/.test(s)))];
    if (wanted.length === 0) return [];
    const rows: Record<string, any>[] = await this.db
      .table('issued_licenses')
      .leftJoin('contracts', 'contracts.id', 'issued_licenses.contract_id')
      .whereIn('issued_licenses.serial', wanted)
      .orderBy('issued_licenses.serial')
      .select('issued_licenses.*', 'contracts.owner_id', 'contracts.product', 'contracts.emails');
    return rows.map((r) => ({
      serial: r.serial,
      contractId: Number(r.contract_id),
      ownerId: Number(r.owner_id ?? 0),
      email: (r.emails?.licenseUsers as string[] | undefined)?.[0] ?? '',
      clusterUid: r.cluster_uid,
      planName: PRODUCTS[r.product as string]?.plan ?? '',
      features: r.features ?? [],
      issuedUnix: unix(r.issued_at),
      notAfterUnix: unix(r.not_after),
      revokedUnix: r.revoked_at ? unix(r.revoked_at) : 0,
    }));
  }

  /** The checks, the certificate, and its record with an audit event. */
  private async issue(contract: ContractRow, uid: string, ccId: number | null, actor: string, ownerEmail: string): Promise<licensingV1.License> {
    if (!isActive(contract)) throw invalid(contract);
    const inv = await this.inventory.cluster(uid);
    if (enrolledElsewhere(inv, contract.owner_id)) throw notThisAccountsCluster(uid);
    const online = ownedBy(inv, contract.owner_id);
    if (!online && !contract.allow_offline)
      throw new MethodNotAllowedError(
        `cluster ${uid} is not in ${contract.owner_login}'s inventory, so its license would be an offline license, which contract ${contract.id} does not allow`,
      );
    await this.checkQuota(contract, actor);
    const product = PRODUCTS[contract.product];
    const issued = await issueLicense(this.authority, {
      clusterUID: uid,
      email: emailFor(contract, ownerEmail),
      productLine: product.productLine,
      tier: product.tier,
      features: contract.features.length > 0 ? contract.features : product.defaultFeatures,
      plan: product.plan,
      allowOffline: contract.allow_offline,
      disableAnalytics: contract.disable_analytics,
      enableClientBilling: contract.enable_client_billing,
      restrictions: contract.restrictions,
      notAfter: contract.end_at,
    });
    await this.db.transaction(async (trx) => {
      await this.db.table('issued_licenses', trx).insert({
        serial: issued.serial,
        contract_id: contract.id,
        contract_cluster_id: ccId,
        cluster_uid: uid,
        features: json(contract.features),
        issued_by: actor || 'unknown',
        issued_at: issued.notBefore,
        not_after: issued.notAfter,
      });
      await this.store.event(contract.id, actor, `license-issued: ${issued.serial} for ${uid}`, trx);
    });
    return {
      contractId: contract.id,
      startUnix: unix(contract.start_at),
      expiryUnix: unix(contract.end_at),
      license: Buffer.from(issued.der),
      serial: issued.serial,
    };
  }

  /**
   * The quota at issue time, from what the contract's bound clusters reported over its period so far, in the
   * contract's own metric (the name it was given, in messages and audit events too): each threshold crossed is
   * recorded once (with an audit event); over the limit with disabling on is 403.
   */
  private async checkQuota(contract: ContractRow, actor: string): Promise<void> {
    const use = await quotaUse(contract, this.store, this.inventory, this.usage);
    if (!use) return;
    const q = contract.quota;
    const { used, metric } = use;
    const percent = (100 * used) / q.limit!;
    const crossed = (q.alertThresholds ?? []).filter((t) => percent >= t);
    if (crossed.length > 0)
      await this.db.transaction(async (trx) => {
        const fresh = await this.db
          .table('quota_alerts', trx)
          .insert(crossed.map((threshold) => ({ contract_id: contract.id, threshold })))
          .onConflict(['contract_id', 'threshold'])
          .ignore()
          .returning('threshold');
        for (const { threshold } of fresh)
          await this.store.event(contract.id, actor, `quota-threshold-crossed: ${threshold}% of ${q.limit} ${metric} (used ${used.toFixed(2)})`, trx);
      });
    if (used >= q.limit! && q.disableLicenseOnLimitReached) {
      this.log.info({ contractId: contract.id, used, limit: q.limit, metric }, 'license refused: contract quota used up');
      throw new NotAllowedError(`contract ${contract.id} has used its quota: ${used.toFixed(2)} of ${q.limit} ${metric}; licenses are disabled until it is raised`);
    }
  }
}

interface IssuedRecord {
  revoked_at: Date | null;
  contract_id: string | number;
  owner_id: string | number | null;
  owner_login: string | null;
}

function isActive(c: ContractRow): boolean {
  return !c.revoked && new Date(c.end_at).getTime() > Date.now();
}

function invalid(c: ContractRow): MethodNotAllowedError {
  return new MethodNotAllowedError(c.revoked ? `contract ${c.id} is revoked` : `contract ${c.id} expired on ${new Date(c.end_at).toISOString()}`);
}

/** The license's SAN email: the owner's email, else the first license user's, else a no-reply address of the owner. */
function emailFor(contract: ContractRow, ownerEmail: string): string {
  return ownerEmail || contract.emails.licenseUsers?.[0] || `${contract.owner_login.toLowerCase()}@users.noreply.platform.local`;
}
