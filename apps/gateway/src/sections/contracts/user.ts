import { z } from 'zod';
import { InputError, NotFoundError } from '@platform/errors';
import * as p from '../../params';
import { sectionRoutes, type EdgeContext, type ObjectResolver, type Requirement, type Route, type User } from '../../route';
import { AssignClusterBody, ClusterReferences, ClustersBody, PreferencesBody, RenameBody, TagsBody } from './form';
import {
  AssociatedClusterJson,
  associatedClusterJson,
  AuditEventJson,
  auditEventJson,
  ContractClusterStatusJson,
  contractClusterStatusJson,
  DocumentUrlJson,
  ImportableClusterJson,
  importableClusterJson,
  QuotaUsageJson,
  quotaUsageJson,
  UserContractJson,
  userContractJson,
} from './presenters';
import { ClusterId, ContractClusterId, ContractId, contractQuery, listRequest, deniedWhenMissing, documentUrl, ownerOf } from './shared';

const route = sectionRoutes({ tag: 'Contracts', backend: 'contracts-licensing' });

// An account's own contracts, hosted deployments only (docs/contracts.md). Every route acts for the
// `org` organization (its members and site admins: `access:org`) or, without `org`, the caller's own account,
// and passes that owner to contracts-licensing, which answers NotFound for another account's contract. The
// answers carry the sanitized contract (no admin-only recipient lists). Changing which clusters a contract binds,
// or their names and tags, takes the relation binding takes (add_cluster:contract_mgmt), never membership alone.

const MEMBERSHIP: Requirement<never> = { on: 'org', permission: 'access:org', denied: 'org membership required' };
const ASSIGN: Requirement<never> = { on: 'org', permission: 'add_cluster:contract_mgmt' };
const common = { auth: 'token', gate: 'hosted', org: 'optional' } as const;

/**
 * The contract `{id}` of the account, for `updated_preferences:contracts` on it: 403 for another account's contract
 * or a missing one (contracts-licensing answers NotFound for both). Its owner account is handed to authz as a
 * contextual tuple (`<owner> owner contract:<id>`), so the check follows the model (the owner user, or the owner
 * organization's owners, site admins and custom-role holders) from the contract contracts-licensing answered.
 */
const contractOfAccount: ObjectResolver<{ params: { id: number } }, EdgeContext & { caller: User }> = {
  describe: 'contract `{id}` of the account (403 also for another account’s contract)',
  async resolve({ params }, ctx) {
    const owner = ownerOf(ctx);
    const { contracts } = ctx.kept.contractsLicensing;
    await deniedWhenMissing(contracts.getContract({ id: params.id, ownerId: owner.id, actor: ctx.caller.login }));
    const object = `contract:${params.id}`;
    return { type: 'contract', id: params.id, contextualTuples: [{ user: `${owner.type}:${owner.id}`, relation: 'owner', object }] };
  },
};

