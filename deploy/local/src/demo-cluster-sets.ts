import type { PlatformApi } from '@platform/simulator';
import { clustersV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import type { LocalPlatform } from './platform';

/** The demo's cluster set whose clusters run an agent older than the latest release (docs/cluster-sets.md). */
export const OUTDATED_CLUSTER_SET = 'outdated';

/**
 * Makes the demo's outdated cluster set on the hub: the spoke running the oldest agent (`platform-agent`), so
 * `auto-update/check` answers `{possible: false}` and `POST auto-update` 400 until that cluster is upgraded. The
 * other spokes stay in no set. Already there on a later start (409): kept as it is.
 */
export async function seedOutdatedClusterSet(
  admin: PlatformApi,
  platform: LocalPlatform,
  org: string,
  hub: { name: string; uid: string },
  say: (msg: string) => void,
): Promise<string> {
  const app = platform.apps.get('clusters');
  if (!app) throw new Error('the clusters app is not running');
  const clusters = createClient(clustersV1.ClustersServiceService, `127.0.0.1:${app.grpcPort}`, { name: 'clusters', deadlineMs: 5_000 });
  let oldest: string;
  try {
    const spokes = (await clusters.listSpokes({ hubUid: hub.uid })).clusters;
    const agent = (c: clustersV1.Cluster) => c.features.find((f) => f.name === 'platform-agent')?.version ?? '';
    oldest = [...spokes].sort((a, b) => agent(a).localeCompare(agent(b), undefined, { numeric: true }) || a.name.localeCompare(b.name))[0]
      .name;
  } finally {
    clusters.close();
  }
  const base = `/clusters/${encodeURIComponent(org)}/${encodeURIComponent(hub.name)}`;
  const made = await admin.call('POST', `${base}/clustersets/create`, { clusterSet: OUTDATED_CLUSTER_SET, clusters: [oldest] });
  if (made.status !== 200 && made.status !== 409) {
    throw new Error(`creating cluster set ${OUTDATED_CLUSTER_SET}: HTTP ${made.status} ${JSON.stringify(made.body)}`);
  }
  const check = await admin.call('GET', `${base}/clustersets/${OUTDATED_CLUSTER_SET}/auto-update/check`);
  if ((check.body as { possible?: boolean } | undefined)?.possible !== false) {
    say(`warning: cluster set ${OUTDATED_CLUSTER_SET} is not behind the latest release (${JSON.stringify(check.body)})`);
  }
  say(`cluster set ${OUTDATED_CLUSTER_SET} holds ${oldest}, behind the latest release`);
  return OUTDATED_CLUSTER_SET;
}

/** The demo's client organization whose gateway config another one references (docs/client-organizations.md). */
export const SHARED_GATEWAY_CLIENT_ORG = 'demo-client-shared';
const REFERENCING_CLIENT_ORG = 'demo-client-tenant';

/**
 * Makes two client organizations on the demo hub, importing no cluster (the manifest's spokes stay free): one whose
 * gateway config is usable as shared, and one that references it — so deleting the first is 400. Answers the
 * first's id; on a later start they exist (409) and are looked up.
 */
export async function seedClientOrgs(
  admin: PlatformApi,
  org: string,
  hub: { name: string; uid: string },
  say: (msg: string) => void,
): Promise<number> {
  const params = (orgName: string, extra: Record<string, unknown>) => ({
    clientOrg: { orgName, orgFullName: `${orgName} (demo client)` },
    hubClusterUID: hub.uid,
    hubClusterOwnerName: org,
    userPermission: {
      userName: `${orgName}-admin`,
      email: `${orgName}-admin@example.com`,
      permissions: [{ name: 'hub', isClusterSet: false, roleType: 'ClusterRole', roleRefName: 'view' }],
      importCluster: false,
      clientOrg: true,
    },
    ...extra,
  });
  for (const [name, extra] of [
    [SHARED_GATEWAY_CLIENT_ORG, { usableAsShared: true, useGateway: true, gatewayConfig: { hostname: 'gateway.demo.example.com' } }],
    [REFERENCING_CLIENT_ORG, { useGateway: true, gatewayConfigRef: { clientOrg: SHARED_GATEWAY_CLIENT_ORG } }],
  ] as const) {
    const made = await admin.call('POST', '/user/client/create', params(name, extra));
    if (made.status !== 200 && made.status !== 409)
      throw new Error(`creating client organization ${name}: HTTP ${made.status} ${JSON.stringify(made.body)}`);
  }
  const listed = await admin.call('GET', '/user/clients');
  const shared = (listed.body as { id: number; username: string }[]).find((o) => o.username === SHARED_GATEWAY_CLIENT_ORG);
  if (!shared) throw new Error(`client organization ${SHARED_GATEWAY_CLIENT_ORG} is not listed`);
  say(`client organizations ${SHARED_GATEWAY_CLIENT_ORG} (gateway config shared) and ${REFERENCING_CLIENT_ORG} (using it)`);
  return shared.id;
}
