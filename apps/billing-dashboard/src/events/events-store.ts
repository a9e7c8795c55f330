import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** One licensed product: a user's license on a cluster (the path of the dashboard rows). */
export interface LicensedProduct {
  userId: number;
  clusterUid: string;
  licenseId: string;
  product: string;
}

/** A stored event as the events/ row lists it. */
export interface EventRow {
  key: string;
  version: number;
  eventAt: Date;
  partialObjectMeta: unknown;
}

/** The stored value of one event (raw-event). */
export interface RawEventRow {
  resourceId: unknown;
  licenseId: string;
  version: number;
  eventAt: Date;
}

/** What events-histories counts: filters, each empty for any. */
export interface ReportFilter {
  group: string;
  resource: string;
  key: string;
}

/** The aggregate of events-histories, computed by one SQL statement. */
export interface EventsAggregate {
  total: number;
  /** The one group / resource every counted event shares; null when they differ or none was counted. */
  group: string | null;
  resource: string | null;
  /** The identity of the object when every counted event is of one key (that of its latest version); else null. */
  resourceId: unknown;
  /** The one resource-history key every counted event has; null when they differ or none was counted. */
  key: string | null;
  eventTimes: Date[];
  durationHours: number;
  averagePerHour: number;
}

/** jsonb comes back parsed from pg; PGlite may hand back text. */
const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/**
 * The resource_events and licensed_products tables as the four licensed-resource rows read them. Every query
 * starts with the four columns of the licensed product, the prefix of both resource_events indexes
 * (`_by_license_time` for events/, `_by_resource` for events-histories and raw-event).
 */
export class EventsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): EventsStore {
    return new EventsStore(db);
  }

  private events(p: LicensedProduct): Knex.QueryBuilder {
    return this.db
      .table('resource_events')
      .where({ user_id: p.userId, cluster_uid: p.clusterUid, license_id: p.licenseId, product: p.product });
  }

  /** Whether the cluster ever reported the product under the license (licensed_products' primary key). */
  async reported(p: LicensedProduct): Promise<boolean> {
    const row = await this.db
      .table('licensed_products')
      .where({ user_id: p.userId, cluster_uid: p.clusterUid, license_id: p.licenseId, product: p.product })
      .first(this.db.knex.raw('1 as found'));
    return row !== undefined;
  }

  /** Events that happened at or after `since`, newest first (by time, then version). */
  async recent(p: LicensedProduct, since: Date): Promise<EventRow[]> {
    const rows: Record<string, any>[] = await this.events(p)
      .where('event_at', '>=', since)
      .select('key', 'version', 'event_at', 'partial_object_meta')
      .orderBy([
        { column: 'event_at', order: 'desc' },
        { column: 'key', order: 'asc' },
        { column: 'version', order: 'desc' },
      ]);
    return rows.map((r) => ({
      key: r.key,
      version: Number(r.version),
      eventAt: new Date(r.event_at),
      partialObjectMeta: json(r.partial_object_meta),
    }));
  }

  /** The one event (key, version) of the product; undefined when there is none. */
  async raw(p: LicensedProduct, key: string, version: number): Promise<RawEventRow | undefined> {
    const r = await this.events(p).where({ key, version }).first('resource_id', 'license_id', 'version', 'event_at');
    return r && { resourceId: json(r.resource_id), licenseId: r.license_id, version: Number(r.version), eventAt: new Date(r.event_at) };
  }

  /**
   * Counts the matching events and measures their span in the database: the total, the event times oldest
   * first, the hours from the first to the last event, and the events per hour over that span (0 when the span
   * is 0: one event, or all at one instant, gives no rate).
   */
  async aggregate(p: LicensedProduct, f: ReportFilter): Promise<EventsAggregate> {
    const k = this.db.knex;
    const q = this.events(p);
    if (f.group) q.where({ group: f.group });
    if (f.resource) q.where({ resource: f.resource });
    if (f.key) q.where({ key: f.key });
    const hours = 'extract(epoch from max(event_at) - min(event_at)) / 3600.0';
    const [r]: Record<string, any>[] = await q.select(
      k.raw('count(*)::int as total'),
      k.raw('case when count(distinct "group") = 1 then min("group") end as "group"'),
      k.raw('case when count(distinct resource) = 1 then min(resource) end as resource'),
      k.raw('case when count(distinct key) = 1 then (array_agg(resource_id order by version desc))[1] end as resource_id'),
      k.raw('case when count(distinct key) = 1 then min(key) end as key'),
      // JSON, which pg and the embedded PGlite both hand back parsed (a timestamptz[] only pg parses).
      k.raw(`coalesce(json_agg(event_at order by event_at, version), '[]'::json) as event_times`),
      k.raw(`coalesce(${hours}, 0)::float8 as duration_hours`),
      k.raw(`case when ${hours} > 0 then count(*) / (${hours}) else 0 end::float8 as average_per_hour`),
    );
    return {
      total: Number(r.total),
      group: r.group ?? null,
      resource: r.resource ?? null,
      resourceId: r.resource_id == null ? null : json(r.resource_id),
      key: r.key ?? null,
      eventTimes: (json(r.event_times) as string[]).map((t) => new Date(t)),
      durationHours: Number(r.duration_hours),
      averagePerHour: Number(r.average_per_hour),
    };
  }
}
