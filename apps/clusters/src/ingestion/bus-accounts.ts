import { BusAccountDirectory, busAccountsOf, type ClusterOwnership } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { orgsTeamsOrgsV1, orgsTeamsV1, orgTokensV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { ClustersStore } from '../inventory/clusters-store';

/** The orgs-teams client ingestion asks for bus accounts. */
export function orgTokensClient(address: string): PromiseClient<typeof orgTokensV1.OrgTokensServiceService> {
  return createClient(orgTokensV1.OrgTokensServiceService, address, { name: 'orgs-teams', deadlineMs: 5_000 });
}

/** The orgs-teams client client orgs ask for organizations: made, looked up and deleted. */
export function organizationsClient(address: string): PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService> {
  return createClient(orgsTeamsOrgsV1.OrganizationsServiceService, address, { name: 'orgs-teams', deadlineMs: 5_000 });
}

/** The orgs-teams client client orgs ask for users: a client organization's admin user, made and taken back. */
export function identityClient(address: string): PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService> {
  return createClient(orgsTeamsV1.OrgsTeamsServiceService, address, { name: 'orgs-teams', deadlineMs: 5_000 });
}

/**
 * The account lookup of `open` for clusters' ingestion: accounts from orgs-teams (`GetBusAccountByKey`),
 * ownership from this service's own inventory, under the shared rule of `accountMayReportFor`
 * (@platform/agent-protocol). Errors other than NotFound (orgs-teams or the database down) propagate, so the
 * message is redelivered.
 */
export function busAccountDirectory(orgTokens: Parameters<typeof busAccountsOf>[0], db: Database): BusAccountDirectory {
  const store = ClustersStore.create(db);
  return new BusAccountDirectory(busAccountsOf(orgTokens), async (uid): Promise<ClusterOwnership | undefined> => {
    const row = await store.byUid(uid);
    if (!row) return undefined;
    const hub = row.hub_id === null ? undefined : await store.byId(row.hub_id);
    return { uid: row.uid, ownerType: row.owner_type, ownerId: Number(row.owner_id), hubUid: hub?.uid ?? '' };
  });
}