export const userContractRoutes: Route[] = [
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts',
    summary: 'The contracts of the `org` account, or of the caller’s own',
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(UserContractJson) },
    async handle(_input, ctx) {
      const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(listRequest(ownerOf(ctx).id));
      return { body: contracts.map((c) => userContractJson(c)) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/active-offline-contracts',
    summary: 'The account’s active contracts that allow offline licenses',
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(UserContractJson) },
    async handle(_input, ctx) {
      const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(
        listRequest(ownerOf(ctx).id, {
          activeOnly: true,
          offlineOnly: true,
        }),
      );
      return { body: contracts.map((c) => userContractJson(c)) };
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/user/contracts/assign-cluster',
    summary: 'Bind one cluster to several of the account’s contracts, all or none',
    requires: [MEMBERSHIP, ASSIGN],
    body: { schema: AssignClusterBody },
    response: { status: 200 },
    async handle({ body }, ctx) {
      if (body.contractIds.length === 0) {
        throw new InputError('contractIds must name at least one contract', [{ field: 'contractIds', description: 'empty' }]);
      }
      await ctx.backends.contractsLicensing.contracts.assignCluster({
        ownerId: ownerOf(ctx).id,
        cluster: body.clusterId,
        displayName: body.displayName ?? '',
        contractIds: body.contractIds,
        actor: ctx.caller.login,
      });
      return {};
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/active/associated-with/clusters/:clusterID',
    summary: 'The account’s active contracts the cluster is bound to (`onlyOffline`: those allowing offline licenses)',
    params: ClusterId,
    query: z.object({ onlyOffline: p.flag }),
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(UserContractJson) },
    async handle({ params, query }, ctx) {
      const cluster = params.clusterID.toLowerCase();
      const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(
        listRequest(ownerOf(ctx).id, {
          activeOnly: true,
          offlineOnly: query.onlyOffline,
          boundTo: cluster,
        }),
      );
      return { body: contracts.map((c) => userContractJson(c, cluster)) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/active/not-associated-with/clusters/:clusterID',
    summary: 'The account’s active contracts the cluster is not bound to',
    params: ClusterId,
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(UserContractJson) },
    async handle({ params }, ctx) {
      const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(
        listRequest(ownerOf(ctx).id, {
          activeOnly: true,
          notBoundTo: params.clusterID.toLowerCase(),
        }),
      );
      return { body: contracts.map((c) => userContractJson(c)) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/active/associated-clusters',
    summary: 'Per cluster bound to the account’s active contracts, the contracts it is bound to',
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(AssociatedClusterJson) },
    async handle(_input, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.associatedClusters({ ownerId: ownerOf(ctx).id });
      return { body: clusters.map(associatedClusterJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/active/associated-clusters/:clusterID/status',
    summary: 'A cluster’s status as bound to the account’s active contracts (or to `contract`)',
    params: ClusterId,
    query: z.object({ contract: contractQuery }),
    requires: [MEMBERSHIP],
    response: { status: 200, schema: ContractClusterStatusJson },
    async handle({ params, query }, ctx) {
      const status = await ctx.kept.contractsLicensing.contracts.clusterStatus({
        ownerId: ownerOf(ctx).id,
        cluster: params.clusterID.toLowerCase(),
        contractId: query.contract ?? 0,
      });
      return { body: contractClusterStatusJson(status) };
    },
  }),
  route({
    ...common,
    method: 'post',
    // A question asked by POST (its body is a list): it changes nothing, so reading is enough.
    scope: 'read:organization',
    path: '/user/contracts/active/associated-clusters/batch-status',
    // A question asked by POST: it changes nothing.
    audit: false,
    summary: 'The status of several clusters as bound to the account’s active contracts (or to `contract`)',
    query: z.object({ contract: contractQuery }),
    requires: [MEMBERSHIP],
    body: { schema: ClustersBody },
    response: { status: 200, schema: z.array(ContractClusterStatusJson) },
    async handle({ query, body }, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.batchClusterStatus({
        ownerId: ownerOf(ctx).id,
        clusters: body.clusters.map((c) => c.toLowerCase()),
        contractId: query.contract ?? 0,
      });
      return { body: clusters.map(contractClusterStatusJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id',
    summary: 'One of the account’s contracts (404 for another account’s)',
    params: ContractId,
    requires: [MEMBERSHIP],
    response: { status: 200, schema: UserContractJson },
    async handle({ params }, ctx) {
      const contract = await ctx.kept.contractsLicensing.contracts.getContract({
        id: params.id,
        ownerId: ownerOf(ctx).id,
        actor: ctx.caller.login,
      });
      return { body: userContractJson(contract) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id/quota-usage',
    summary: 'What one of the account’s contracts used of its quota, measured now (404 for another account’s)',
    params: ContractId,
    requires: [MEMBERSHIP],
    response: { status: 200, schema: QuotaUsageJson },
    async handle({ params }, ctx) {
      // Not kept: usage grows with every report, which no contract notice announces.
      const usage = await ctx.backends.contractsLicensing.contracts.getQuotaUsage({
        id: params.id,
        ownerId: ownerOf(ctx).id,
        actor: ctx.caller.login,
      });
      return { body: quotaUsageJson(usage) };
    },
  }),
  route({
    ...common,
    method: 'put',
    scope: 'write:organization',
    path: '/user/contracts/:id/preferences',
    summary: 'Change auto-assignment and the usage-alert recipients of a contract (a single string is a one-element list)',
    params: ContractId,
    requires: [MEMBERSHIP],
    checks: [
      { on: contractOfAccount, relation: 'updated_preferences', denied: 'you do not have the updated_preferences:contracts permission' },
    ],
    body: { schema: PreferencesBody, namesAValue: true },
    response: { status: 200, schema: UserContractJson },
    async handle({ params, body }, ctx) {
      const owner = ownerOf(ctx);
      const { contracts } = ctx.backends.contractsLicensing;
      const contract = await contracts.setPreferences({
        id: params.id,
        ownerId: owner.id,
        autoAssignCluster: body.autoAssignCluster,
        usageAlertClient: body.usageAlertClient ?? [],
        usageAlertClientGiven: body.usageAlertClient !== undefined,
        actor: ctx.caller.login,
      });
      return { body: userContractJson(contract) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id/audit',
    summary: 'The audit events of one of the account’s contracts (403 for another account’s or a missing one)',
    params: ContractId,
    requires: [MEMBERSHIP],
    errors: [{ status: 403, description: 'for another account’s contract or a missing one (the same answer for both)' }],
    response: { status: 200, schema: z.array(AuditEventJson) },
    async handle({ params }, ctx) {
      const { events } = await deniedWhenMissing(
        ctx.kept.contractsLicensing.contracts.listAudit({ id: params.id, ownerId: ownerOf(ctx).id, actor: ctx.caller.login }),
      );
      return { body: events.map(auditEventJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id/document',
    summary: 'A URL that downloads the contract document without a token, valid 30 minutes (404 when none)',
    params: ContractId,
    requires: [MEMBERSHIP],
    response: { status: 200, schema: DocumentUrlJson },
    async handle({ params }, ctx) {
      const doc = await ctx.kept.contractsLicensing.contracts.getDocument({
        id: params.id,
        ownerId: ownerOf(ctx).id,
        actor: ctx.caller.login,
      });
      return { body: await documentUrl(ctx, doc.path) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id/clusters',
    summary: 'The clusters bound to one of the account’s contracts (403 for another account’s)',
    params: ContractId,
    requires: [MEMBERSHIP],
    errors: [{ status: 403, description: 'for another account’s contract or a missing one (the same answer for both)' }],
    response: { status: 200, schema: z.array(ContractClusterStatusJson) },
    async handle({ params }, ctx) {
      const { clusters } = await deniedWhenMissing(
        ctx.kept.contractsLicensing.contracts.listContractClusters({
          id: params.id,
          ownerId: ownerOf(ctx).id,
          actor: ctx.caller.login,
        }),
      );
      return { body: clusters.map(contractClusterStatusJson) };
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/user/contracts/:id/clusters',
    summary: 'Bind clusters to one of the account’s contracts (400: empty list, not a UUID, invalid contract, already bound)',
    params: ContractId,
    requires: [MEMBERSHIP, ASSIGN],
    body: { schema: ClusterReferences },
    response: { status: 201, schema: z.array(ContractClusterStatusJson) },
    async handle({ params, body }, ctx) {
      try {
        const { clusters } = await ctx.backends.contractsLicensing.contracts.bindClusters({
          id: params.id,
          ownerId: ownerOf(ctx).id,
          clusters: body.map((c) => ({ cluster: c.cluster, displayName: c.displayName ?? '', tags: c.tags ?? [] })),
          actor: ctx.caller.login,
        });
        return { body: clusters.map(contractClusterStatusJson) };
      } catch (err) {
        // The spec's "invalid contract": not one of the account's.
        if (err instanceof NotFoundError) throw new InputError('invalid contract: no such contract of this account');
        throw err;
      }
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/user/contracts/:id/clusters/imported/non-associated',
    summary: 'The account’s inventory clusters not bound to the contract (400 for an unknown contract)',
    params: ContractId,
    requires: [MEMBERSHIP],
    response: { status: 200, schema: z.array(ImportableClusterJson) },
    async handle({ params }, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.importableClusters({
        id: params.id,
        ownerId: ownerOf(ctx).id,
        actor: ctx.caller.login,
      });
      return { body: clusters.map(importableClusterJson) };
    },
  }),
  route({
    ...common,
    method: 'delete',
    scope: 'write:organization',
    path: '/user/contracts/:id/clusters/:ccID',
    summary: 'Unbind a cluster from one of the account’s contracts (403 for another account’s)',
    params: ContractClusterId,
    requires: [MEMBERSHIP, ASSIGN],
    errors: [{ status: 403, description: 'for another account’s contract or a missing one (the same answer for both)' }],
    response: { status: 200 },
    async handle({ params }, ctx) {
      await deniedWhenMissing(
        ctx.backends.contractsLicensing.contracts.unbindCluster({
          id: params.id,
          ccId: params.ccID,
          ownerId: ownerOf(ctx).id,
          actor: ctx.caller.login,
        }),
      );
      return {};
    },
  }),
  route({
    ...common,
    method: 'patch',
    scope: 'write:organization',
    path: '/user/contracts/:id/clusters/:ccID/name',
    summary: 'Rename a cluster bound to one of the account’s contracts',
    params: ContractClusterId,
    requires: [MEMBERSHIP, ASSIGN],
    body: { schema: RenameBody },
    errors: [{ status: 403, description: 'for another account’s contract or a missing one (the same answer for both)' }],
    response: { status: 200 },
    async handle({ params, body }, ctx) {
      await deniedWhenMissing(
        ctx.backends.contractsLicensing.contracts.renameContractCluster({
          ref: { id: params.id, ccId: params.ccID, ownerId: ownerOf(ctx).id, actor: ctx.caller.login },
          name: body.clusterName,
        }),
      );
      return {};
    },
  }),
  route({
    ...common,
    method: 'patch',
    scope: 'write:organization',
    path: '/user/contracts/:id/clusters/:ccID/tags',
    summary: 'Replace a bound cluster’s tags, synced to the account’s contracts bound to the same cluster UUID',
    params: ContractClusterId,
    requires: [MEMBERSHIP, ASSIGN],
    body: { schema: TagsBody },
    errors: [{ status: 403, description: 'for another account’s contract or a missing one (the same answer for both)' }],
    response: { status: 200 },
    async handle({ params, body }, ctx) {
      await deniedWhenMissing(
        ctx.backends.contractsLicensing.contracts.setContractClusterTags({
          ref: { id: params.id, ccId: params.ccID, ownerId: ownerOf(ctx).id, actor: ctx.caller.login },
          tags: body.tags,
        }),
      );
      return {};
    },
  }),
];
