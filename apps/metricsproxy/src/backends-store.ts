import type { Database } from '@platform/db';

export type Flavor = 'a' | 'b';

/** A backends row (ids as numbers). */
export interface BackendRow {
  id: number;
  flavor: Flavor;
  owner_id: number;
  cluster_uid: string;
  project_id: string;
  hub_uid: string;
  client_org_id: string;
  datasource: string;
  datasource_uid: string;
  container: string;
  container_id: number;
}

export type BackendKey = Pick<BackendRow, 'flavor' | 'owner_id' | 'cluster_uid' | 'project_id'>;

const toRow = (r: Record<string, any>): BackendRow =>
  ({ ...r, id: Number(r.id), owner_id: Number(r.owner_id), container_id: Number(r.container_id) }) as BackendRow;

/** The backends table: what each registration made on its dashboard API. */
export class BackendsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): BackendsStore {
    return new BackendsStore(db);
  }

  async get(key: BackendKey): Promise<BackendRow | undefined> {
    const row = await this.db.table('backends').where(key).first();
    return row ? toRow(row) : undefined;
  }

  /** Inserts the registration or updates the one of the same flavor, cluster and project. */
  async put(row: Omit<BackendRow, 'id'>): Promise<void> {
    await this.db
      .table('backends')
      .insert(row)
      .onConflict(['flavor', 'owner_id', 'cluster_uid', 'project_id'])
      .merge({ ...row, updated_at: this.db.knex.fn.now() });
  }

  async remove(key: BackendKey): Promise<void> {
    await this.db.table('backends').where(key).delete();
  }

  /** Whether any registration of the flavor still uses the container (a flavor A folder). */
  async containerInUse(flavor: Flavor, container: string): Promise<boolean> {
    return (await this.db.table('backends').where({ flavor, container }).first('id')) !== undefined;
  }

  /** The client organization of a cluster's registration (either flavor; the latest when both exist). */
  async clientOrgOf(ownerId: number, clusterUid: string, projectId: string): Promise<{ found: boolean; clientOrgId: string }> {
    const row = await this.db
      .table('backends')
      .where({ owner_id: ownerId, cluster_uid: clusterUid, project_id: projectId })
      .orderBy('updated_at', 'desc')
      .first('client_org_id');
    return { found: row !== undefined, clientOrgId: row?.client_org_id ?? '' };
  }
}
