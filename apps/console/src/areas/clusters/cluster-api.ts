import { api, ok, type Schema } from '../../api/client';

/** A hub cluster as the cluster-set routes name it: its owner's slug and its name (`/clusters/{owner}/{cluster}`). */
export interface HubRef {
  owner: string;
  cluster: string;
}

export type Hub = Schema<'Cluster'>;
export type ManagedCluster = Schema<'ManagedClusterInfo'>;
export type ClusterSet = Schema<'ListClusterSetResp'>;
export type SetMember = Schema<'ClustersResp'>;
export type FeatureSet = Schema<'FeatureSetInfo'>;
export type Feature = Schema<'FeatureInfo'>;
export type FeaturesSync = Schema<'AllFeaturesSyncStatus'>;
export type AgentVersions = Schema<'OpscenterFeaturesVersion'>;
export type BoundNamespaces = Schema<'BoundNamespaces'>;

/** What `install-featureset` reads: the feature set, the features asked (default: recommended) and its Helm values. */
export interface InstallFeatureSet {
  featureSet: string;
  features?: string[];
  values?: Record<string, unknown>;
}

const onHub = (hub: HubRef) => ({ params: { path: { owner: hub.owner, cluster: hub.cluster } } });
const onSet = (hub: HubRef, clusterset: string) => ({ params: { path: { owner: hub.owner, cluster: hub.cluster, clusterset } } });

/** Every call of this area, so the screens name what they do, not the paths. */
export const clustersApi = {
  hubs: (org: string) => ok(api.GET('/orgs/{orgname}/clusters', { params: { path: { orgname: org } } })),
  managedClusters: (hub: HubRef) => ok(api.GET('/clusters/{owner}/{cluster}/available-clusters', onHub(hub))),

  sets: (hub: HubRef) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets', onHub(hub))),
  createSet: (hub: HubRef, clusterSet: string, clusters: string[]) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/create', { ...onHub(hub), body: clusters.length ? { clusterSet, clusters } : { clusterSet } })),
  deleteSet: (hub: HubRef, clusterSet: string) => ok(api.POST('/clusters/{owner}/{cluster}/clustersets/delete', { ...onHub(hub), body: { clusterSet } })),
  addClusters: (hub: HubRef, clusterSet: string, clusters: string[]) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/add', { ...onHub(hub), body: { clusterSet, clusters } })),
  removeClusters: (hub: HubRef, clusterSet: string, clusters: string[]) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/remove', { ...onHub(hub), body: { clusterSet, clusters } })),
  members: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/clusters', onSet(hub, set))),
  addable: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/clusterlist', onSet(hub, set))),

  featureSets: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/featuresets', onSet(hub, set))),
  install: (hub: HubRef, set: string, body: InstallFeatureSet) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/install-featureset', { ...onSet(hub, set), body: { ...body } })),
  disable: (hub: HubRef, set: string, featureSet: string, features?: string[]) =>
    ok(
      api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/disable-featureset', {
        ...onSet(hub, set),
        body: features ? { clusterSet: set, featureSet, features } : { clusterSet: set, featureSet },
      }),
    ),

  featuresSync: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/sync-status/all-features', onSet(hub, set))),
  agentVersions: (hub: HubRef, set: string) =>
    ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/sync-status/opscenter-features-version', onSet(hub, set))),
  autoUpdateCheck: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/auto-update/check', onSet(hub, set))),
  autoUpdate: (hub: HubRef, set: string) => ok(api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/auto-update', onSet(hub, set))),

  boundNamespaces: (hub: HubRef) => ok(api.GET('/clusters/{owner}/{cluster}/bound-namespaces', onHub(hub))),
  bind: (hub: HubRef, namespace: string, clusterSet: string) =>
    ok(api.POST('/clusters/{owner}/{cluster}/bound-namespaces/bind', { ...onHub(hub), body: { namespace, clusterSet } })),
  unbind: (hub: HubRef, namespace: string, clusterSet: string) =>
    ok(api.POST('/clusters/{owner}/{cluster}/bound-namespaces/unbind', { ...onHub(hub), body: { namespace, clusterSet } })),
};

/** The console's address of a hub's page. */
export function hubHref(org: string, hub: string): string {
  return `/orgs/${encodeURIComponent(org)}/clusters/${encodeURIComponent(hub)}`;
}

/** Cluster set and namespace names are DNS labels (RFC 1123), as the API checks them. */
export function dnsLabelProblem(value: string, label: string): string | undefined {
  if (!value) return `${label} is required`;
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(value))
    return `${label} must be a DNS label: 1 to 63 lower-case letters, digits or hyphens, starting and ending with a letter or digit`;
  return undefined;
}
