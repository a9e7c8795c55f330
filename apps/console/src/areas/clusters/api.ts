import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';
import { useOrgAllowed } from '../orgs/api';
import { useUser } from '../../session';

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
    ok(
      api.POST('/clusters/{owner}/{cluster}/clustersets/create', {
        ...onHub(hub),
        body: clusters.length ? { clusterSet, clusters } : { clusterSet },
      }),
    ),
  deleteSet: (hub: HubRef, clusterSet: string) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/delete', { ...onHub(hub), body: { clusterSet } })),
  addClusters: (hub: HubRef, clusterSet: string, clusters: string[]) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/add', { ...onHub(hub), body: { clusterSet, clusters } })),
  removeClusters: (hub: HubRef, clusterSet: string, clusters: string[]) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/remove', { ...onHub(hub), body: { clusterSet, clusters } })),
  members: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/clusters', onSet(hub, set))),
  addable: (hub: HubRef, set: string) => ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/clusterlist', onSet(hub, set))),

  featureSets: (hub: HubRef, set: string) =>
    ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/featuresets', onSet(hub, set))),
  install: (hub: HubRef, set: string, body: InstallFeatureSet) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/install-featureset', { ...onSet(hub, set), body: { ...body } })),
  disable: (hub: HubRef, set: string, featureSet: string, features?: string[]) =>
    ok(
      api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/disable-featureset', {
        ...onSet(hub, set),
        body: features ? { clusterSet: set, featureSet, features } : { clusterSet: set, featureSet },
      }),
    ),

  featuresSync: (hub: HubRef, set: string) =>
    ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/sync-status/all-features', onSet(hub, set))),
  agentVersions: (hub: HubRef, set: string) =>
    ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/sync-status/opscenter-features-version', onSet(hub, set))),
  autoUpdateCheck: (hub: HubRef, set: string) =>
    ok(api.GET('/clusters/{owner}/{cluster}/clustersets/{clusterset}/auto-update/check', onSet(hub, set))),
  autoUpdate: (hub: HubRef, set: string) =>
    ok(api.POST('/clusters/{owner}/{cluster}/clustersets/{clusterset}/auto-update', onSet(hub, set))),

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

/** A set's sync status: the release it pins with each member's agent release, and each installed feature's alignment. */
export interface SetSync {
  versions: AgentVersions;
  features: FeaturesSync;
}

export function loadSetSync(hub: HubRef, set: string): Promise<SetSync> {
  return Promise.all([clustersApi.agentVersions(hub, set), clustersApi.featuresSync(hub, set)]).then(([versions, features]) => ({
    versions,
    features,
  }));
}

/** The installed features a cluster does not run at its set's release. */
export function unalignedFeatures(sync: SetSync, cluster: string): string[] {
  return Object.values(sync.features).flatMap((features) =>
    Object.entries(features)
      .filter(([, status]) => status.unalignedClusters.includes(cluster))
      .map(([feature]) => feature),
  );
}

/** A member's agent release and how it stands against its set, in words. */
export function memberSync(sync: SetSync, cluster: string): { version: string; status: string } {
  const version = sync.versions.clusters.find((c) => c.name === cluster)?.version ?? '';
  const release = sync.versions.clusterSetVersion;
  const unaligned = unalignedFeatures(sync, cluster);
  if (!version) return { version: '—', status: unaligned.length ? `Out of sync: ${unaligned.join(', ')}` : 'No platform agent reported' };
  if (version !== release) return { version, status: `Behind the set release ${release}` };
  return { version, status: unaligned.length ? `Out of sync: ${unaligned.join(', ')}` : 'In sync' };
}

/** A managed (spoke) cluster of a hub with its set's view of it: agent release and sync status. */
export interface Spoke extends ManagedCluster {
  agentVersion: string;
  sync: string;
}

/** The hub's managed clusters, each with its agent release and sync status as its set reports them. */
export async function loadSpokes(hub: HubRef): Promise<Spoke[]> {
  const clusters = await clustersApi.managedClusters(hub);
  const sets = [...new Set(clusters.map((c) => c.clusterSet).filter(Boolean))];
  const syncs = new Map(await Promise.all(sets.map(async (set) => [set, await loadSetSync(hub, set)] as const)));
  return clusters.map((c) => {
    const sync = syncs.get(c.clusterSet);
    // A cluster in no set has no desired state: the platform does not manage its features.
    if (!sync) return { ...c, agentVersion: '—', sync: 'Not in a cluster set' };
    const { version, status } = memberSync(sync, c.name);
    return { ...c, agentVersion: version, sync: status };
  });
}

