import { z } from 'zod';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { featureSetRoutes } from './features';
import { HUB_MANAGE, HUB_PREFIX, HUB_READ, HubPath, hubInPath } from './hub';
import {
  AuthInfo,
  BindNamespaceOptions,
  BoundNamespaces,
  ClusterSetMembersOptions,
  ClusterSetOptions,
  ClustersResp,
  clustersResp,
  ListClusterSetResp,
  listClusterSetResp,
  ManagedClusterInfo,
  managedClusterInfo,
} from './schemas';

const route = sectionRoutes({ tag: 'Cluster sets', backend: 'clusters' });

// Cluster sets and bound namespaces (docs/cluster-sets.md). Every row acts on the hub
// `/clusters/{owner}/{cluster}`: reads need view on it, changes manage (HUB_READ, HUB_MANAGE); the edge checks the
// owner, then the hub, before the body is read, so a caller without rights is told 403 whatever they send.

const SetPath = HubPath.extend({ clusterset: p.segment });
const SET = `${HUB_PREFIX}/clustersets/:clusterset`;
const AvailableQuery = z.object({
  type: z.string().optional().meta({ description: '`client-org` keeps the sets eligible for a client organization' }),
});

export const clusterSetRoutes: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${HUB_PREFIX}/clustersets`,
    summary: "The hub's cluster sets with their cluster counts",
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_READ,
    response: { status: 200, schema: z.array(ListClusterSetResp) },
    async handle(_in, { kept, target }) {
      const { sets } = await kept.clusters.clusterSets.listClusterSets({ hubUid: target.uid });
      return { body: sets.map(listClusterSetResp) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${HUB_PREFIX}/available-clusters`,
    summary: "The hub's managed clusters, each with the set it is in",
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_READ,
    response: { status: 200, schema: z.array(ManagedClusterInfo) },
    async handle(_in, { kept, target }) {
      const { clusters } = await kept.clusters.clusterSets.listManagedClusters({ hubUid: target.uid });
      return { body: clusters.map(managedClusterInfo) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${HUB_PREFIX}/available-clustersets`,
    summary: "The hub's cluster set names; type=client-org keeps those eligible for a client organization",
    auth: 'token',
    params: HubPath,
    query: AvailableQuery,
    target: hubInPath,
    requires: HUB_READ,
    response: { status: 200, schema: z.array(z.string()) },
    async handle({ query }, { kept, target }) {
      const { names } = await kept.clusters.clusterSets.listSetNames({
        hubUid: target.uid,
        clientOrgOnly: query.type === 'client-org',
      });
      return { body: names };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${HUB_PREFIX}/clustersets/create`,
    summary: 'Create a cluster set, with clusters when given',
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: ClusterSetOptions },
    errors: [
      { status: 400, description: 'for a cluster not managed by the hub or already in a set' },
      { status: 409, description: 'for a set name the hub has' },
    ],
    response: { status: 200, schema: ListClusterSetResp },
    async handle({ body }, { backends, target, caller }) {
      const set = await backends.clusters.clusterSets.createClusterSet({
        hubUid: target.uid,
        name: body.clusterSet,
        clusters: body.clusters ?? [],
        actor: caller.login,
      });
      return { body: listClusterSetResp(set) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${HUB_PREFIX}/clustersets/delete`,
    summary: 'Delete a cluster set (its clusters stay managed by the hub)',
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: ClusterSetOptions },
    errors: [{ status: 404, description: 'for a set the hub does not have' }],
    response: { status: 200, schema: ListClusterSetResp },
    async handle({ body }, { backends, target }) {
      const set = await backends.clusters.clusterSets.deleteClusterSet({ hubUid: target.uid, name: body.clusterSet });
      return { body: listClusterSetResp(set) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${HUB_PREFIX}/clustersets/add`,
    summary: 'Add managed clusters to a cluster set',
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: ClusterSetMembersOptions },
    errors: [
      { status: 404, description: 'for an unknown set' },
      { status: 400, description: 'for a cluster not managed by the hub or already in a set (nothing added)' },
    ],
    response: { status: 200, schema: ListClusterSetResp },
    async handle({ body }, { backends, target, caller }) {
      const set = await backends.clusters.clusterSets.addClusters({
        hubUid: target.uid,
        name: body.clusterSet,
        clusters: body.clusters,
        actor: caller.login,
      });
      return { body: listClusterSetResp(set) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${HUB_PREFIX}/clustersets/remove`,
    summary: 'Remove clusters from a cluster set',
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: ClusterSetMembersOptions },
    errors: [
      { status: 404, description: 'for an unknown set' },
      { status: 400, description: 'for a cluster not in the set (nothing removed)' },
    ],
    response: { status: 200, schema: ListClusterSetResp },
    async handle({ body }, { backends, target, caller }) {
      const set = await backends.clusters.clusterSets.removeClusters({
        hubUid: target.uid,
        name: body.clusterSet,
        clusters: body.clusters,
        actor: caller.login,
      });
      return { body: listClusterSetResp(set) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/clusters`,
    summary: 'The managed clusters in a cluster set',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: z.array(ClustersResp) },
    async handle({ params }, { kept, target }) {
      const { clusters } = await kept.clusters.clusterSets.listMembers({ hubUid: target.uid, name: params.clusterset });
      return { body: clusters.map(clustersResp) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/clusterlist`,
    summary: "The names of the hub's managed clusters that can be added to the set (in no set yet)",
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: z.array(z.string()) },
    async handle({ params }, { kept, target }) {
      const { names } = await kept.clusters.clusterSets.listAddable({ hubUid: target.uid, name: params.clusterset });
      return { body: names };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/auth-info`,
    summary: 'Role-ref names granted on the set and the users holding each',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: AuthInfo },
    async handle({ params }, { kept, target }) {
      const { json } = await kept.clusters.clusterSets.authInfo({ hubUid: target.uid, name: params.clusterset });
      return { body: JSON.parse(json) as Record<string, string[]> };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${HUB_PREFIX}/bound-namespaces`,
    summary: 'Namespaces of the hub and the cluster sets bound to each',
    auth: 'token',
    params: HubPath,
    target: hubInPath,
    requires: HUB_READ,
    response: { status: 200, schema: BoundNamespaces },
    async handle(_in, { kept, target }) {
      const { json } = await kept.clusters.clusterSets.boundNamespaces({ hubUid: target.uid });
      return { body: JSON.parse(json) as Record<string, string[]> };
    },
  }),
  ...(['bind', 'unbind'] as const).map((action) =>
    route({
      method: 'post',
      scope: 'write:organization',
      path: `${HUB_PREFIX}/bound-namespaces/${action}`,
      summary: action === 'bind' ? 'Bind a namespace of the hub to a cluster set' : 'Unbind a namespace of the hub from a cluster set',
      auth: 'token',
      params: HubPath,
      target: hubInPath,
      requires: HUB_MANAGE,
      body: { schema: BindNamespaceOptions },
      errors: [{ status: 400, description: 'for a namespace the hub does not have or a set it does not have' }],
      response: { status: 200, schema: BoundNamespaces, description: 'The bound namespaces after the change' },
      async handle({ body }, { backends, target }) {
        const req = { hubUid: target.uid, clusterSet: body.clusterSet, namespace: body.namespace };
        const sets = backends.clusters.clusterSets;
        const { json } = action === 'bind' ? await sets.bindNamespace(req) : await sets.unbindNamespace(req);
        return { body: JSON.parse(json) as Record<string, string[]> };
      },
    }),
  ),
  ...featureSetRoutes,
];
