import { z } from 'zod';
import { InputError } from '@platform/errors';
import { sectionRoutes, type Route } from '../../route';
import {
  ClusterReferences,
  ClustersBody,
  contractFields,
  CONTRACT_FORM,
  CreateContractForm,
  documentOf,
  ExtendBody,
  RenameBody,
  TagsBody,
  READ_ONLY_FIELDS,
  readOnlyChanges,
  UpdateContractForm,
} from './form';
import {
  AuditEventJson,
  auditEventJson,
  ContractClusterStatusJson,
  contractClusterStatusJson,
  ContractJson,
  contractJson,
  DocumentUrlJson,
  ImportableClusterJson,
  importableClusterJson,
  ProductCatalogJson,
  QuotaUsageJson,
  quotaUsageJson,
} from './presenters';
import { ClusterId, ContractClusterId, ContractId, contractQuery, listRequest, documentUrl, ownerOf } from './shared';

const route = sectionRoutes({ tag: 'Contracts', backend: 'contracts-licensing' });

// Contracts for site admins, hosted deployments only (docs/contracts.md). `org` names the owner
// account: the one a contract is created for and the list is filtered by (default: the caller's own account);
// on the `/{id}` routes it limits the contract to that owner (default: any owner).

// `org` selects the owner account: an organization, or a user's own account.
const common = { auth: 'token', gate: 'hosted', org: 'account' } as const;

/** `orgOrUserId` of the status routes: the owner account id; omitted or 0 means the `org` account, else the caller. */
const StatusQuery = z.object({
  orgOrUserId: z
    .string({ error: 'must be an account id' })
    .regex(/^\d{1,18}$/, 'must be an account id')
    .transform(Number)
    .optional()
    .meta({ type: 'integer', format: 'int64' }),
  contract: contractQuery,
});

