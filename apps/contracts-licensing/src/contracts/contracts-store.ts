import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** A contract row (ids as numbers, JSON columns parsed). */
export interface ContractRow {
  id: number;
  owner_id: number;
  owner_login: string;
  owner_type: string;
  name: string;
  product: string;
  features: string[];
  emails: Record<string, string[]>;
  quota: { enabled?: boolean; metric?: string; limit?: number; alertThresholds?: number[]; disableLicenseOnLimitReached?: boolean };
  start_at: Date;
  end_at: Date;
  document_path: string;
  document_name: string;
  document_type: string;
  allow_offline: boolean;
  auto_assign_cluster: boolean;
  disable_analytics: boolean;
  enable_client_billing: boolean;
  revoked: boolean;
  restrictions: string;
  created_at: Date;
}

/** A cluster bound to a contract. */
export interface ContractClusterRow {
  id: number;
  contract_id: number;
  cluster_uid: string;
  display_name: string;
  tags: string[];
}

/** What a contract filter asks: an owner (0: any), active ones only, offline ones only. */
export interface ContractFilter {
  ownerId: number;
  activeOnly?: boolean;
  offlineOnly?: boolean;
  boundTo?: string;
  notBoundTo?: string;
}

/** Another active contract of the same owner bound to the same cluster: what a duplicate-features check needs of it. */
export interface SameClusterContract {
  id: number;
  product: string;
  features: string[];
}

/** A binding with the owner's other active contracts bound to the same cluster (oldest binding first). */
export interface BoundCluster extends ContractClusterRow {
  others: SameClusterContract[];
}

/** A contract with its bindings (oldest first). */
export interface ContractWithClusters {
  contract: ContractRow;
  clusters: BoundCluster[];
}

const toContract = (r: Record<string, any>): ContractRow => ({ ...r, id: Number(r.id), owner_id: Number(r.owner_id) }) as ContractRow;
const toCluster = (r: Record<string, any>): ContractClusterRow =>
  ({ ...r, id: Number(r.id), contract_id: Number(r.contract_id) }) as ContractClusterRow;

/** A timestamp column as Unix seconds. */
export const unix = (d: Date) => Math.floor(new Date(d).getTime() / 1000);

/** JSON columns are written as JSON text (jsonb), the same on Postgres and the embedded database. */
export const json = (value: unknown) => JSON.stringify(value);

