import { z } from 'zod';
import { NotFoundError, ValidationError } from '@platform/errors';
import type { outagesV1 } from '@platform/proto';
import * as p from '../../params';
import { sectionRoutes, type EdgeContext, type Route } from '../../route';

// System outages of the admin billing dashboard (`/dashboard/system-outages`, docs/system-outages.md):
// billing-enabled deployments only, site admins with view_system_outages:site_admin, `org` required.

const route = sectionRoutes({ tag: 'Billing dashboard', backend: 'billing-dashboard' });

const rfc3339 = z.iso.datetime({ offset: true, error: 'must be an RFC3339 date-time' });
const iso = (ms: number) => new Date(ms).toISOString();

export const SystemOutageRequest = z
  .object({
    accountName: z.string().max(255).optional().meta({ description: 'Login of the user or organization the outage concerns' }),
    clusterID: z.string().max(255).optional().meta({ description: 'The cluster the outage concerns' }),
    start: rfc3339.meta({ description: 'RFC3339' }),
    end: rfc3339.meta({ description: 'RFC3339, after start' }),
    tags: z.array(z.string().max(64)).max(100).optional().meta({ description: 'Stored trimmed and distinct' }),
    comments: z.string().max(10_000).optional(),
  })
  .meta({ id: 'SystemOutageRequest' });

export const SystemOutageApiForm = z
  .object({
    id: z.number().int(),
    accountID: z.number().int().meta({ description: 'The account of accountName; 0 when none' }),
    accountName: z.string(),
    clusterID: z.string(),
    start: z.string().meta({ description: 'RFC3339' }),
    end: z.string().meta({ description: 'RFC3339' }),
    tags: z.array(z.string()),
    comments: z.string(),
    createdAt: z.string().meta({ description: 'RFC3339' }),
  })
  .meta({ id: 'SystemOutageApiForm' });

const EntityDuration = z
  .object({
    entity: z.string().meta({ description: 'Account id, or cluster id' }),
    entityName: z.string(),
    durationHours: z.number(),
    percentage: z.number().meta({ description: 'Share of totalDurationHours, in percent' }),
  })
  .meta({ id: 'OutageEntityDuration' });

export const SystemOutagesAndReportAPIForm = z
  .object({
    report: z.object({
      totalOutages: z.number().int(),
      totalDurationHours: z.number(),
      topTagsPercentage: z.array(
        z.object({ tag: z.string(), percentage: z.number().meta({ description: 'Share of the outages carrying the tag, in percent' }) }),
      ),
      topAccountsDuration: z.array(EntityDuration),
      topClustersDuration: z.array(EntityDuration),
    }),
    entries: z.array(SystemOutageApiForm).meta({ description: 'Newest first' }),
  })
  .meta({ id: 'SystemOutagesAndReportAPIForm' });

const outageJson = (o: outagesV1.Outage): z.input<typeof SystemOutageApiForm> => ({
  id: o.id,
  accountID: o.accountId,
  accountName: o.accountName,
  clusterID: o.clusterId,
  start: iso(o.startMs),
  end: iso(o.endMs),
  tags: o.tags,
  comments: o.comments,
  createdAt: iso(o.createdMs),
});

const ReportQuery = z.object({
  start: rfc3339.optional().meta({ description: 'RFC3339: outages ending after it' }),
  account_id: p.id.optional(),
  cluster_id: z.string().max(255).optional(),
  tags: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((t) => (t === undefined ? [] : Array.isArray(t) ? t : [t]))
    .meta({ description: 'Repeatable: outages carrying any of them' }),
});

/** The account named `accountName`: a user (GetUser by login) or an organization; unknown is 422. */
async function accountOf(name: string, ctx: EdgeContext & { caller: { id: number } }): Promise<{ id: number; name: string }> {
  const orDefault = <T>(e: unknown, v: T) => {
    if (e instanceof NotFoundError) return v;
    throw e;
  };
  const user = await ctx.kept.orgsTeams.identity.getUser({ id: 0, login: name }).catch((e: unknown) => orDefault(e, undefined));
  if (user) return { id: user.id, name: user.login };
  const org = await ctx.kept.orgsTeams.organizations
    .getOrg({ name, viewerId: ctx.caller.id })
    .catch((e: unknown) => orDefault(e, undefined));
  if (org) return { id: org.id, name: org.username };
  throw new ValidationError(`accountName: no user or organization named ${name}`, [
    { field: 'accountName', description: 'unknown account' },
  ]);
}

export const systemOutageRoutes: Route[] = [
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [{ on: 'site', permission: 'view_system_outages:site_admin' }],
    method: 'post',
    scope: 'write:organization',
    path: '/dashboard/system-outages/',
    summary: 'Record a system outage',
    body: { schema: SystemOutageRequest },
    errors: [
      { status: 422, description: 'for an unknown accountName or an end not after start' },
      { status: 409, description: 'when it overlaps an outage of the same account and cluster' },
    ],
    response: { status: 201, schema: SystemOutageApiForm },
    async handle({ body }, ctx) {
      const name = body.accountName?.trim() ?? '';
      const account = name ? await accountOf(name, ctx) : { id: 0, name: '' };
      const start = Date.parse(body.start);
      const end = Date.parse(body.end);
      if (end <= start) throw new ValidationError('end must be after start', [{ field: 'end', description: 'must be after start' }]);
      const outage = await ctx.backends.billingDashboard.outages.createOutage({
        accountId: account.id,
        accountName: account.name,
        clusterId: body.clusterID?.trim() ?? '',
        startMs: start,
        endMs: end,
        tags: body.tags ?? [],
        comments: body.comments ?? '',
        createdBy: ctx.caller.login,
      });
      return { status: 201, body: outageJson(outage) };
    },
  }),
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [{ on: 'site', permission: 'view_system_outages:site_admin' }],
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/system-outages/report',
    summary: 'System outages and their report: totals, top tags, top accounts and clusters by duration',
    query: ReportQuery,
    response: { status: 200, schema: SystemOutagesAndReportAPIForm },
    async handle({ query }, ctx) {
      const { report, entries } = await ctx.kept.billingDashboard.outages.outageReport({
        startMs: query.start ? Date.parse(query.start) : 0,
        accountId: query.account_id ?? 0,
        clusterId: query.cluster_id ?? '',
        tags: query.tags,
      });
      return {
        body: {
          report: report ?? {
            totalOutages: 0,
            totalDurationHours: 0,
            topTagsPercentage: [],
            topAccountsDuration: [],
            topClustersDuration: [],
          },
          entries: entries.map(outageJson),
        },
      };
    },
  }),
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [{ on: 'site', permission: 'view_system_outages:site_admin' }],
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/system-outages/tags',
    summary: 'The unique tags of all system outages',
    response: { status: 200, schema: z.array(z.string()) },
    async handle(_input, ctx) {
      const { tags } = await ctx.kept.billingDashboard.outages.listOutageTags({});
      return { body: tags };
    },
  }),
];
