import { z } from 'zod';
import { sectionRoutes, type Route } from '../../route';
import { reportMonthParams } from './report-month';

// The PDF usage summary (docs/usage-summary-pdf.md): billing-enabled deployments only, site admins
// with view_usage_analytics:site_admin, `org` required. billing-dashboard renders the document (D29); the row
// checks the month, names the site and sends the bytes as a download.

const route = sectionRoutes({ tag: 'Usage reports', backend: 'billing-dashboard' });

export const summaryDownloadRoutes: Route[] = [
  route({
    auth: 'token',
    gate: 'billing',
    org: 'required',
    requires: [{ on: 'site', permission: 'view_usage_analytics:site_admin' }],
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/summary/:year/:month/download',
    summary:
      "The month's database-product (productdb) usage as a PDF: title page, totals, daily core-hours chart, a table per cluster and namespace",
    params: z.object(reportMonthParams),
    response: {
      status: 200,
      schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }),
      contentType: 'application/pdf',
      description: 'A PDF attachment, usage-summary-productdb-YYYY-MM.pdf; a month without usage is a one-page PDF saying so',
    },
    async handle({ params }, ctx) {
      // The title page names the site as its branding does (one row in orgs-teams).
      const { appName } = await ctx.kept.orgsTeams.siteSettings.getBranding({});
      const doc = await ctx.backends.billingDashboard.summary.renderUsageSummary({
        year: params.year,
        month: params.month,
        siteName: appName,
      });
      return {
        body: Buffer.from(doc.pdf),
        headers: {
          'Content-Type': 'application/pdf',
          'Content-Disposition': `attachment; filename="${doc.fileName}"`,
          'Cache-Control': 'private, no-store',
          'X-Content-Type-Options': 'nosniff',
        },
      };
    },
  }),
];