/** The rows of contracts, their clusters and events. Every method takes an optional transaction. */
export class ContractsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ContractsStore {
    return new ContractsStore(db);
  }

  async insert(row: Record<string, unknown>, trx: Knex.Transaction): Promise<ContractRow> {
    const [created] = await this.db.table('contracts', trx).insert(row).returning('*');
    return toContract(created);
  }

  /** The contract, when it exists and (owner 0: any owner) belongs to `ownerId`; `lock` holds it until the transaction ends. */
  async find(id: number, ownerId: number, trx?: Knex.Transaction, lock = false): Promise<ContractRow | undefined> {
    const q = this.db.table('contracts', trx).where({ id });
    if (ownerId) q.andWhere({ owner_id: ownerId });
    const row = await (lock ? q.forUpdate().first() : q.first());
    return row ? toContract(row) : undefined;
  }

  async list(filter: ContractFilter, trx?: Knex.Transaction): Promise<ContractRow[]> {
    const q = this.db.table('contracts', trx).orderBy('id', 'desc');
    if (filter.ownerId) q.where({ owner_id: filter.ownerId });
    if (filter.activeOnly) q.where({ revoked: false }).andWhere('end_at', '>', new Date());
    if (filter.offlineOnly) q.where({ allow_offline: true });
    const bound = (uid: string) => (sub: Knex.QueryBuilder) =>
      sub.select('contract_id').from(`${this.db.schema}.contract_clusters`).where({ cluster_uid: uid });
    if (filter.boundTo) q.whereIn('id', bound(filter.boundTo));
    if (filter.notBoundTo) q.whereNotIn('id', bound(filter.notBoundTo));
    return (await q).map(toContract);
  }

  /**
   * The contracts of `filter` (one of them with `id`), newest first, each with its bindings and, per binding, the
   * owner's other active contracts bound to the same cluster: one statement, the bindings aggregated as JSON, so
   * a list costs the same whatever the number of contracts, owners and clusters.
   */
  async withClusters(filter: ContractFilter & { id?: number }, trx?: Knex.Transaction): Promise<ContractWithClusters[]> {
    const { knex, schema } = this.db;
    // To the second: the lists asked many times a second are then the same statement, which the embedded
    // database answers from its result cache; a contract ending this second reads as active for under a second.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const clusters = knex.raw(
      `coalesce((select json_agg(json_build_object(
          'id', cc.id, 'contract_id', cc.contract_id, 'cluster_uid', cc.cluster_uid, 'display_name', cc.display_name,
          'tags', cc.tags,
          'others', coalesce((select json_agg(json_build_object('id', o.id, 'product', o.product, 'features', o.features) order by occ.id)
            from ??.contract_clusters occ join ??.contracts o on o.id = occ.contract_id
            where occ.cluster_uid = cc.cluster_uid and o.owner_id = c.owner_id and o.id <> c.id
              and o.revoked = false and o.end_at > ?), '[]'::json)
        ) order by cc.id)
        from ??.contract_clusters cc where cc.contract_id = c.id), '[]'::json) as clusters`,
      [schema, schema, now, schema],
    );
    const q = this.db.table('contracts as c', trx).select('c.*', clusters).orderBy('c.id', 'desc');
    if (filter.id !== undefined) q.where('c.id', filter.id);
    if (filter.ownerId) q.where('c.owner_id', filter.ownerId);
    if (filter.activeOnly) q.where('c.revoked', false).andWhere('c.end_at', '>', now);
    if (filter.offlineOnly) q.where('c.allow_offline', true);
    const bound = (uid: string) => (sub: Knex.QueryBuilder) =>
      sub.select('contract_id').from(`${schema}.contract_clusters`).where({ cluster_uid: uid });
    if (filter.boundTo) q.whereIn('c.id', bound(filter.boundTo));
    if (filter.notBoundTo) q.whereNotIn('c.id', bound(filter.notBoundTo));
    return (await q).map(({ clusters, ...row }: Record<string, any>) => ({
      contract: toContract(row),
      clusters: (typeof clusters === 'string' ? JSON.parse(clusters) : clusters).map((b: Record<string, any>) => ({
        ...toCluster(b),
        others: b.others.map((o: Record<string, any>) => ({ id: Number(o.id), product: o.product, features: o.features })),
      })),
    }));
  }

  async update(id: number, changes: Record<string, unknown>, trx: Knex.Transaction): Promise<ContractRow> {
    const [row] = await this.db
      .table('contracts', trx)
      .where({ id })
      .update({ ...changes, updated_at: this.db.knex.fn.now() })
      .returning('*');
    return toContract(row);
  }

  async delete(id: number, trx: Knex.Transaction): Promise<void> {
    await this.db.table('contracts', trx).where({ id }).delete();
  }

  /** Appends an audit event (in the caller's transaction, with the change it records). */
  async event(contractId: number, addedBy: string, event: string, trx: Knex.Transaction): Promise<void> {
    await this.db.table('contract_events', trx).insert({ contract_id: contractId, added_by: addedBy || 'unknown', event });
  }

  async events(contractId: number): Promise<{ id: number; contract_id: number; added_by: string; event: string; created_at: Date }[]> {
    const rows = await this.db.table('contract_events').where({ contract_id: contractId }).orderBy('id');
    return rows.map((r: Record<string, any>) => ({ ...r, id: Number(r.id), contract_id: Number(r.contract_id) }));
  }

  /** The clusters bound to these contracts, oldest binding first. */
  async clustersOf(contractIds: number[], trx?: Knex.Transaction): Promise<ContractClusterRow[]> {
    if (contractIds.length === 0) return [];
    return (await this.db.table('contract_clusters', trx).whereIn('contract_id', contractIds).orderBy('id')).map(toCluster);
  }

  async cluster(contractId: number, ccId: number, trx?: Knex.Transaction): Promise<ContractClusterRow | undefined> {
    const row = await this.db.table('contract_clusters', trx).where({ id: ccId, contract_id: contractId }).first();
    return row ? toCluster(row) : undefined;
  }

  /**
   * How many active (neither revoked nor expired) contracts of any owner bind each of these cluster UUIDs, and when the
   * first of them ends (the count holds until then, barring a write); counted by SQL.
   */
  async activeContractCounts(clusterUids: string[]): Promise<Map<string, { count: number; endsUnix: number }>> {
    if (clusterUids.length === 0) return new Map();
    const rows: { cluster_uid: string; n: string | number; first_end: Date | string }[] = await this.db
      .table('contract_clusters')
      .join('contracts', 'contracts.id', 'contract_clusters.contract_id')
      .whereIn('contract_clusters.cluster_uid', clusterUids)
      .where('contracts.revoked', false)
      .andWhere('contracts.end_at', '>', new Date())
      .groupBy('contract_clusters.cluster_uid')
      .select(
        'contract_clusters.cluster_uid',
        this.db.knex.raw('count(distinct contracts.id) as n'),
        this.db.knex.raw('min(contracts.end_at) as first_end'),
      );
    return new Map(rows.map((r) => [r.cluster_uid, { count: Number(r.n), endsUnix: unix(new Date(r.first_end)) }]));
  }

  /** Bindings of a cluster UUID: to any contract (owner 0) or to `ownerId`'s contracts. */
  async bindingsOf(clusterUid: string, ownerId: number, trx?: Knex.Transaction): Promise<(ContractClusterRow & { owner_id: number })[]> {
    const q = this.db
      .table('contract_clusters', trx)
      .join('contracts', 'contracts.id', 'contract_clusters.contract_id')
      .where({ cluster_uid: clusterUid })
      .select('contract_clusters.*', 'contracts.owner_id')
      .orderBy('contract_clusters.id');
    if (ownerId) q.andWhere('contracts.owner_id', ownerId);
    return (await q).map((r: Record<string, any>) => ({ ...toCluster(r), owner_id: Number(r.owner_id) }));
  }

  async bind(rows: { contract_id: number; cluster_uid: string; display_name: string; tags: string[] }[], trx: Knex.Transaction) {
    if (rows.length === 0) return;
    await this.db.table('contract_clusters', trx).insert(rows.map((r) => ({ ...r, tags: json(r.tags) })));
  }

  async unbind(ccId: number, trx: Knex.Transaction): Promise<void> {
    await this.db.table('contract_clusters', trx).where({ id: ccId }).delete();
  }

  /** The binding's display name: the name the contract gives the cluster (the inventory keeps the cluster's own). */
  async renameCluster(ccId: number, displayName: string, trx: Knex.Transaction): Promise<void> {
    await this.db.table('contract_clusters', trx).where({ id: ccId }).update({ display_name: displayName });
  }

  /**
   * Puts the licenses issued from a contract on the revocation list (its revocation or deletion), in the
   * caller's transaction; those revoked before keep their time.
   */
  async revokeLicenses(contractId: number, trx: Knex.Transaction): Promise<void> {
    await this.db
      .table('issued_licenses', trx)
      .where({ contract_id: contractId })
      .whereNull('revoked_at')
      .update({ revoked_at: this.db.knex.fn.now() });
  }

  async setTags(ccIds: number[], tags: string[], trx: Knex.Transaction): Promise<void> {
    if (ccIds.length > 0)
      await this.db
        .table('contract_clusters', trx)
        .whereIn('id', ccIds)
        .update({ tags: json(tags) });
  }
}
