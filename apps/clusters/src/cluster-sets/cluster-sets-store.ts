import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import type { ClusterRow } from '../inventory/clusters-store';

export interface ClusterSetRow {
  id: number;
  hub_id: number;
  name: string;
  title: string;
  created_at: Date;
}

/** A managed cluster of a hub and the name of the set it is in (null when none). */
export type ManagedClusterRow = ClusterRow & { cluster_set: string | null };

/** The rows of cluster sets, their members, role bindings and bound namespaces. Every method takes an optional transaction. */
export class ClusterSetsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ClusterSetsStore {
    return new ClusterSetsStore(db);
  }

  /** Another table of the schema to join: `table()` is schema-qualified, and knex qualifies its joins with the same schema. */
  private q(table: string): string {
    return table;
  }

  /** The hub's sets by name with their member counts, counted in the database. */
  async setsWithCounts(hubId: number, trx?: Knex.Transaction): Promise<(ClusterSetRow & { clusters: number })[]> {
    const rows = await this.db
      .table('cluster_sets', trx)
      .leftJoin(this.q('cluster_set_members'), 'cluster_set_members.set_id', 'cluster_sets.id')
      .where('cluster_sets.hub_id', hubId)
      .groupBy('cluster_sets.id')
      .orderBy('cluster_sets.name')
      .select('cluster_sets.*', this.db.knex.raw('count(cluster_set_members.cluster_id)::int as clusters'));
    return rows as (ClusterSetRow & { clusters: number })[];
  }

  async setByName(hubId: number, name: string, trx?: Knex.Transaction, lock = false): Promise<ClusterSetRow | undefined> {
    const q = this.db.table('cluster_sets', trx).where({ hub_id: hubId, name });
    return (lock ? q.forUpdate() : q).first();
  }

  async insertSet(hubId: number, name: string, version: string, trx: Knex.Transaction): Promise<ClusterSetRow> {
    const [row] = await this.db.table('cluster_sets', trx).insert({ hub_id: hubId, name, version }).returning('*');
    return row;
  }

  async deleteSet(id: number, trx: Knex.Transaction): Promise<void> {
    await this.db.table('cluster_sets', trx).where({ id }).delete();
  }

  /** The hub's managed clusters with the set each is in, by name. */
  async managedClusters(hubId: number, trx?: Knex.Transaction): Promise<ManagedClusterRow[]> {
    return this.db
      .table('clusters', trx)
      .leftJoin(this.q('cluster_set_members'), 'cluster_set_members.cluster_id', 'clusters.id')
      .leftJoin(this.q('cluster_sets'), 'cluster_sets.id', 'cluster_set_members.set_id')
      .where('clusters.hub_id', hubId)
      .orderBy('clusters.name')
      .select('clusters.*', 'cluster_sets.name as cluster_set');
  }

  async members(setId: number, trx?: Knex.Transaction): Promise<ClusterRow[]> {
    return this.db
      .table('clusters', trx)
      .join(this.q('cluster_set_members'), 'cluster_set_members.cluster_id', 'clusters.id')
      .where('cluster_set_members.set_id', setId)
      .orderBy('clusters.name')
      .select('clusters.*');
  }

  async addMembers(setId: number, clusterIds: number[], trx: Knex.Transaction): Promise<void> {
    if (clusterIds.length)
      await this.db.table('cluster_set_members', trx).insert(clusterIds.map((id) => ({ set_id: setId, cluster_id: id })));
  }

  async removeMembers(setId: number, clusterIds: number[], trx: Knex.Transaction): Promise<void> {
    if (clusterIds.length)
      await this.db.table('cluster_set_members', trx).where({ set_id: setId }).whereIn('cluster_id', clusterIds).delete();
  }

  /**
   * The names of the hub's sets eligible for a client organization: with at least one member, and no member
   * imported by a client organization (an import being removed still counts until its cleanup is done).
   */
  async clientOrgEligibleNames(hub: ClusterRow, trx?: Knex.Transaction): Promise<string[]> {
    const rows = await this.db
      .table('cluster_sets', trx)
      .join(this.q('cluster_set_members'), 'cluster_set_members.set_id', 'cluster_sets.id')
      .join(this.q('clusters'), 'clusters.id', 'cluster_set_members.cluster_id')
      .leftJoin(this.q('client_org_clusters'), (j) =>
        j.on('client_org_clusters.uid', 'clusters.uid').andOnIn('client_org_clusters.status', ['Active', 'Deleting']),
      )
      .where('cluster_sets.hub_id', hub.id)
      .groupBy('cluster_sets.name')
      .havingRaw('count(client_org_clusters.uid) = 0')
      .orderBy('cluster_sets.name')
      .select('cluster_sets.name');
    return rows.map((r: { name: string }) => r.name);
  }

  async setNames(hubId: number, trx?: Knex.Transaction): Promise<string[]> {
    return this.db.table('cluster_sets', trx).where({ hub_id: hubId }).orderBy('name').pluck('name');
  }

  async grantRole(setId: number, roleRef: string, login: string, trx: Knex.Transaction): Promise<void> {
    await this.db.table('cluster_set_role_bindings', trx).insert({ set_id: setId, role_ref: roleRef, login }).onConflict().ignore();
  }

  async roleBindings(setId: number, trx?: Knex.Transaction): Promise<{ role_ref: string; login: string }[]> {
    return this.db
      .table('cluster_set_role_bindings', trx)
      .where({ set_id: setId })
      .orderBy(['role_ref', 'login'])
      .select('role_ref', 'login');
  }

  /** Every namespace binding of the hub's sets, by namespace then set name. */
  async bindings(hubId: number, trx?: Knex.Transaction): Promise<{ namespace: string; name: string }[]> {
    return this.db
      .table('cluster_set_namespaces', trx)
      .join(this.q('cluster_sets'), 'cluster_sets.id', 'cluster_set_namespaces.set_id')
      .where('cluster_sets.hub_id', hubId)
      .orderBy(['cluster_set_namespaces.namespace', 'cluster_sets.name'])
      .select('cluster_set_namespaces.namespace', 'cluster_sets.name');
  }

  async bind(setId: number, namespace: string, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('cluster_set_namespaces', trx).insert({ set_id: setId, namespace }).onConflict().ignore();
  }

  async unbind(setId: number, namespace: string, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('cluster_set_namespaces', trx).where({ set_id: setId, namespace }).delete();
  }
}
