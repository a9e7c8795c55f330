import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UUID_ANY_CASE_PATTERN } from '@platform/proto';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { orgInPath } from '../../targets';
import { ClusterJson, clusterJson, EnrolledClusterJson, enrolledCluster } from './presenters';
import { webUrl } from '../../web-url';

const route = sectionRoutes({ tag: 'Clusters', backend: 'clusters' });

// Beyond the spec (docs/clusters.md): enrolling a hub cluster of an organization and listing them.
// The spec has no route that creates clusters; member clusters enroll here and then report over the bus.

/** A DNS label (RFC 1123). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const EnrollClusterOption = z
  .object({
    name: z
      .string()
      .regex(DNS_LABEL, 'must be a DNS label: 1 to 63 lower-case letters, digits or hyphens, starting and ending with a letter or digit'),
    uid: z
      .string()
      .regex(UUID_ANY_CASE_PATTERN, 'must be a UUID')
      .optional()
      .meta({ description: 'The cluster UUID (kube-system namespace UID); made when absent' }),
    displayName: z.string().max(255).optional(),
    provider: z.string().max(64).optional(),
    kubernetesVersion: z.string().max(64).optional(),
    nodeCount: z.number().int().min(0).max(1_000_000).optional(),
    status: z.record(z.string(), z.unknown()).optional().meta({ description: 'Kubernetes-style status object' }),
    managerEndpoint: webUrl(2048, 'The multi-cluster-manager endpoint').optional(),
  })
  .meta({ id: 'EnrollClusterOption' });

const Org = z.object({ orgname: p.login });

export const clusterRoutes: Route[] = [
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/clusters',
    summary: 'Enroll a hub cluster of the organization and issue its bus credentials',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'create:cluster' }],
    body: { schema: EnrollClusterOption, invalid: { status: 400, prefix: 'invalid cluster' } },
    response: { status: 201, schema: EnrolledClusterJson },
    async handle({ body }, { backends, target }) {
      // One operation in clusters: the hub's bus account (orgs-teams) and the hub, or the account revoked.
      const { cluster, bus } = await backends.clusters.clusters.enrollHub({
        ownerType: 'organization',
        ownerId: target.id,
        name: body.name,
        uid: (body.uid ?? randomUUID()).toLowerCase(),
        displayName: body.displayName ?? '',
        provider: body.provider ?? '',
        kubernetesVersion: body.kubernetesVersion ?? '',
        nodeCount: body.nodeCount ?? 0,
        statusJson: JSON.stringify(body.status ?? {}),
        managerEndpoint: body.managerEndpoint ?? '',
      });
      return { body: enrolledCluster(cluster!, bus!) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/clusters',
    summary: "The organization's hub clusters",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'access:org' }],
    response: { status: 200, schema: z.array(ClusterJson) },
    async handle(_input, { kept, target }) {
      const { clusters } = await kept.clusters.clusters.listHubs({ ownerType: 'organization', ownerId: target.id });
      return { body: clusters.map(clusterJson) };
    },
  }),
];
