import { registeredRoutesOn } from '@platform/app-gateway';
import { pdfText } from '@platform/testing';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The PDF usage summary (`/dashboard/summary/{year}/{month}/download`, docs/usage-summary-pdf.md) over
 * HTTP, on a billing-enabled hosted platform seeded with the demo (DEMO_SEED_MANIFEST's seed, run in-process):
 * the manifest's usage month downloads as a PDF attachment whose text, read back with pdfjs-dist, names the month,
 * the product, the site and the cluster and namespace of the manifest's object; a month without usage is a PDF
 * saying so; then the 400, 401 and 403 paths; and 404 with `{message}` where billing is disabled.
 */

type Usage = NonNullable<DemoManifest['usage']>;

const monthTitle = (year: string, month: string) =>
  new Date(Date.UTC(Number(year), Number(month) - 1, 1)).toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });

describe('the PDF usage summary over HTTP on the demo data', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let u: Usage;
  const url = (year: string, month: string, org: string | undefined = manifest.owner.org) =>
    `/dashboard/summary/${year}/${month}/download${org ? `?org=${org}` : ''}`;
  /** The answer with its body as bytes (the harness reads bodies as text); `who` null: no token. */
  const download = async (p: string, who: string | null = 'root') => {
    const res = await fetch(`${t.platform.url}api/v1${p}`, { headers: who ? { authorization: `token ${t.tokens[who]}` } : {} });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    // On a NATS server of the suite's own (the other demo suites use the in-process bus): the seed's reports go
    // through JetStream here.
    demo = await bootDemoPlatform({ DEPLOYMENT_TYPE: 'Hosted' }, { bus: 'private-nats' });
    ({ t, manifest, usage: u } = demo);
    await t.signUp('mallory');
    t.tokens.owner = t.tokens[manifest.owner.username];
  }, 600_000);
  afterAll(() => demo?.stop());

  it("downloads the month's productdb usage as a PDF attachment naming the month, the product, the site and the cluster", async () => {
    const res = await download(url(u.year, u.month));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="usage-summary-productdb-${u.year}-${u.month}.pdf"`);
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');

    const { pages } = await pdfText(res.bytes);
    const text = pages.join('\n');
    expect(pages[0]).toContain(monthTitle(u.year, u.month));
    expect(pages[0]).toContain('Database product (productdb)');
    expect(pages[0]).toContain('Site: Platform');
    expect(pages[0]).toContain('Deployment: Hosted');
    expect(pages[0]).toContain('Core-hours per day');
    // The manifest's object is a productdb object of the hub, in its namespace.
    expect(u.product).toBe('productdb');
    expect(u.cid).toBe(manifest.hub.uid);
    expect(text).toContain(`Cluster ${manifest.hub.name} · namespace ${u.namespace}`);
    expect(text).toContain(`cluster UID ${u.cid}`);
    expect(text).toMatch(/All [\d,]+ objects?\s+[\d,]+\.\d\d/);
    expect(text).not.toContain('No usage of');
  });

  it('takes the month by name too, and prints the site name the branding gives', async () => {
    const branded = await t.api('root', 'POST', '/branding?org=platform-admin', { appName: 'Acme Cloud' });
    expect(branded.status).toBe(200);
    const name = monthTitle(u.year, u.month).split(' ')[0];
    const res = await download(url(u.year, name.toLowerCase()));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain(`usage-summary-productdb-${u.year}-${u.month}.pdf`);
    const { pages, info } = await pdfText(res.bytes);
    expect(pages[0]).toContain('Site: Acme Cloud');
    expect(info).toMatchObject({ Author: 'Acme Cloud' });
  });

  it('answers a one-page PDF saying so for a month without usage', async () => {
    const res = await download(url('2001', '01'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="usage-summary-productdb-2001-01.pdf"');
    const { pages } = await pdfText(res.bytes);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('No usage of productdb was reported for January 2001.');
  });

  it('answers 400 with a message for a year that is not four digits or an unknown month', async () => {
    for (const [year, month, field] of [
      ['26', '10', 'year'],
      ['20260', '10', 'year'],
      ['year', '10', 'year'],
      [u.year, '13', 'month'],
      [u.year, '0', 'month'],
      [u.year, 'smarch', 'month'],
    ]) {
      const res = await t.api('root', 'GET', url(year, month));
      expect({ year, month, status: res.status }).toEqual({ year, month, status: 400 });
      expect(res.body.message).toMatch(new RegExp(`^${field} `));
    }
  });

  it('is for site admins: 401 without a token, 403 for others (the organization owner too), 400 without org', async () => {
    expect((await download(url(u.year, u.month), null)).status).toBe(401);
    for (const who of ['mallory', 'owner']) {
      const res = await t.api(who, 'GET', url(u.year, u.month));
      expect({ who, status: res.status }).toEqual({ who, status: 403 });
      expect(res.body.message).toMatch(/view_usage_analytics/);
    }
    const noOrg = await t.api('root', 'GET', url(u.year, u.month, ''));
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.message).toMatch(/org/);
  });
});

describe('the PDF usage summary where billing is disabled', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await bootTestPlatform({});
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404 with {message}, to site admins too', async () => {
    const download = (env: Record<string, string>) => registeredRoutesOn(env).filter((r) => r.path.endsWith('/:year/:month/download'));
    expect(download({ BILLING_ENABLED: 'true' })).toHaveLength(1);
    expect(download({})).toEqual([]);
    const res = await t.api('root', 'GET', '/dashboard/summary/2026/10/download?org=platform-admin');
    expect(res.status).toBe(404);
    expect(typeof res.body.message).toBe('string');
  });
});
