import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** A system_outages row (ids as numbers, tags parsed). */
export interface OutageRow {
  id: number;
  account_id: number | null;
  account_name: string;
  cluster_id: string;
  start_at: Date;
  end_at: Date;
  tags: string[];
  comments: string;
  created_by: string;
  created_at: Date;
}

export type NewOutage = Omit<OutageRow, 'id' | 'created_at'>;

/** What the report selects: outages ending after `start`, of an account, of a cluster, carrying any of `tags`. */
export interface OutageFilter {
  start?: Date;
  accountId?: number;
  clusterId?: string;
  tags?: string[];
}

const toRow = (r: Record<string, any>): OutageRow =>
  ({
    ...r,
    id: Number(r.id),
    account_id: r.account_id === null ? null : Number(r.account_id),
    start_at: new Date(r.start_at),
    end_at: new Date(r.end_at),
    created_at: new Date(r.created_at),
    tags: typeof r.tags === 'string' ? JSON.parse(r.tags) : r.tags,
  }) as OutageRow;

/** The system_outages table. */
export class OutagesStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): OutagesStore {
    return new OutagesStore(db);
  }

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /**
   * Holds, until the transaction ends, the lock of one account and cluster: two creates for the same pair run
   * one after the other, so the overlap check and the insert of one cannot interleave with the other's.
   */
  async lockPair(accountId: number | null, clusterId: string, trx: Knex.Transaction): Promise<void> {
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`system_outages:${accountId ?? ''}:${clusterId}`]);
  }

  /** The first outage of the account and cluster overlapping [start, end) (touching ends do not overlap). */
  async overlapping(o: Pick<NewOutage, 'account_id' | 'cluster_id' | 'start_at' | 'end_at'>, trx: Knex.Transaction) {
    const q = this.db
      .table('system_outages', trx)
      .where({ cluster_id: o.cluster_id })
      .andWhere('start_at', '<', o.end_at)
      .andWhere('end_at', '>', o.start_at)
      .orderBy('start_at')
      .first();
    if (o.account_id === null) q.whereNull('account_id');
    else q.andWhere({ account_id: o.account_id });
    const row = await q;
    return row ? toRow(row) : undefined;
  }

  async insert(o: NewOutage, trx: Knex.Transaction): Promise<OutageRow> {
    const [row] = await this.db
      .table('system_outages', trx)
      .insert({ ...o, tags: JSON.stringify(o.tags) })
      .returning('*');
    return toRow(row);
  }

  /** Outages matching the filter, newest first (by start, then id). */
  async list(f: OutageFilter): Promise<OutageRow[]> {
    const q = this.db.table('system_outages').orderBy([
      { column: 'start_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    if (f.start) q.andWhere('end_at', '>', f.start);
    if (f.accountId) q.andWhere({ account_id: f.accountId });
    if (f.clusterId) q.andWhere({ cluster_id: f.clusterId });
    const tags = f.tags ?? [];
    if (tags.length > 0)
      q.andWhere((w) => {
        for (const tag of tags) w.orWhereRaw('tags @> ?::jsonb', [JSON.stringify([tag])]);
      });
    return (await q).map(toRow);
  }

  /** The distinct tags of every outage, sorted. */
  async tags(): Promise<string[]> {
    const { rows } = await this.db.knex.raw(
      'select distinct t.tag from ??.system_outages o cross join lateral jsonb_array_elements_text(o.tags) as t(tag) order by t.tag',
      [this.db.schema],
    );
    return rows.map((r: { tag: string }) => r.tag);
  }
}
