import { Table } from '../../ui';
import { clustersApi, type AgentVersions, type FeaturesSync, type HubRef, type ManagedCluster } from './cluster-api';

/** A set's sync status: the release it pins with each member's agent release, and each installed feature's alignment. */
export interface SetSync {
  versions: AgentVersions;
  features: FeaturesSync;
}

export function loadSetSync(hub: HubRef, set: string): Promise<SetSync> {
  return Promise.all([clustersApi.agentVersions(hub, set), clustersApi.featuresSync(hub, set)]).then(([versions, features]) => ({ versions, features }));
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

export function SpokesTable({ caption, spokes }: { caption: string; spokes: Spoke[] }) {
  return (
    <Table
      caption={caption}
      rows={spokes}
      rowKey={(s) => s.uid}
      empty="The hub's agent has reported no managed clusters yet."
      columns={[
        { header: 'Cluster', cell: (s) => s.name },
        { header: 'Display name', cell: (s) => s.displayName || '—' },
        { header: 'Provider', cell: (s) => s.provider || '—' },
        { header: 'Kubernetes', cell: (s) => s.kubernetesVersion || '—' },
        { header: 'Nodes', cell: (s) => s.clusterNode },
        { header: 'Cluster set', cell: (s) => s.clusterSet || <span className="muted">none</span> },
        { header: 'Agent version', cell: (s) => s.agentVersion },
        { header: 'Sync status', cell: (s) => s.sync },
      ]}
    />
  );
}
