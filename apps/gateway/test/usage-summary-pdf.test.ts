import { orgsTeamsSettingsV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { usageReportStandIns } from './usage-report-stand-ins';

// The PDF usage summary's row (docs/usage-summary-pdf.md): site admins with view_usage_analytics:site_admin, `org`
// required, billing-enabled deployments only. The row reads the month (a number or a name), names the site as the
// branding does and sends billing-dashboard's document as a download. What the document says, and its file name:
// apps/billing-dashboard/test/summary-pdf.int.test.ts.

const PDF = Buffer.from('%PDF-1.7 a stand-in document');

describe('the PDF usage summary row', () => {
  const standIns = usageReportStandIns({
    orgsTeams: { siteSettings: { getBranding: async () => orgsTeamsSettingsV1.Branding.fromPartial({ appName: 'Acme Cloud' }) } },
    billingDashboard: {
      summary: {
        renderUsageSummary: async ({ year, month }) => ({
          pdf: PDF,
          fileName: `usage-summary-productdb-${year}-${String(month).padStart(2, '0')}.pdf`,
        }),
      },
    },
  });

  const download = async (path: string, who?: string, on = standIns.base) => {
    const res = await fetch(`${on}/api/v1${path}`, { headers: who ? { authorization: `token ${who}` } : {} });
    const bytes = Buffer.from(await res.arrayBuffer());
    const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(bytes.toString()) : undefined;
    return { status: res.status, headers: res.headers, bytes, message: json?.message as string | undefined };
  };
  const asked = () => standIns.backends.billingDashboard.callsTo('summary', 'renderUsageSummary');

  it("sends billing's document as an attachment, asked for the month with the site's name", async () => {
    const res = await download('/dashboard/summary/2026/10/download?org=demo', 'root');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="usage-summary-productdb-2026-10.pdf"');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.bytes.equals(PDF)).toBe(true);
    expect(asked()).toEqual([{ year: 2026, month: 10, siteName: 'Acme Cloud' }]);
  });

  it('takes the month by name too, in any case', async () => {
    for (const month of ['october', 'October', 'oct']) {
      const res = await download(`/dashboard/summary/2026/${month}/download?org=demo`, 'root');
      expect({ month, status: res.status }).toEqual({ month, status: 200 });
      expect(res.headers.get('content-disposition')).toContain('usage-summary-productdb-2026-10.pdf');
    }
    expect(asked().map((r) => [r.year, r.month])).toEqual([
      [2026, 10],
      [2026, 10],
      [2026, 10],
    ]);
  });

  it('answers 400 with a message for a year that is not four digits or an unknown month, billing not asked', async () => {
    for (const [year, month, field] of [
      ['26', '10', 'year'],
      ['20260', '10', 'year'],
      ['year', '10', 'year'],
      ['2026', '13', 'month'],
      ['2026', '0', 'month'],
      ['2026', 'smarch', 'month'],
    ]) {
      const res = await download(`/dashboard/summary/${year}/${month}/download?org=demo`, 'root');
      expect({ year, month, status: res.status }).toEqual({ year, month, status: 400 });
      expect(res.message).toMatch(new RegExp(`^${field} `));
    }
    expect(asked()).toEqual([]);
  });

  it('is for site admins: 401 without a token, 403 naming the permission to others (the organization owner too), 400 without org', async () => {
    expect((await download('/dashboard/summary/2026/10/download?org=demo')).status).toBe(401);
    for (const who of ['mallory', 'owner']) {
      const res = await download('/dashboard/summary/2026/10/download?org=demo', who);
      expect({ who, status: res.status }).toEqual({ who, status: 403 });
      expect(res.message).toMatch(/view_usage_analytics/);
    }
    const noOrg = await download('/dashboard/summary/2026/10/download', 'root');
    expect(noOrg.status).toBe(400);
    expect(noOrg.message).toMatch(/org/);
    expect(asked()).toEqual([]);
  });

  it('is not there where billing is disabled: 404 with a message, to site admins too', async () => {
    const rows = (env: Record<string, string>) => registeredRoutesOn(env).filter((r) => r.path.endsWith('/:year/:month/download'));
    expect(rows({ BILLING_ENABLED: 'true' })).toHaveLength(1);
    expect(rows({})).toEqual([]);
    const res = await download('/dashboard/summary/2026/10/download?org=demo', 'root', standIns.disabled);
    expect(res.status).toBe(404);
    expect(typeof res.message).toBe('string');
    expect(asked()).toEqual([]);
  });
});
