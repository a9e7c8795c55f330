import { outagesV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { Outages } from './outages';
import type { OutageRow } from './outages-store';

/** The SystemOutagesService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/outages.proto. */
export function systemOutagesService(outages: Outages): ServiceBinding<typeof outagesV1.SystemOutagesServiceService> {
  return bindService(outagesV1.SystemOutagesServiceService, {
    createOutage: async (req) =>
      toOutage(
        await outages.create({
          accountId: req.accountId > 0 ? req.accountId : null,
          accountName: req.accountName,
          clusterId: req.clusterId,
          start: new Date(req.startMs),
          end: new Date(req.endMs),
          tags: req.tags,
          comments: req.comments,
          createdBy: req.createdBy,
        }),
      ),
    outageReport: async (req) => {
      const { report, entries } = await outages.report({
        start: req.startMs > 0 ? new Date(req.startMs) : undefined,
        accountId: req.accountId || undefined,
        clusterId: req.clusterId || undefined,
        tags: req.tags,
      });
      return { report, entries: entries.map(toOutage) };
    },
    listOutageTags: async () => ({ tags: await outages.tags() }),
  });
}

export const toOutage = (o: OutageRow): outagesV1.Outage => ({
  id: o.id,
  accountId: o.account_id ?? 0,
  accountName: o.account_name,
  clusterId: o.cluster_id,
  startMs: o.start_at.getTime(),
  endMs: o.end_at.getTime(),
  tags: o.tags,
  comments: o.comments,
  createdBy: o.created_by,
  createdMs: o.created_at.getTime(),
});
