import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** A row of clusters.clusters: a hub (hub_id null) or a managed cluster under one. */
export interface ClusterRow {
  id: number;
  uid: string;
  hub_id: number | null;
  owner_type: string;
  owner_id: number;
  name: string;
  display_name: string;
  provider: string;
  kubernetes_version: string;
  node_count: number;
  status: Record<string, unknown>;
  manager_endpoint: string;
  created_at: Date;
}

export interface FeatureRow {
  cluster_id: number;
  feature: string;
  version: string;
  updated_at: Date;
}

export interface NamespaceRow {
  cluster_id: number;
  name: string;
  created_at: Date;
}

/** What a create writes of a cluster. */
export type ClusterFields = Omit<ClusterRow, 'id' | 'created_at'>;

/** The rows of the cluster inventory (clusters, their namespaces and installed features). Every method takes an optional transaction. */
export class ClustersStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ClustersStore {
    return new ClustersStore(db);
  }

  async insert(fields: ClusterFields, trx?: Knex.Transaction): Promise<ClusterRow> {
    const [row] = await this.db
      .table('clusters', trx)
      .insert({ ...fields, status: JSON.stringify(fields.status) })
      .returning('*');
    return row;
  }

  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('clusters', trx).where({ id }).delete();
  }

  async byUid(uid: string, trx?: Knex.Transaction): Promise<ClusterRow | undefined> {
    return this.db.table('clusters', trx).where({ uid }).first();
  }

  async byId(id: number, trx?: Knex.Transaction): Promise<ClusterRow | undefined> {
    return this.db.table('clusters', trx).where({ id }).first();
  }

  /** The hubs of an owner, by name. */
  async hubsOf(ownerType: string, ownerId: number, trx?: Knex.Transaction): Promise<ClusterRow[]> {
    return this.db.table('clusters', trx).where({ owner_type: ownerType, owner_id: ownerId }).whereNull('hub_id').orderBy('name');
  }

  async hubByName(ownerType: string, ownerId: number, name: string, trx?: Knex.Transaction): Promise<ClusterRow | undefined> {
    return this.db.table('clusters', trx).where({ owner_type: ownerType, owner_id: ownerId, name }).whereNull('hub_id').first();
  }

  /** The managed clusters of a hub, by name. */
  async spokesOf(hubId: number, trx?: Knex.Transaction): Promise<ClusterRow[]> {
    return this.db.table('clusters', trx).where({ hub_id: hubId }).orderBy('name');
  }

  async spokeByName(hubId: number, name: string, trx?: Knex.Transaction): Promise<ClusterRow | undefined> {
    return this.db.table('clusters', trx).where({ hub_id: hubId, name }).first();
  }

  /** The installed features of the given clusters, by cluster then feature name. */
  async featuresOf(clusterIds: number[], trx?: Knex.Transaction): Promise<FeatureRow[]> {
    if (!clusterIds.length) return [];
    return this.db.table('cluster_features', trx).whereIn('cluster_id', clusterIds).orderBy(['cluster_id', 'feature']);
  }

  async namespacesOf(clusterId: number, trx?: Knex.Transaction): Promise<NamespaceRow[]> {
    return this.db.table('cluster_namespaces', trx).where({ cluster_id: clusterId }).orderBy('name');
  }
}
