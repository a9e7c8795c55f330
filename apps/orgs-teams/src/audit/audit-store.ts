import { InputError } from '@platform/errors';
import type { Database } from '@platform/db';
import { isUuidAnyCase, type orgsTeamsAuditV1 } from '@platform/proto';

type AuditEvent = orgsTeamsAuditV1.AuditEvent;
type Filters = orgsTeamsAuditV1.ListAuditEventsRequest;

const MAX_PAGE = 100;

interface AuditRow {
  id: string;
  at: Date;
  actor_id: string | number;
  actor_login: string;
  action: string;
  method: string;
  route: string;
  target: string;
  org: string;
  status: number;
  request_id: string;
  client: string;
}

/** The audit trail in identity.audit_events. */
export class AuditStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): AuditStore {
    return new AuditStore(db);
  }

  /** Stores one event; the same id again changes nothing, so a retried delivery is kept once. */
  record(e: AuditEvent): Promise<void> {
    return this.recordAll([e]);
  }

  /** Stores events as `record` does, in one statement; nothing when one of them is not valid (400). */
  async recordAll(events: AuditEvent[]): Promise<void> {
    for (const e of events) {
      if (!isUuidAnyCase(e.id)) throw new InputError('id must be a UUID');
      if (!e.action || !e.actorLogin || !e.actorId) throw new InputError('an audit event needs an action and an actor');
    }
    if (events.length === 0) return;
    await this.db
      .table('audit_events')
      .insert(
        events.map((e) => ({
          id: e.id,
          at: new Date(e.timeUnixMs || Date.now()),
          actor_id: e.actorId,
          actor_login: e.actorLogin.slice(0, 64),
          action: e.action.slice(0, 64),
          method: e.method.slice(0, 8),
          route: e.route.slice(0, 255),
          target: e.target.slice(0, 1024),
          org: e.org.slice(0, 64),
          status: e.status,
          request_id: e.requestId.slice(0, 128),
          client: e.client.slice(0, 64),
        })),
      )
      .onConflict('id')
      .ignore();
  }

  /** One page of the events matching `f`, newest first, and how many match in all. */
  async list(f: Filters): Promise<{ events: AuditEvent[]; total: number }> {
    const limit = Math.min(Math.max(f.limit || 30, 1), MAX_PAGE);
    const page = Math.max(f.page || 1, 1);
    const matching = this.db.table('audit_events').where((q) => {
      if (f.actor) q.where('actor_login', f.actor);
      if (f.action) q.where('action', f.action);
      if (f.org) q.where('org', f.org);
      if (f.targetPrefix) q.whereLike('target', `${f.targetPrefix.replace(/[\\%_]/g, '\\$&')}%`);
      if (f.sinceUnixMs) q.where('at', '>=', new Date(f.sinceUnixMs));
      if (f.untilUnixMs) q.where('at', '<', new Date(f.untilUnixMs));
    });
    // One statement: the page and the count of all matches (a window over the filtered rows).
    const rows: (AuditRow & { total: string | number })[] = await matching
      .clone()
      .select('*', this.db.knex.raw('count(*) over () as total'))
      .orderBy([
        { column: 'at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset((page - 1) * limit);
    const total = rows.length > 0 ? Number(rows[0].total) : page === 1 ? 0 : Number((await matching.clone().count({ n: '*' }))[0].n);
    return { events: rows.map(toEvent), total };
  }
}

const toEvent = (r: AuditRow): AuditEvent => ({
  id: r.id,
  timeUnixMs: new Date(r.at).getTime(),
  actorId: Number(r.actor_id),
  actorLogin: r.actor_login,
  action: r.action,
  method: r.method,
  route: r.route,
  target: r.target,
  org: r.org,
  status: r.status,
  requestId: r.request_id,
  client: r.client,
});
