import { z } from 'zod';
import { CLUSTERS_CHANGED, type ClustersChanged } from '@platform/bus';
import { keptPerGateway } from '../../kept-per-gateway';
import { JsonStream, sectionRoutes, type EdgeContext, type OrgRef, type Requirement, type Route } from '../../route';
import { clusterUid, MonthlyPoint, streamed, objectFields, quantities, UsageTotals } from '../dashboard/usage-report';

// Namespace billing (`/dbaas/billing/reports/...`, docs/usage-reports.md): billing-enabled deployments,
// owners of the organization named by `org` (and site admins), `org` required. The report covers the
// organization's clusters as the cluster inventory knows them (its hubs and their managed clusters), not the
// license holder of the samples: usage_samples.user_id is whoever holds the license, which need not be the org.

const route = sectionRoutes({ tag: 'Usage reports', backend: 'billing-dashboard' });
const OWNERS: Requirement<never> = { on: 'org', permission: 'manage_owners:org', denied: 'org ownership required' };

const months = { months: z.array(MonthlyPoint).meta({ description: 'Per month (YYYY-MM), oldest first' }) };

export const NamespaceBillingReport = z
  .object({
    rows: z
      .array(
        z
          .object({
            clusterUID: z.string(),
            clusterName: z.string(),
            namespace: z.string(),
            namespaceUID: z.string(),
            objects: z.number().int(),
            products: z.array(z.string()),
            ...quantities,
            ...months,
          })
          .meta({ id: 'NamespaceBillingRow' }),
      )
      .meta({ description: "One row per cluster and namespace of the organization's clusters, most core-hours first" }),
    totals: UsageTotals,
  })
  .meta({ id: 'NamespaceBillingReport' });

export const NamespaceBilling = z
  .object({
    clusterUID: z.string(),
    namespace: z.string(),
    rows: z
      .array(z.object({ ...objectFields, product: z.string(), ...quantities, ...months }).meta({ id: 'NamespaceBillingObjectRow' }))
      .meta({ description: 'One row per licensed object of the namespace, most core-hours first' }),
    totals: UsageTotals,
  })
  .meta({ id: 'NamespaceBilling' });

// The UIDs of an organization's clusters, kept per gateway (kept-per-gateway.ts), so a report is the one call to
// billing-dashboard: the set changes only through the inventory, whose notice (`clusters.changed`) names the owners
// whose clusters may have changed, and the clusters themselves.
const keptOrgClusters = keptPerGateway<string[]>(
  (config) => ({ name: 'gateway.org-clusters', ttlMs: config.ORG_CACHE_TTL_MS, maxEntries: 1_000 }),
  [
    {
      subject: CLUSTERS_CHANGED,
      stale: (n) => [...((n as ClustersChanged).owners ?? []), ...((n as ClustersChanged).uids ?? []).map((uid) => `cluster:${uid}`)],
    },
  ],
);

/** The UIDs of the organization's clusters: its hubs and every managed cluster under them (kept, or one call). */
function orgClusterUids(org: OrgRef, ctx: EdgeContext): Promise<string[]> {
  const owner = `organization:${org.id}`;
  return keptOrgClusters
    .of(ctx.config)
    .through(
      owner,
      async () =>
        (await ctx.backends.clusters.clusters.listOwnerClusters({ ownerType: 'organization', ownerId: org.id })).clusters.map((c) => c.uid),
      { tags: (uids) => [owner, ...uids.map((uid) => `cluster:${uid}`)] },
      ctx.arrivedAt,
    );
}

export const namespaceBillingRoutes: Route[] = [
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [OWNERS],
    method: 'get',
    scope: 'read:organization',
    path: '/dbaas/billing/reports/namespaces',
    summary: "Usage of each namespace of the organization's clusters, per month",
    response: { status: 200, schema: NamespaceBillingReport },
    async handle(_input, ctx) {
      const request = {
        clusterUids: await orgClusterUids(ctx.org, ctx),
        clusterUid: '',
        namespace: '',
      };
      return { body: await JsonStream.of(ctx.backends.billingDashboard.usageReport.getNamespaceBilling(request, streamed(ctx))) };
    },
  }),
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [OWNERS],
    method: 'get',
    scope: 'read:organization',
    path: '/dbaas/billing/reports/clusters/:clusterID/namespaces/:namespaceName',
    summary: "Usage of each licensed object of one namespace of one of the organization's clusters, per month",
    params: z.object({
      clusterID: clusterUid.meta({ description: 'Cluster UID' }),
      namespaceName: z.string().min(1).max(253),
    }),
    errors: [{ status: 404, description: "when the cluster is not one of the organization's" }],
    response: { status: 200, schema: NamespaceBilling },
    async handle({ params }, ctx) {
      const request = {
        clusterUids: await orgClusterUids(ctx.org, ctx),
        clusterUid: params.clusterID,
        namespace: params.namespaceName,
      };
      return { body: await JsonStream.of(ctx.backends.billingDashboard.usageReport.getNamespaceBilling(request, streamed(ctx))) };
    },
  }),
];
