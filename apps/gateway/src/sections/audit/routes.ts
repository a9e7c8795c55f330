import { z } from 'zod';
import { sectionRoutes } from '../../route';
import { PAGE_HEADERS, pageHeaders, pageOf, Paging } from '../../paging';

// The audit trail of administrative changes (docs/audit.md): site admins list who changed what, newest first.

const route = sectionRoutes({ tag: 'Audit', backend: 'orgs-teams' });

const rfc3339 = z.iso.datetime({ offset: true, error: 'must be an RFC3339 date-time' });
const text = (max: number, description: string) => z.string().max(max).optional().meta({ description });

const AuditQuery = Paging.extend({
  actor: text(64, 'only changes made by this login'),
  action: text(64, 'only this operation, e.g. orgCreate (the operationId of the API document)'),
  target: text(1024, 'only changes to paths starting with this, e.g. /orgs/acme'),
  org: text(64, 'only changes made in this organization context (?org=)'),
  since: rfc3339.optional().meta({ description: 'only changes at or after this time (RFC3339)' }),
  until: rfc3339.optional().meta({ description: 'only changes before this time (RFC3339)' }),
});

export const AuditEventJson = z
  .object({
    id: z.string(),
    time: z.string().meta({ description: 'RFC3339, when the change was answered' }),
    actor: z.object({ id: z.number().int(), login: z.string() }),
    action: z.string().meta({ description: 'the operationId of the route' }),
    method: z.string(),
    route: z.string().meta({ description: 'the route, e.g. /orgs/{orgname}' }),
    target: z.string().meta({ description: 'the path changed, e.g. /orgs/acme' }),
    org: z.string().meta({ description: 'the ?org= context; empty when none' }),
    status: z.number().int(),
    request_id: z.string(),
    client: z.string().meta({ description: 'the client address the gateway saw' }),
  })
  .meta({ id: 'AuditEvent' });

export const auditRoutes = [
  route({
    method: 'get',
    scope: 'read:admin',
    path: '/admin/audit-events',
    summary: 'The audit trail: successful administrative changes, newest first, filtered and paged (site admin)',
    auth: 'token',
    requires: [{ on: 'site', permission: 'admin:site' }],
    query: AuditQuery,
    response: { status: 200, schema: z.array(AuditEventJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { events, total } = await ctx.backends.orgsTeams.audit.listAuditEvents({
        actor: query.actor ?? '',
        action: query.action ?? '',
        targetPrefix: query.target ?? '',
        org: query.org ?? '',
        sinceUnixMs: query.since ? Date.parse(query.since) : 0,
        untilUnixMs: query.until ? Date.parse(query.until) : 0,
        ...page,
      });
      return {
        headers: pageHeaders(ctx, page, total),
        body: events.map((e) => ({
          id: e.id,
          time: new Date(e.timeUnixMs).toISOString(),
          actor: { id: e.actorId, login: e.actorLogin },
          action: e.action,
          method: e.method,
          route: e.route,
          target: e.target,
          org: e.org,
          status: e.status,
          request_id: e.requestId,
          client: e.client,
        })),
      };
    },
  }),
];
