import PDFDocument from 'pdfkit';
import type { PlatformApi } from '@platform/simulator';

/**
 * The contracts of the demo: an enterprise contract of the demo organization with its hub and managed clusters
 * bound and a license issued for the hub, and a second contract of the organization, bound to its hub, whose quota
 * the reported usage has used up (the manifest's `quotaExceeded`), with a one-page PDF as its contract document.
 * Both are the organization's, as a contract may bind only its own account's clusters (or ones nobody enrolled).
 * Made through the public API as a site admin would; a second start finds them by name and adds nothing.
 */

const DAY = 86_400;
const ENTERPRISE = 'Demo enterprise';
const QUOTA = 'Demo quota (used up)';

export interface QuotaExceeded {
  /** The owner account's slug: the demo organization. */
  org: string;
  contractID: number;
  ccID: number;
  cluster: string;
}

interface Contract {
  id: number;
  name: string;
  product: string;
}

/** Contracts and licenses only exist on hosted deployments. */
export const hasContracts = (deploymentType: string | undefined) => (deploymentType ?? 'Hosted') === 'Hosted';

export async function seedContracts(
  admin: PlatformApi,
  owner: { org: string; username: string },
  clusters: { hub: string; spokes: string[] },
  startUnix: number,
  say: (msg: string) => void,
): Promise<QuotaExceeded> {
  const enterprise = await findOrCreate(admin, owner.org, ENTERPRISE, () => ({
    name: ENTERPRISE,
    products: JSON.stringify(['productdb', 'productbackup']),
    start: String(startUnix),
    end: String(Math.floor(Date.now() / 1000) + 365 * DAY),
    emails: JSON.stringify({ licenseUsers: [`${owner.username}@example.com`], usageAlertClient: [`${owner.username}@example.com`] }),
  }));
  const hubCc = await bindAll(admin, enterprise.id, [clusters.hub, ...clusters.spokes], owner.org);
  const issued = ((await admin.expect('GET', `/contracts/${enterprise.id}/audit`, [200])).body as { event: string }[]).some((e) =>
    e.event.startsWith('license-issued:'),
  );
  if (!issued) {
    await admin.expect('POST', `/contracts/${enterprise.id}/clusters/${hubCc}/issue-license`, [200]);
    say(`issued a license for the hub under contract ${enterprise.id}`);
  }

  // A quota of one object-hour of productdb since the reports began, used up long ago.
  const quota = await findOrCreate(admin, owner.org, QUOTA, () => ({
    name: QUOTA,
    products: JSON.stringify(['productdb']),
    start: String(startUnix),
    end: String(Math.floor(Date.now() / 1000) + 365 * DAY),
    quota: JSON.stringify({
      enabled: true,
      metric: 'object-hours',
      limit: 1,
      alertThresholds: [50, 80, 100],
      disableLicenseOnLimitReached: true,
    }),
    // Who hears that it is used up (docs/notifications.md): without SMTP_URL the mail is kept and shown to site admins.
    emails: JSON.stringify({ usageAlertClient: [`${owner.username}@example.com`] }),
  }));
  const quotaCc = await bindAll(admin, quota.id, [clusters.hub], owner.org);
  await attachDocument(admin, quota.id, owner.org, say);
  return { org: owner.org, contractID: quota.id, ccID: quotaCc, cluster: clusters.hub };
}

/** The account's contract of that name (the first product's), made once. */
async function findOrCreate(admin: PlatformApi, account: string, name: string, fields: () => Record<string, string>): Promise<Contract> {
  const listed = (await admin.expect('GET', `/contracts?org=${encodeURIComponent(account)}`, [200])).body as Contract[];
  const found = listed.filter((c) => c.name === name).sort((a, b) => a.id - b.id)[0];
  if (found) return found;
  const form = new FormData();
  for (const [k, v] of Object.entries(fields())) form.append(k, v);
  const made = (await admin.expect('POST', `/contracts?org=${encodeURIComponent(account)}`, [201], form)).body as Contract[];
  return made[0];
}

/** Binds the clusters not bound yet; answers the ccID of the first one. */
async function bindAll(admin: PlatformApi, contractId: number, uids: string[], account: string): Promise<number> {
  const path = `/contracts/${contractId}/clusters`;
  const bound = (await admin.expect('GET', path, [200])).body as { id: number; cluster: string }[];
  const missing = uids.filter((u) => !bound.some((b) => b.cluster === u));
  if (missing.length > 0)
    await admin.expect(
      'POST',
      `${path}?org=${encodeURIComponent(account)}`,
      [201],
      missing.map((cluster) => ({ cluster })),
    );
  const all = (await admin.expect('GET', path, [200])).body as { id: number; cluster: string }[];
  return all.find((b) => b.cluster === uids[0])!.id;
}

/** Uploads the contract's document as an admin edits the contract (a multipart `document` part), once. */
async function attachDocument(admin: PlatformApi, contractId: number, account: string, say: (msg: string) => void): Promise<void> {
  const org = `?org=${encodeURIComponent(account)}`;
  if ((await admin.expect('GET', `/contracts/${contractId}/document${org}`, [200, 404])).status === 200) return;
  const form = new FormData();
  form.append('document', new Blob([await contractPdf(QUOTA, account)], { type: 'application/pdf' }), 'demo-quota-contract.pdf');
  await admin.expect('PUT', `/contracts/${contractId}${org}`, [200], form);
  say(`uploaded the document of contract ${contractId}`);
}

/** A one-page PDF naming the contract and its account. */
function contractPdf(name: string, account: string): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', info: { Title: name } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.fontSize(18).text(name).moveDown().fontSize(11).text(`Demo contract of the organization ${account}. Not a real agreement.`);
  doc.end();
  return done;
}
