import { z } from 'zod';
import type { clustersV1, orgTokensV1 } from '@platform/proto';

/** A hub or managed cluster as the cluster routes answer it (beyond the spec: docs/clusters.md). */
export const ClusterJson = z
  .object({
    uid: z.string().meta({ description: 'The cluster UUID; the authz object is cluster:<uid>' }),
    name: z.string().meta({ description: 'A DNS label, unique among the hubs of the owner' }),
    displayName: z.string(),
    provider: z.string(),
    kubernetesVersion: z.string(),
    nodeCount: z.number().int(),
    status: z.record(z.string(), z.unknown()).meta({ description: 'Kubernetes-style status object, free-form' }),
    managerEndpoint: z.string().meta({ description: 'The multi-cluster-manager endpoint; empty when none' }),
    createdAt: z.string().meta({ description: 'When the platform recorded it (RFC 3339)' }),
    hubUID: z.string().meta({ description: 'The hub of a managed cluster; empty for a hub' }),
    features: z.array(z.object({ name: z.string(), version: z.string() })).meta({ description: 'Platform features installed' }),
    connectedUsers: z
      .array(z.object({ login: z.string(), role: z.string() }))
      .meta({ description: "Users the cluster's agent reports connected (team auto-connect), with their ClusterRole; by login" }),
  })
  .meta({ id: 'Cluster' });

export const clusterJson = (c: clustersV1.Cluster): z.input<typeof ClusterJson> => ({
  uid: c.uid,
  name: c.name,
  displayName: c.displayName,
  provider: c.provider,
  kubernetesVersion: c.kubernetesVersion,
  nodeCount: c.nodeCount,
  status: JSON.parse(c.statusJson || '{}') as Record<string, unknown>,
  managerEndpoint: c.managerEndpoint,
  createdAt: new Date(c.createdUnix * 1000).toISOString(),
  hubUID: c.hubUid,
  features: c.features.map((f) => ({ name: f.name, version: f.version })),
  connectedUsers: (c.connectedUsers ?? []).map((u) => ({ login: u.login, role: u.role })),
});

/** The answer of an enrollment: the hub and its bus credentials, the seed shown this once. */
export const EnrolledClusterJson = z
  .object({
    cluster: ClusterJson,
    bus: z
      .object({
        accountID: z.number().int().meta({ description: 'The bus account (listed by GET /orgs/{org}/tokens/bus-tokens)' }),
        publicKey: z.string().meta({ description: 'NATS user public key (nkey, starts with U)' }),
        seed: z.string().meta({ description: 'NATS user seed (private key); answered only here, never stored' }),
        namespace: z.string().meta({
          description:
            "The platform's namespace on NATS: the agent uses every subject as `<namespace>.<subject>` and every stream as " +
            '`<NAMESPACE>_<STREAM>` (upper-cased, `-` as `_`); empty when the platform runs on its in-process bus',
        }),
      })
      .meta({ id: 'ClusterBusCredentials' }),
  })
  .meta({ id: 'EnrolledCluster' });

export const enrolledCluster = (c: clustersV1.Cluster, bus: orgTokensV1.CreatedBusAccount): z.input<typeof EnrolledClusterJson> => ({
  cluster: clusterJson(c),
  bus: { accountID: bus.account!.id, publicKey: bus.account!.busPubKey, seed: bus.seed, namespace: bus.busNamespace },
});
