import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writePrivateFile, type PlatformApi } from '@platform/simulator';

/**
 * What the demo owner does in the demo organization as its owner would, over the public API: make their own
 * membership public (docs/organizations-and-teams.md), and give the organization a multi-cluster-manager sync token
 * (docs/organization-tokens.md). A sync token exists only for an organization of multi-cluster-manager origin, so
 * the organization first gets the demo hub's manager endpoint as its management-cluster endpoint, the way a
 * client organization gets its hub's. Each step asks first whether it is done, so a second start changes nothing.
 */

/** The name of the demo organization's sync token (an access token of its system admin). */
const SYNC_TOKEN_NAME = 'demo-manager-sync';

export async function seedOrgAccess(
  owner: PlatformApi,
  org: string,
  username: string,
  hubUid: string,
  dir: string,
  say: (msg: string) => void,
): Promise<void> {
  const o = encodeURIComponent(org);
  const publicMember = `/orgs/${o}/public_members/${encodeURIComponent(username)}`;
  if ((await owner.expect('GET', publicMember, [204, 404])).status === 404) {
    await owner.expect('PUT', publicMember, [204]);
    say(`made ${username}'s membership of ${org} public`);
  }

  const current = (await owner.expect('GET', `/orgs/${o}`, [200])).body as { managerManagementClusterEndPoint: string };
  if (!current.managerManagementClusterEndPoint) {
    const hubs = (await owner.expect('GET', `/orgs/${o}/clusters`, [200])).body as { uid: string; managerEndpoint: string }[];
    const endpoint = hubs.find((h) => h.uid === hubUid)?.managerEndpoint;
    if (!endpoint) throw new Error(`hub ${hubUid} of ${org} reports no multi-cluster-manager endpoint`);
    await owner.expect('PATCH', `/orgs/${o}`, [200], { managerManagementClusterEndPoint: endpoint });
    say(`set ${org}'s multi-cluster-manager endpoint to ${endpoint}`);
  }

  // The secret is the seed's own, kept before it is sent: the API shows a sync token's secret only once, and
  // asking whether the token exists (below) is that once.
  if ((await owner.expect('GET', `/orgs/${o}/manager/sync-token`, [200, 404])).status === 404) {
    await owner.expect('POST', `/orgs/${o}/manager/sync-token`, [200], { name: SYNC_TOKEN_NAME, sha1: syncTokenSecret(dir) });
    say(`created ${org}'s manager sync token (its secret is in ${path.join(dir, 'manager-sync-token.json')})`);
  }
}

/** The sync token's secret (40 hex characters), made on the first seed and kept under DATA_DIR/demo-seed (0600). */
function syncTokenSecret(dir: string): string {
  const file = path.join(dir, 'manager-sync-token.json');
  if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { secret: string }).secret;
  const secret = randomBytes(20).toString('hex');
  writePrivateFile(file, `${JSON.stringify({ name: SYNC_TOKEN_NAME, secret }, null, 2)}\n`);
  return secret;
}
