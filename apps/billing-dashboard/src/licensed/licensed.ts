import { isUuid } from '@platform/agent-protocol';
import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { InputError } from '@platform/errors';
import type { licensedV1 } from '@platform/proto';

const unix = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);

/** The key a listing groups by, and the filters it needs. */
type Grouping = { by: ('user_id' | 'cluster_uid' | 'license_id' | 'product')[]; needs: ('userId' | 'clusterUid' | 'licenseId')[] };

const LISTINGS = {
  users: { by: ['user_id'], needs: [] },
  clusters: { by: ['cluster_uid'], needs: ['userId'] },
  licenses: { by: ['license_id'], needs: ['userId', 'clusterUid'] },
  products: { by: ['product'], needs: ['userId', 'clusterUid', 'licenseId'] },
  clusterLicenses: { by: ['user_id', 'license_id'], needs: ['clusterUid'] },
} satisfies Record<string, Grouping>;

/**
 * The licensed users, clusters, licenses and products of the dashboard, from `licensed_products`:
 * each group with its earliest first and latest last received time, latest first. A group is "active" in a
 * window when its last received time falls in it (`sinceUnix`); the primary key and the
 * `licensed_products_last_received` and `_cluster_license` indexes serve these queries.
 */
export class LicensedUsage {
  constructor(private readonly db: Database) {}

  /**
   * A listing with whether its scope was ever reported (`reported`): the user's rows on the query's cluster, under
   * its license, at any time and for any product. The dashboard answers 404 for a scope never reported and an empty
   * list for one with nothing in the window, from this one answer. Only an empty listing limited by a window or a
   * product asks the database a second time, and that is one index probe.
   */
  async answer(listing: keyof typeof LISTINGS, q: licensedV1.LicensedQuery): Promise<licensedV1.LicensedEntries> {
    const entries = await this.list(listing, q);
    if (entries.length > 0 || (!q.sinceUnix && !q.product)) return { entries, reported: entries.length > 0 };
    const scope = this.db.table('licensed_products').select(this.db.knex.raw('1')).first();
    this.filter(scope, { ...q, sinceUnix: 0, product: '' });
    return { entries, reported: (await scope) !== undefined };
  }

  async list(listing: keyof typeof LISTINGS, q: licensedV1.LicensedQuery): Promise<licensedV1.LicensedEntry[]> {
    const { by, needs } = LISTINGS[listing] as Grouping;
    for (const need of needs) if (!q[need]) throw new InputError(`${need} is required for this listing`);
    if (q.clusterUid && !isUuid(q.clusterUid)) throw new InputError('clusterUid must be a lower-case UUID');
    const k = this.db.knex;
    const query = this.db
      .table('licensed_products')
      .select(...by, k.raw('min(first_received_at) as first_received_at'), k.raw('max(last_received_at) as last_received_at'))
      .groupBy(...by)
      .orderBy([{ column: 'last_received_at', order: 'desc' }, ...by.map((column) => ({ column }))]);
    this.filter(query, q);
    if (listing === 'licenses')
      query.select(
        k.raw('array_agg(distinct product order by product) as products'),
        // Every cluster the user reported the license on, whatever the window: the license's clusters (LicensedPlan).
        k.raw(
          '(select array_agg(distinct o.cluster_uid::text order by o.cluster_uid::text) from ?? o where o.user_id = ? and o.license_id = ??) as cluster_uids',
          [`${this.db.schema}.licensed_products`, q.userId, 'licensed_products.license_id'],
        ),
      );
    const rows: Record<string, any>[] = await query;
    return rows.map((r) => ({
      userId: Number(r.user_id ?? q.userId ?? 0),
      clusterUid: r.cluster_uid ?? q.clusterUid ?? '',
      licenseId: r.license_id ?? q.licenseId ?? '',
      product: r.product ?? '',
      firstReceivedUnix: unix(r.first_received_at),
      lastReceivedUnix: unix(r.last_received_at),
      products: r.products ?? [],
      clusterUids: r.cluster_uids ?? [],
    }));
  }

  private filter(query: Knex.QueryBuilder, q: licensedV1.LicensedQuery): void {
    if (q.userId) query.where({ user_id: q.userId });
    if (q.clusterUid) query.where({ cluster_uid: q.clusterUid });
    if (q.licenseId) query.where({ license_id: q.licenseId });
    if (q.product) query.where({ product: q.product });
    if (q.sinceUnix) query.where('last_received_at', '>=', new Date(q.sinceUnix * 1000));
  }
}
