import { usageReportV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { UsageReports } from './usage-report';

/** The UsageReportService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/usage_report.proto. */
export function usageReportService(reports: UsageReports): ServiceBinding<typeof usageReportV1.UsageReportServiceService> {
  return bindService(usageReportV1.UsageReportServiceService, {
    generatedMonths: async () => ({ months: await reports.generatedMonths() }),
    getUsageView: (req) => chunks(reports.viewPieces(req)),
    getObjectQuotaHistory: async (req) => utf8(await reports.objectQuotaHistory(req.clusterUid, req.objectId)),
    getNamespaceBilling: (req) => chunks(reports.namespaceBillingPieces(req)),
  });
}

/** A view's pieces as the stream's messages. */
async function* chunks(pieces: AsyncIterable<string>): AsyncGenerator<usageReportV1.UsageViewChunk> {
  for await (const piece of pieces) yield { json: Buffer.from(piece, 'utf8') };
}

/** A view's JSON text as the response's UTF-8 bytes. */
const utf8 = (json: string): usageReportV1.UsageViewResponse => ({ json: Buffer.from(json, 'utf8') });