export const adminContractRoutes: Route[] = [
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts',
    summary: 'The contracts of the `org` account (default: the caller’s own)',
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    response: { status: 200, schema: z.array(ContractJson) },
    async handle(_input, ctx) {
      const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(listRequest(ownerOf(ctx).id));
      return { body: contracts.map((c) => contractJson(c)) };
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/contracts',
    summary: 'Create one contract per product for the `org` account (multipart, optional `document`)',
    requires: [{ on: 'site', permission: 'create_contracts:site_admin' }],
    body: { schema: CreateContractForm, multipart: CONTRACT_FORM },
    response: { status: 201, schema: z.array(ContractJson) },
    async handle({ body }, ctx) {
      const owner = ownerOf(ctx);
      const { contracts } = await ctx.backends.contractsLicensing.contracts.createContracts({
        ownerId: owner.id,
        ownerLogin: owner.login,
        ownerType: owner.type,
        products: body.products ?? [],
        fields: contractFields(body),
        document: documentOf(body.document),
        actor: ctx.caller.login,
      });
      return { body: contracts.map((c) => contractJson(c)) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/available_products',
    summary: 'The product catalog: product alias → plan info (non-community products)',
    requires: [{ on: 'site', permission: 'create_contracts:site_admin' }],
    response: { status: 200, schema: ProductCatalogJson },
    async handle(_input, ctx) {
      const { catalogJson } = await ctx.kept.contractsLicensing.contracts.availableProducts({});
      return { body: JSON.parse(catalogJson || '{}') as Record<string, unknown> };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/active/associated-clusters/:clusterID/status',
    summary: 'A cluster’s status as bound to the active contracts of an account (`orgOrUserId`, default the `org` account or the caller)',
    params: ClusterId,
    query: StatusQuery,
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    response: { status: 200, schema: ContractClusterStatusJson },
    async handle({ params, query }, ctx) {
      const status = await ctx.kept.contractsLicensing.contracts.clusterStatus({
        ownerId: query.orgOrUserId || ownerOf(ctx).id,
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
    path: '/contracts/active/associated-clusters/batch-status',
    // A question asked by POST: it changes nothing.
    audit: false,
    summary: 'The status of several clusters as bound to the active contracts of an account',
    query: StatusQuery,
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    body: { schema: ClustersBody },
    response: { status: 200, schema: z.array(ContractClusterStatusJson) },
    async handle({ query, body }, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.batchClusterStatus({
        ownerId: query.orgOrUserId || ownerOf(ctx).id,
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
    path: '/contracts/:id',
    summary: 'A contract',
    params: ContractId,
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    response: { status: 200, schema: ContractJson },
    async handle({ params }, ctx) {
      const contract = await ctx.kept.contractsLicensing.contracts.getContract({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: contractJson(contract) };
    },
  }),
  route({
    ...common,
    method: 'put',
    scope: 'write:organization',
    path: '/contracts/:id',
    summary:
      'Replace the given fields of a contract, and its document when one is sent (multipart); the read-only fields of a Contract read back are taken when unchanged',
    params: ContractId,
    requires: [{ on: 'site', permission: 'update_contracts:site_admin' }],
    body: { schema: UpdateContractForm, multipart: CONTRACT_FORM },
    errors: [
      {
        status: 400,
        description:
          'for a bad quota, email, feature or period, or a read-only field (`id`, `uid`, `orgOrUser`, `product`, `revoked`, `documentPath`, `clusters`) that differs from the contract, named in `errors`',
      },
    ],
    response: { status: 200, schema: ContractJson },
    async handle({ params, body }, ctx) {
      const ownerId = ctx.org?.id ?? 0;
      if (READ_ONLY_FIELDS.some((f) => body[f] !== undefined)) {
        // The whole Contract sent back, as the product's clients do: its read-only fields must be as they are.
        const current = await ctx.kept.contractsLicensing.contracts.getContract({ id: params.id, ownerId, actor: ctx.caller.login });
        const changes = readOnlyChanges(body, current);
        if (changes.length > 0) throw new InputError(changes.map((c) => `${c.field}: ${c.description}`).join('; '), changes);
      }
      const contract = await ctx.backends.contractsLicensing.contracts.updateContract({
        id: params.id,
        ownerId,
        fields: contractFields(body),
        document: documentOf(body.document),
        actor: ctx.caller.login,
      });
      return { body: contractJson(contract) };
    },
  }),
  route({
    ...common,
    method: 'delete',
    scope: 'write:organization',
    path: '/contracts/:id',
    summary: 'Delete a contract',
    params: ContractId,
    requires: [{ on: 'site', permission: 'delete_contracts:site_admin' }],
    response: { status: 200 },
    async handle({ params }, ctx) {
      await ctx.backends.contractsLicensing.contracts.deleteContract({ id: params.id, ownerId: ctx.org?.id ?? 0, actor: ctx.caller.login });
      return {};
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/contracts/:id/extend',
    summary: 'Extend a contract: a Contract body of which only `end` is used',
    params: ContractId,
    requires: [{ on: 'site', permission: 'extend_contracts:site_admin' }],
    body: { schema: ExtendBody },
    response: { status: 200, schema: ContractJson },
    async handle({ params, body }, ctx) {
      const contract = await ctx.backends.contractsLicensing.contracts.extendContract({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        endUnix: body.end,
        actor: ctx.caller.login,
      });
      return { body: contractJson(contract) };
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/contracts/:id/revoke',
    summary: 'Revoke a contract (its licenses go on the revocation list)',
    params: ContractId,
    requires: [{ on: 'site', permission: 'revoke_contracts:site_admin' }],
    response: { status: 200 },
    async handle({ params }, ctx) {
      await ctx.backends.contractsLicensing.contracts.revokeContract({ id: params.id, ownerId: ctx.org?.id ?? 0, actor: ctx.caller.login });
      return {};
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/:id/document',
    summary: 'A URL that downloads the contract document without a token, valid 30 minutes (404 when none)',
    params: ContractId,
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    response: { status: 200, schema: DocumentUrlJson },
    async handle({ params }, ctx) {
      const doc = await ctx.kept.contractsLicensing.contracts.getDocument({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: await documentUrl(ctx, doc.path) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/:id/audit',
    summary: 'The audit events of a contract, oldest first',
    params: ContractId,
    // Site-admin routes all (the spec says so of every admin contract route); the row's own permission holds for site admins on every organization.
    requires: [
      { on: 'site', permission: 'view_contracts:site_admin' },
      { on: 'org', permission: 'view_contracts:contract_mgmt' },
    ],
    response: { status: 200, schema: z.array(AuditEventJson) },
    async handle({ params }, ctx) {
      const { events } = await ctx.kept.contractsLicensing.contracts.listAudit({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: events.map(auditEventJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/:id/quota-usage',
    summary: 'What a contract used of its quota, measured now from what its bound clusters reported (as license issuing measures it)',
    params: ContractId,
    requires: [{ on: 'site', permission: 'view_contracts:site_admin' }],
    response: { status: 200, schema: QuotaUsageJson },
    async handle({ params }, ctx) {
      // Not kept: usage grows with every report, which no contract notice announces.
      const usage = await ctx.backends.contractsLicensing.contracts.getQuotaUsage({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: quotaUsageJson(usage) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/:id/clusters',
    summary: 'The clusters bound to a contract, with their status',
    params: ContractId,
    requires: [{ on: 'site', permission: 'add_cluster:site_admin' }],
    response: { status: 200, schema: z.array(ContractClusterStatusJson) },
    async handle({ params }, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.listContractClusters({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: clusters.map(contractClusterStatusJson) };
    },
  }),
  route({
    ...common,
    method: 'post',
    scope: 'write:organization',
    path: '/contracts/:id/clusters',
    summary: 'Bind clusters to a contract (400: empty list, a cluster that is not a UUID, one already bound)',
    params: ContractId,
    requires: [{ on: 'site', permission: 'add_cluster:site_admin' }],
    body: { schema: ClusterReferences },
    response: { status: 201, schema: z.array(ContractClusterStatusJson) },
    async handle({ params, body }, ctx) {
      const { clusters } = await ctx.backends.contractsLicensing.contracts.bindClusters({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        clusters: body.map((c) => ({ cluster: c.cluster, displayName: c.displayName ?? '', tags: c.tags ?? [] })),
        actor: ctx.caller.login,
      });
      return { body: clusters.map(contractClusterStatusJson) };
    },
  }),
  route({
    ...common,
    method: 'get',
    scope: 'read:organization',
    path: '/contracts/:id/clusters/imported/non-associated',
    summary: 'The owner’s inventory clusters not bound to the contract (400 for an unknown contract)',
    params: ContractId,
    requires: [{ on: 'site', permission: 'add_cluster:site_admin' }],
    response: { status: 200, schema: z.array(ImportableClusterJson) },
    async handle({ params }, ctx) {
      const { clusters } = await ctx.kept.contractsLicensing.contracts.importableClusters({
        id: params.id,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return { body: clusters.map(importableClusterJson) };
    },
  }),
  route({
    ...common,
    method: 'delete',
    scope: 'write:organization',
    path: '/contracts/:id/clusters/:ccID',
    summary: 'Unbind a cluster from a contract (`ccID`: the contract-cluster id)',
    params: ContractClusterId,
    requires: [{ on: 'site', permission: 'remove_cluster:site_admin' }],
    response: { status: 200 },
    async handle({ params }, ctx) {
      await ctx.backends.contractsLicensing.contracts.unbindCluster({
        id: params.id,
        ccId: params.ccID,
        ownerId: ctx.org?.id ?? 0,
        actor: ctx.caller.login,
      });
      return {};
    },
  }),
  route({
    ...common,
    method: 'patch',
    scope: 'write:organization',
    path: '/contracts/:id/clusters/:ccID/name',
    summary: 'Rename a bound cluster (its display name on the contract)',
    params: ContractClusterId,
    requires: [{ on: 'site', permission: 'update_cluster_name:site_admin' }],
    body: { schema: RenameBody },
    response: { status: 200 },
    async handle({ params, body }, ctx) {
      await ctx.backends.contractsLicensing.contracts.renameContractCluster({
        ref: { id: params.id, ccId: params.ccID, ownerId: ctx.org?.id ?? 0, actor: ctx.caller.login },
        name: body.clusterName,
      });
      return {};
    },
  }),
  route({
    ...common,
    method: 'patch',
    scope: 'write:organization',
    path: '/contracts/:id/clusters/:ccID/tags',
    summary: 'Replace a bound cluster’s tags, synced to every contract bound to the same cluster UUID',
    params: ContractClusterId,
    requires: [{ on: 'site', permission: 'update_cluster_tags:site_admin' }],
    body: { schema: TagsBody },
    response: { status: 200 },
    async handle({ params, body }, ctx) {
      await ctx.backends.contractsLicensing.contracts.setContractClusterTags({
        ref: { id: params.id, ccId: params.ccID, ownerId: ctx.org?.id ?? 0, actor: ctx.caller.login },
        tags: body.tags,
      });
      return {};
    },
  }),
];
