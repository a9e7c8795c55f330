import { BusAccountDirectory, busAccountsOf, type ClusterOwnership } from '@platform/agent-protocol';
import { NotFoundError } from '@platform/errors';
import { clustersV1, orgTokensV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';

/**
 * The account lookup of billing ingestion: bus accounts from orgs-teams (`GetBusAccountByKey`), cluster
 * ownership from clusters (`GetCluster`), under the rule every consuming service shares
 * (`accountMayReportFor` of @platform/agent-protocol). Returns it with how to close its clients.
 */
export function busAccountDirectory(addresses: { orgsTeams: string; clusters: string }): { directory: BusAccountDirectory; close(): void } {
  const orgTokens = createClient(orgTokensV1.OrgTokensServiceService, addresses.orgsTeams, { name: 'orgs-teams', deadlineMs: 5_000 });
  const clusters = createClient(clustersV1.ClustersServiceService, addresses.clusters, { name: 'clusters', deadlineMs: 5_000 });
  const clusterOf = async (uid: string): Promise<ClusterOwnership | undefined> => {
    try {
      const c = await clusters.getCluster({ uid });
      return { uid: c.uid, ownerType: c.ownerType, ownerId: Number(c.ownerId), hubUid: c.hubUid };
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  };
  return {
    directory: new BusAccountDirectory(busAccountsOf(orgTokens), clusterOf),
    close: () => {
      orgTokens.close();
      clusters.close();
    },
  };
}
