import { randomUUID } from 'node:crypto';
import { CoalescedSends, type Merge } from '@platform/bus';
import type { ApiRequest as Request } from './api-request';
import type { Logger } from '@platform/service-kit';
import { operationIdOf } from './api-names';
import type { Backends } from './backends';
import type { AuditWith, EdgeContext, Route } from './route';

/** The API root the audited target is given under (its paths are those of the API document). */
const API_ROOT = '/api/v1';

/** The request's path under the API root (a router's req.path is only the part below its mount point). */
const targetOf = (req: Request) => {
  // A router mounted at /orgs answers POST /orgs with req.path "/": no trailing slash in the trail.
  const full = `${req.baseUrl}${req.path}`.replace(/(.)\/$/, '$1');
  return full.startsWith(API_ROOT) ? full.slice(API_ROOT.length) : full;
};

/**
 * Whether a row's successful answers are audited: every write by a known caller, unless the row says otherwise
 * (docs/audit.md).
 */
export const isAudited = (route: Route) => route.method !== 'get' && route.audit !== false;

/**
 * The audit event of a change a row makes, made before its handler runs so that a write can record it in its own
 * statement (AuditWith). Undefined when the row is not audited or nobody signed in. Nothing the request carried is
 * kept beyond its path and org context, so no secret of a body reaches the trail.
 */
export function auditEventOf(route: Route, req: Request, ctx: Pick<EdgeContext, 'caller' | 'org'>): AuditWith | undefined {
  if (!ctx.caller || !isAudited(route)) return undefined;
  const event = {
    id: randomUUID(),
    timeUnixMs: Date.now(),
    actorId: ctx.caller.id,
    actorLogin: ctx.caller.login,
    action: operationIdOf(route),
    method: route.method.toUpperCase(),
    route: route.path.replace(/:(\w+)/g, '{$1}'),
    target: targetOf(req),
    org: ctx.org?.name ?? '',
    // What the row answers on success; the edge sets the answer's own before it records the event.
    status: route.response.status,
    requestId: req.requestId,
    client: req.ip ?? '',
  };
  return { event, recorded: false };
}

/** A write's answer, noting on the way whether it recorded the request's audit event (its `auditRecorded`). */
export function recordedWith<T extends { auditRecorded?: boolean | undefined }>(audit: AuditWith | undefined, answer: T): T {
  if (audit && answer.auditRecorded) audit.recorded = true;
  return answer;
}

/**
 * Records a change the API answered with success: one `audit` log line (the complete trail, for log collectors)
 * and one event in orgs-teams' audit table (listed by GET /admin/audit-events), unless the write recorded it there
 * already with the same status. Recording never delays or fails the answer: the event is sent after it (with others
 * answered meanwhile: auditTrail), and a failure to store it is logged with the event.
 */
export function recordChange(audit: AuditWith | undefined, status: number, deps: { backends: Backends; log: Logger }): void {
  if (!audit) return;
  const recorded = audit.recorded && audit.event.status === status;
  const event = recorded ? audit.event : { ...audit.event, timeUnixMs: Date.now(), status };
  deps.log.info({ audit: event }, 'audit');
  if (recorded) return;
  trailOf(deps.backends.orgsTeams.audit)
    .send(TRAIL, [event])
    .catch((err: unknown) => deps.log.warn({ err, audit: event }, 'audit event not stored (it is in this log line)'));
}

type AuditClient = Backends['orgsTeams']['audit'];
type AuditEvent = Parameters<AuditClient['recordAuditEvent']>[0];

/** Most events one call stores. */
const MAX_EVENTS_PER_CALL = 100;
/**
 * How long an event waits for others to go in the same call. At a hundred writes a second a call's round trip is too
 * short for events to meet on their own, so each write paid a call and a statement for its event; waiting this long
 * sends a few in each. Nobody waits for the event (the log line is written at once), and a stopping gateway sends
 * what waits first (flushAuditTrail).
 */
const LINGER_MS = 25;
/** The one subject of a trail's sends. */
const TRAIL = 'audit';

/**
 * Sends the events to orgs-teams, one call on its way at a time: the events of changes answered within LINGER_MS of
 * each other, or while a call is on its way, go together (RecordAuditEvents), so that under many writes at once the
 * trail costs a call and a statement per batch, not per write; a lone event goes alone (RecordAuditEvent).
 */
const auditTrail = (audit: AuditClient) =>
  new CoalescedSends<AuditEvent[]>(
    async (_subject, events) => {
      const call = { requestId: events[0].requestId };
      if (events.length === 1) await audit.recordAuditEvent(events[0], call);
      else await audit.recordAuditEvents({ events }, call);
    },
    () => upToACall,
    { lingerMs: LINGER_MS },
  );

/** Events sent meanwhile go in one call, up to MAX_EVENTS_PER_CALL. */
const upToACall: Merge<AuditEvent[]> = (a, b) => (a.length + b.length > MAX_EVENTS_PER_CALL ? undefined : [...a, ...b]);

/** The trail of each orgs-teams audit client (one per gateway). */
const trails = new WeakMap<AuditClient, CoalescedSends<AuditEvent[]>>();
const trailOf = (audit: AuditClient): CoalescedSends<AuditEvent[]> => {
  let trail = trails.get(audit);
  if (!trail) trails.set(audit, (trail = auditTrail(audit)));
  return trail;
};

/** Sends the events still waiting and resolves once each is stored or logged as not stored: the gateway is stopping. */
export const flushAuditTrail = (audit: AuditClient): Promise<void> => trails.get(audit)?.flush() ?? Promise.resolve();
