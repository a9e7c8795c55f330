import type { ClustersChanged } from '@platform/bus';
import { clustersV1 } from '@platform/proto';
import { announcingWrites, type ServiceBinding } from '@platform/service-kit';
import type { ClientOrgs } from './client-orgs/client-orgs';
import type { ClientOrgProvisioning } from './client-orgs/provisioning';
import { CLIENT_ORGS_READS, clientOrgsService } from './client-orgs/service';
import type { ClusterSets } from './cluster-sets/cluster-sets';
import { CLUSTER_SETS_READS, clusterSetsService } from './cluster-sets/service';
import { announcingChanges, ANY_CLUSTER, clustersServiceChange } from './clusters-changed';
import type { FeatureSets } from './feature-sets/feature-sets';
import { FEATURE_SETS_READS, featureSetsService } from './feature-sets/service';
import type { Clusters } from './inventory/clusters';
import type { HubEnrolment } from './inventory/enrolment';
import { CLUSTERS_READS, clustersService } from './service';

// clusters' writes announce themselves by method, as its app binds its services: every method not listed as a read
// sends CLUSTERS_CHANGED once it is over, answered or failed, naming what its answer names, or everything; a hub
// recorded is announced by the inventory itself (it knows the uid it made); a read sends nothing.

/** Fails every call it has not been given an answer for: a write that fails after it was asked is announced all the same. */
const failing = <T>(): T =>
  new Proxy({} as Record<string | symbol, unknown>, {
    get: (given, name) => given[name] ?? (async () => Promise.reject(new Error('nothing here'))),
  }) as T;

/** Calls every method of the binding once with its empty request, and answers what each one announced. */
async function announced(binding: ServiceBinding<any>, sent: ClustersChanged[]): Promise<Record<string, ClustersChanged[]>> {
  const found: Record<string, ClustersChanged[]> = {};
  for (const [name, method] of Object.entries(binding.definition as Record<string, { requestDeserialize(b: Buffer): unknown }>)) {
    const before = sent.length;
    const handle = binding.handlers[name] as (request: unknown, ctx: never) => Promise<unknown>;
    await handle(method.requestDeserialize(Buffer.alloc(0)), {} as never).catch(() => undefined);
    if (sent.length > before) found[name] = sent.slice(before);
  }
  return found;
}

function notices() {
  const sent: ClustersChanged[] = [];
  return { sent, changed: async (change: ClustersChanged) => void sent.push(change) };
}

describe("clusters' writes, announced by method", () => {
  it('announces every write of the cluster sets, feature sets and client organizations as everything, and no read', async () => {
    const { sent, changed } = notices();
    const sets = announcingWrites(clusterSetsService(failing<ClusterSets>()), CLUSTER_SETS_READS, announcingChanges(changed));
    const features = announcingWrites(featureSetsService(failing<FeatureSets>()), FEATURE_SETS_READS, announcingChanges(changed));
    const orgs = announcingWrites(
      clientOrgsService(failing<ClientOrgs>(), failing<ClientOrgProvisioning>()),
      CLIENT_ORGS_READS,
      announcingChanges(changed),
    );
    const all = [ANY_CLUSTER];
    expect(await announced(sets, sent)).toEqual({
      createClusterSet: all,
      deleteClusterSet: all,
      addClusters: all,
      removeClusters: all,
      bindNamespace: all,
      unbindNamespace: all,
    });
    expect(await announced(features, sent)).toEqual({ install: all, disable: all, updateCluster: all, autoUpdate: all });
    expect(await announced(orgs, sent)).toEqual({
      provisionClientOrg: all,
      createClientOrg: all,
      addCluster: all,
      removeCluster: all,
      deleteClientOrg: all,
    });
  });

  it("leaves a hub recorded to the inventory's own notice, names the hubs a connection changed, and everything when it failed", async () => {
    const { sent, changed } = notices();
    const inventory = failing<Clusters>();
    const binding = () =>
      announcingWrites(
        clustersService(inventory, failing<HubEnrolment>()),
        CLUSTERS_READS,
        announcingChanges(changed, clustersServiceChange),
      );
    expect(await announced(binding(), sent)).toEqual({ setUserConnection: [ANY_CLUSTER] });
    inventory.setUserConnection = async () => clustersV1.SetUserConnectionResponse.fromPartial({ changedHubUids: ['hub-a', 'hub-b'] });
    await binding().handlers.setUserConnection(
      clustersV1.SetUserConnectionRequest.fromPartial({ ownerType: 'organization', ownerId: 7, userId: 5, connect: false }),
      {} as never,
    );
    expect(sent.at(-1)).toEqual({ uids: ['hub-a', 'hub-b'], owners: ['organization:7'] });
  });
});
