import { z } from 'zod';
import type { clusterSetsV1, clustersV1 } from '@platform/proto';

/** A DNS label (RFC 1123), as cluster and set names are. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const name = z.string().regex(DNS_LABEL, 'must be a DNS label: 1 to 63 lower-case letters, digits or hyphens');

export const ListClusterSetResp = z
  .object({
    clusterSetName: z.string(),
    clusterSetTitle: z.string().meta({ description: 'May be empty' }),
    clusters: z.number().int().meta({ description: 'How many managed clusters are in the set' }),
  })
  .meta({ id: 'ListClusterSetResp' });

export const listClusterSetResp = (s: clusterSetsV1.ClusterSet): z.input<typeof ListClusterSetResp> => ({
  clusterSetName: s.name,
  clusterSetTitle: s.title,
  clusters: s.clusters,
});

export const ClustersResp = z
  .object({
    name: z.string(),
    displayName: z.string(),
    clusterNode: z.number().int().meta({ description: 'Node count as the cluster reports it' }),
    provider: z.string(),
    kubernetesVersion: z.string(),
    imported: z
      .boolean()
      .meta({ description: 'Whether the cluster was imported into the hub (every managed cluster the agent reports is)' }),
  })
  .meta({ id: 'ClustersResp' });

export const clustersResp = (c: clustersV1.Cluster): z.input<typeof ClustersResp> => ({
  name: c.name,
  displayName: c.displayName,
  clusterNode: c.nodeCount,
  provider: c.provider,
  kubernetesVersion: c.kubernetesVersion,
  imported: true,
});

export const ManagedClusterInfo = z
  .object({
    name: z.string(),
    uid: z.string(),
    displayName: z.string(),
    clusterNode: z.number().int(),
    provider: z.string(),
    kubernetesVersion: z.string(),
    clusterSet: z.string().meta({ description: 'The set the cluster is in; empty when none (a cluster is in one set at most)' }),
  })
  .meta({ id: 'ManagedClusterInfo' });

export const managedClusterInfo = (m: clusterSetsV1.ManagedCluster): z.input<typeof ManagedClusterInfo> => ({
  name: m.cluster!.name,
  uid: m.cluster!.uid,
  displayName: m.cluster!.displayName,
  clusterNode: m.cluster!.nodeCount,
  provider: m.cluster!.provider,
  kubernetesVersion: m.cluster!.kubernetesVersion,
  clusterSet: m.clusterSet,
});

export const ClusterSetOptions = z
  .object({
    clusterSet: name.meta({ description: 'The cluster set name' }),
    clusters: z
      .array(z.string().min(1))
      .max(1000)
      .optional()
      .meta({ description: 'Managed clusters of the hub; required for add and remove' }),
  })
  .meta({ id: 'ClusterSetOptions' });

/** ClusterSetOptions for add and remove, where `clusters` is required (at least one). */
export const ClusterSetMembersOptions = ClusterSetOptions.extend({
  clusters: z.array(z.string().min(1)).min(1).max(1000).meta({ description: 'Managed clusters of the hub (at least one)' }),
});

export const BindNamespaceOptions = z
  .object({ clusterSet: z.string().min(1), namespace: z.string().min(1) })
  .meta({ id: 'BindNamespaceOptions' });

export const BoundNamespaces = z
  .record(z.string(), z.array(z.string()))
  .meta({ id: 'BoundNamespaces', description: 'Namespace of the hub → the names of the cluster sets bound to it' });

export const AuthInfo = z
  .record(z.string(), z.array(z.string()))
  .meta({ id: 'ClusterSetAuthInfo', description: 'Role-ref name → the logins of the users holding it on the set' });
