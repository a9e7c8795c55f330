import { InputError } from '@platform/errors';
import { pageOf, pageOfQuery, type Database, type PageLimits } from '@platform/db';
import { isUuidAnyCase, type orgsTeamsAuditV1 } from '@platform/proto';

type AuditEvent = orgsTeamsAuditV1.AuditEvent;
type Filters = orgsTeamsAuditV1.ListAuditEventsRequest;

/** 30 events a page unless asked, at most 100; a limit outside is moved to the nearer end. */
const PAGES: PageLimits = { defaultLimit: 30, maxLimit: 100 };

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
    const matching = this.db.table('audit_events').where((q) => {
      if (f.actor) q.where('actor_login', f.actor);
      if (f.action) q.where('action', f.action);
      if (f.org) q.where('org', f.org);
      if (f.targetPrefix) q.whereLike('target', `${f.targetPrefix.replace(/[\\%_]/g, '\\$&')}%`);
      if (f.sinceUnixMs) q.where('at', '>=', new Date(f.sinceUnixMs));
      if (f.untilUnixMs) q.where('at', '<', new Date(f.untilUnixMs));
    });
    const { rows, total } = await pageOfQuery<AuditRow>(matching, pageOf(f, PAGES), (q) =>
      q
        .orderBy([
          { column: 'at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .select('*'),
    );
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
