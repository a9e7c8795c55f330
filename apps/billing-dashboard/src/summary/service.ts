import { summaryV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import { renderSummaryPdf, summaryFileName } from './summary-pdf';
import type { UsageSummary } from './usage-summary';

/** The UsageSummaryService binding (proto/platformadmin/billingdashboard/v1/summary.proto). */
export function usageSummaryService(
  summaries: UsageSummary,
  deploymentType: string,
): ServiceBinding<typeof summaryV1.UsageSummaryServiceService> {
  return bindService(summaryV1.UsageSummaryServiceService, {
    renderUsageSummary: async (req) => {
      const summary = await summaries.month(req.year, req.month);
      const pdf = await renderSummaryPdf(summary, { generatedAt: new Date(), siteName: req.siteName, deploymentType });
      return { pdf, fileName: summaryFileName(summary) };
    },
  });
}
