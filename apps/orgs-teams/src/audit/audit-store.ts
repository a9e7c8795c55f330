import type { Knex } from 'knex';
import { InputError } from '@platform/errors';
import { pageOf, pageOfQuery, type Database, type PageLimits } from '@platform/db';
import { isUuidAnyCase, type orgsTeamsAuditV1, type orgsTeamsV1 } from '@platform/proto';

export type AuditEvent = orgsTeamsV1.AuditEvent;
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

/** An event as its row: refused (400) without a UUID, an action or an actor; texts cut to their columns' lengths. */
function auditRow(e: AuditEvent): AuditRow {
  if (!isUuidAnyCase(e.id)) throw new InputError('id must be a UUID');
  if (!e.action || !e.actorLogin || !e.actorId) throw new InputError('an audit event needs an action and an actor');
  return {
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
  };
}

/** Each column's type, for a statement's parameters (an insert from a select infers none). */
const AUDIT_COLUMN_TYPES: Record<keyof AuditRow, string> = {
  id: 'uuid',
  at: 'timestamptz',
  actor_id: 'bigint',
  actor_login: 'text',
  action: 'text',
  method: 'text',
  route: 'text',
  target: 'text',
  org: 'text',
  status: 'int',
  request_id: 'text',
  client: 'text',
};

/**
 * The part of a change's statement that records its audit event (`audit as (...)`, a CTE), and its parameters: the
 * event's row, written once `from` (a CTE of the statement) has a row, that is once the change is made; the same id
 * again changes nothing. Nothing when there is no event; refused (400) as `recordAll` refuses one.
 */
export function auditInStatement(db: Database, e: AuditEvent | undefined, from: string): { cte: string; bindings: Knex.Value[] } {
  if (!e) return { cte: '', bindings: [] };
  const row = auditRow(e);
  const columns = Object.keys(AUDIT_COLUMN_TYPES) as (keyof AuditRow)[];
  return {
    cte:
      ` audit as (insert into ${db.sqlName('audit_events')} (${columns.join(', ')})` +
      ` select ${columns.map((c) => `?::${AUDIT_COLUMN_TYPES[c]}`).join(', ')} from ${from} limit 1 on conflict (id) do nothing),`,
    bindings: columns.map((c) => row[c]),
  };
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
    const rows = events.map(auditRow);
    if (rows.length === 0) return;
    await this.db.table('audit_events').insert(rows).onConflict('id').ignore();
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
