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
  /** observed_at of the last inventory snapshot applied; null before any. */
  observed_at: Date | null;
  /** The users the agent last reported connected, by login (default [] on insert). */
  connected_users?: ReportedUser[];
}

/** A user an agent reports connected to a cluster (team auto-connect). */
export interface ReportedUser {
  login: string;
  role: string;
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

/** A cluster row with what its message carries besides: its hub's UID (null for a hub) and its installed features. */
export interface DescribedCluster extends ClusterRow {
  hub_uid: string | null;
  features: FeatureRow[];
}

/** What a create writes of a cluster. */
export type ClusterFields = Omit<ClusterRow, 'id' | 'created_at' | 'observed_at'>;

/** The rows of the cluster inventory (clusters, their namespaces and installed features). Every method takes an optional transaction. */
export class ClustersStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ClustersStore {
    return new ClustersStore(db);
  }

  async insert(fields: ClusterFields, trx?: Knex.Transaction): Promise<ClusterRow> {
    const [row] = await this.db
      .table('clusters', trx)
      .insert({
        ...fields,
        status: JSON.stringify(fields.status),
        // jsonb: an array must go as JSON text, or the driver would send a Postgres array.
        connected_users: JSON.stringify(fields.connected_users ?? []),
      })
      .returning('*');
    return row;
  }

  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('clusters', trx).where({ id }).delete();
  }

  /**
   * Clusters with their hub's UID and their features, in one statement: `where` narrows and orders `c` (the
   * clusters; `h` is the hub a managed cluster is under). Each cluster read of the inventory is then one statement.
   */
  async described(where: (q: Knex.QueryBuilder) => Knex.QueryBuilder, trx?: Knex.Transaction): Promise<DescribedCluster[]> {
    const k = trx ?? this.db.knex;
    const s = this.db.schema;
    const features = k.raw(
      `coalesce((select json_agg(json_build_object('cluster_id', f.cluster_id, 'feature', f.feature, 'version', f.version,
         'updated_at', f.updated_at) order by f.feature) from ??.cluster_features f where f.cluster_id = c.id), '[]'::json) as features`,
      [s],
    );
    const rows: DescribedCluster[] = await where(
      k.from(`${s}.clusters as c`).leftJoin(`${s}.clusters as h`, 'h.id', 'c.hub_id').select('c.*', 'h.uid as hub_uid', features),
    );
    // Timestamps inside JSON arrive as text.
    for (const r of rows) r.features = r.features.map((f) => ({ ...f, updated_at: new Date(f.updated_at) }));
    return rows;
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

  /** Locks a cluster's row for the rest of the transaction (inventory snapshots of one hub apply one at a time). */
  async lockByUid(uid: string, trx: Knex.Transaction): Promise<ClusterRow | undefined> {
    return this.db.table('clusters', trx).where({ uid }).forUpdate().first();
  }

  /** The clusters of these UIDs, whatever hub or owner they have. */
  async byUids(uids: string[], trx?: Knex.Transaction): Promise<ClusterRow[]> {
    if (!uids.length) return [];
    return this.db.table('clusters', trx).whereIn('uid', uids);
  }

  /** Updates the reported fields of a cluster (never its uid or owner). */
  async update(
    id: number,
    fields: Partial<Omit<ClusterRow, 'id' | 'uid' | 'owner_type' | 'owner_id' | 'created_at'>>,
    trx?: Knex.Transaction,
  ): Promise<void> {
    const row: Record<string, unknown> = { ...fields };
    if (fields.status !== undefined) row.status = JSON.stringify(fields.status);
    if (fields.connected_users !== undefined) row.connected_users = JSON.stringify(fields.connected_users);
    await this.db.table('clusters', trx).where({ id }).update(row);
  }

  /** Deletes these managed clusters of a hub (their namespaces and features go with them). */
  async deleteSpokes(hubId: number, ids: number[], trx?: Knex.Transaction): Promise<void> {
    if (!ids.length) return;
    await this.db.table('clusters', trx).where({ hub_id: hubId }).whereIn('id', ids).delete();
  }

  /** Makes a cluster's namespaces exactly these (names), keeping the rows of those it had. */
  async replaceNamespaces(clusterId: number, namespaces: { name: string; created_at: Date }[], trx?: Knex.Transaction): Promise<void> {
    const names = namespaces.map((n) => n.name);
    const gone = this.db.table('cluster_namespaces', trx).where({ cluster_id: clusterId });
    await (names.length ? gone.whereNotIn('name', names) : gone).delete();
    if (!namespaces.length) return;
    await this.db
      .table('cluster_namespaces', trx)
      .insert(namespaces.map((n) => ({ cluster_id: clusterId, name: n.name, created_at: n.created_at })))
      .onConflict(['cluster_id', 'name'])
      .ignore();
  }

  /** Makes a cluster's installed features exactly these; `updated_at` moves only when a version changes. */
  async replaceFeatures(clusterId: number, features: { feature: string; version: string }[], trx?: Knex.Transaction): Promise<void> {
    const names = features.map((f) => f.feature);
    const gone = this.db.table('cluster_features', trx).where({ cluster_id: clusterId });
    await (names.length ? gone.whereNotIn('feature', names) : gone).delete();
    if (!features.length) return;
    await this.db
      .table('cluster_features', trx)
      .insert(features.map((f) => ({ cluster_id: clusterId, feature: f.feature, version: f.version })))
      .onConflict(['cluster_id', 'feature'])
      .merge({ version: this.db.knex.raw('excluded.version'), updated_at: this.db.knex.fn.now() })
      .whereRaw('cluster_features.version is distinct from excluded.version');
  }
}
