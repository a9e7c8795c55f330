import { z } from 'zod';
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

/** The UIDs of the organization's clusters: its hubs and every managed cluster under them. */
async function orgClusterUids(org: OrgRef, ctx: EdgeContext): Promise<string[]> {
  // Kept by the inventory's read model (@platform/clusters-client): a report is the one call to billing-dashboard.
  const { clusters } = await ctx.kept.clusters.clusters.listOwnerClusters({ ownerType: 'organization', ownerId: org.id });
  return clusters.map((c) => c.uid);
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
      return { body: await JsonStream.of(ctx.kept.billingDashboard.usageReport.getNamespaceBilling(request, streamed(ctx))) };
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
      return { body: await JsonStream.of(ctx.kept.billingDashboard.usageReport.getNamespaceBilling(request, streamed(ctx))) };
    },
  }),
];