/**
 * The query keys of the area, under the owner organization (`['orgs', org, 'clusters', ...]`) so a change of the
 * organization refreshes its clusters too. Everything of one hub is under `hub(ref)`: a change on the hub's page
 * (a cluster added to a set, a feature set installed, a namespace bound) alters what its other parts show, so every
 * change invalidates the whole hub.
 */
export const clusterKeys = {
  hubs: (org: string) => ['orgs', org, 'clusters'] as const,
  hub: (hub: HubRef) => ['orgs', hub.owner, 'clusters', hub.cluster] as const,
  sets: (hub: HubRef) => [...clusterKeys.hub(hub), 'sets'] as const,
  spokes: (hub: HubRef) => [...clusterKeys.hub(hub), 'spokes'] as const,
  set: (hub: HubRef, set: string) => [...clusterKeys.hub(hub), 'set', set] as const,
  members: (hub: HubRef, set: string) => [...clusterKeys.set(hub, set), 'members'] as const,
  featureSets: (hub: HubRef, set: string) => [...clusterKeys.set(hub, set), 'feature-sets'] as const,
  sync: (hub: HubRef, set: string) => [...clusterKeys.set(hub, set), 'sync'] as const,
  boundNamespaces: (hub: HubRef) => [...clusterKeys.hub(hub), 'bound-namespaces'] as const,
};

export const useHubs = (org: string) => useQuery({ queryKey: clusterKeys.hubs(org), queryFn: () => clustersApi.hubs(org) });
export const useSets = (hub: HubRef) => useQuery({ queryKey: clusterKeys.sets(hub), queryFn: () => clustersApi.sets(hub) });
export const useSpokes = (hub: HubRef) => useQuery({ queryKey: clusterKeys.spokes(hub), queryFn: () => loadSpokes(hub) });
export const useSetMembers = (hub: HubRef, set: string) =>
  useQuery({
    queryKey: clusterKeys.members(hub, set),
    queryFn: () =>
      Promise.all([clustersApi.members(hub, set), clustersApi.addable(hub, set)]).then(([inSet, addable]) => ({ inSet, addable })),
  });
export const useFeatureSets = (hub: HubRef, set: string) =>
  useQuery({ queryKey: clusterKeys.featureSets(hub, set), queryFn: () => clustersApi.featureSets(hub, set) });
export const useSetSync = (hub: HubRef, set: string) =>
  useQuery({
    queryKey: clusterKeys.sync(hub, set),
    queryFn: () =>
      Promise.all([loadSetSync(hub, set), clustersApi.autoUpdateCheck(hub, set)]).then(([sync, check]) => ({
        sync,
        possible: check.possible,
      })),
  });
export const useBoundNamespaces = (hub: HubRef) =>
  useQuery({ queryKey: clusterKeys.boundNamespaces(hub), queryFn: () => clustersApi.boundNamespaces(hub) });

/** How long the hub's agent usually takes to apply a desired state and report it; sync status is asked again then. */
const AGENT_REPORT_DELAY_MS = 3000;

const startsWith = (key: QueryKey, prefix: QueryKey) => prefix.every((part, i) => key[i] === part);

/**
 * A change on a hub: when it succeeds, everything the hub's page shows is asked again, except what belongs to the
 * cluster set `gone` names (a set just deleted: asking for it would answer 404 until its panel leaves; a new set of
 * the same name asks again, as the hub's change marked it stale). A change
 * reaches the clusters through the hub's agent, which reports a moment later, so sync status is asked once more then.
 */
export function useHubChange<In, Out>(hub: HubRef, change: (input: In) => Promise<Out>, gone?: (input: In) => string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: change,
    onSuccess: async (_out, input) => {
      const deleted = gone?.(input);
      const keep = deleted === undefined ? undefined : clusterKeys.set(hub, deleted);
      setTimeout(
        () => void client.invalidateQueries({ queryKey: clusterKeys.hub(hub), predicate: (q) => q.queryKey.at(-1) === 'sync' }),
        AGENT_REPORT_DELAY_MS,
      );
      await client.invalidateQueries({ queryKey: clusterKeys.hub(hub), predicate: (q) => !keep || !startsWith(q.queryKey, keep) });
    },
  });
}

/**
 * Whether the caller may change a hub (its cluster sets, features and bound namespaces): the routes ask for the
 * `manage` relation on the hub, which an organization's hubs give its owners, or for a site admin. The hub's own
 * relations are not asked for: allowed-permissions names objects by number and a hub's authorization object is its
 * UUID. Until the answer arrives nothing is offered; the API checks every request anyway.
 */
export function useMayManageHub(owner: string): boolean {
  const user = useUser();
  const can = useOrgAllowed(owner);
  return user.is_admin || can('owner');
}
