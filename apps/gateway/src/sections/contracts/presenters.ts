import { z } from 'zod';
import type { contractsV1 } from '@platform/proto';

// The spec's contract resources as the admin and user contract routes answer them, from ContractsService's messages.

const int64 = z.number().int();
const unix = int64.meta({ description: 'Unix seconds' });

export const ClusterStatusJson = z
  .object({
    isImported: z.boolean().meta({ description: 'The cluster is in the owner’s inventory' }),
    name: z.string(),
    tags: z.array(z.string()),
    associatedContractId: int64.meta({ description: 'The contract the cluster is bound to in this context; 0 when none' }),
  })
  .meta({ id: 'ClusterStatus' });

export const DuplicateContractFeaturesJson = z
  .object({ contractId: int64, product: z.string(), features: z.array(z.string()) })
  .meta({ id: 'DuplicateContractFeatures' });

export const ContractClusterStatusJson = z
  .object({
    id: int64.meta({ description: 'The contract-cluster id (`ccID`); 0 when the cluster is not bound' }),
    contractId: int64,
    cluster: z.string().meta({ description: 'The cluster UUID' }),
    displayName: z.string(),
    clusterStatus: ClusterStatusJson,
    duplicateContractFeatures: z
      .array(DuplicateContractFeaturesJson)
      .meta({ description: 'The owner’s other active contracts bound to this cluster with overlapping features' }),
    error: z.string(),
  })
  .meta({ id: 'ContractClusterStatus' });

export const contractClusterStatusJson = (c: contractsV1.ContractClusterStatus): z.input<typeof ContractClusterStatusJson> => ({
  id: c.id,
  contractId: c.contractId,
  cluster: c.cluster,
  displayName: c.displayName,
  clusterStatus: {
    isImported: c.clusterStatus?.isImported ?? false,
    name: c.clusterStatus?.name ?? '',
    tags: c.clusterStatus?.tags ?? [],
    associatedContractId: c.clusterStatus?.associatedContractId ?? 0,
  },
  duplicateContractFeatures: c.duplicateContractFeatures.map((d) => ({
    contractId: d.contractId,
    product: d.product,
    features: d.features,
  })),
  error: c.error,
});

const emails = z.array(z.string());

export const ContractEmailsJson = z
  .object({
    contactPerson: emails,
    signingAuthority: emails,
    licenseUsers: emails,
    financeTeam: emails,
    usageAlertClient: emails,
    usageAlertAdmin: emails,
  })
  .meta({ id: 'ContractEmails' });

/** What the user routes show of the recipient lists: the admin-only ones are left out (docs/contracts.md). */
export const UserContractEmailsJson = z.object({ licenseUsers: emails, usageAlertClient: emails }).meta({ id: 'UserContractEmails' });

export const QuotaJson = z
  .object({
    enabled: z.boolean(),
    metric: z.string(),
    limit: z.number(),
    alertThresholds: z.array(int64).meta({ description: 'Percentages of the limit, each 1..100' }),
    disableLicenseOnLimitReached: z.boolean(),
  })
  .meta({ id: 'Quota' });

const contractFields = {
  id: int64,
  uid: int64.meta({ description: 'The owner account id' }),
  orgOrUser: z.string().meta({ description: 'The owner account’s slug' }),
  name: z.string(),
  product: z.string(),
  features: z.array(z.string()),
  clusters: z.array(ContractClusterStatusJson),
  associatedCluster: ContractClusterStatusJson.optional().meta({ description: 'The cluster in context, when the route names one' }),
  quota: QuotaJson,
  start: unix,
  end: unix,
  documentPath: z.string(),
  allowOffline: z.boolean(),
  autoAssignCluster: z.boolean(),
  disableAnalytics: z.boolean(),
  enableClientBilling: z.boolean(),
  revoked: z.boolean(),
  restrictions: z.string().meta({ description: 'JSON-encoded restrictions; empty when none' }),
};

export const ContractJson = z.object({ ...contractFields, emails: ContractEmailsJson }).meta({ id: 'Contract' });
/** The sanitized contract of the user routes: no admin-only email lists. */
export const UserContractJson = z.object({ ...contractFields, emails: UserContractEmailsJson }).meta({ id: 'UserContract' });

function common(c: contractsV1.Contract, cluster?: string) {
  const bound = cluster ? c.clusters.find((cc) => cc.cluster.toLowerCase() === cluster.toLowerCase()) : undefined;
  return {
    id: c.id,
    uid: c.ownerId,
    orgOrUser: c.ownerLogin,
    name: c.name,
    product: c.product,
    features: c.features,
    clusters: c.clusters.map(contractClusterStatusJson),
    ...(bound && { associatedCluster: contractClusterStatusJson(bound) }),
    quota: {
      enabled: c.quota?.enabled ?? false,
      metric: c.quota?.metric ?? '',
      limit: c.quota?.limit ?? 0,
      alertThresholds: c.quota?.alertThresholds ?? [],
      disableLicenseOnLimitReached: c.quota?.disableLicenseOnLimitReached ?? false,
    },
    start: c.startUnix,
    end: c.endUnix,
    documentPath: c.documentPath,
    allowOffline: c.allowOffline,
    autoAssignCluster: c.autoAssignCluster,
    disableAnalytics: c.disableAnalytics,
    enableClientBilling: c.enableClientBilling,
    revoked: c.revoked,
    restrictions: c.restrictions,
  };
}

/** The contract as a site admin sees it; `cluster` names the cluster in context (`associatedCluster`). */
export const contractJson = (c: contractsV1.Contract, cluster?: string): z.input<typeof ContractJson> => ({
  ...common(c, cluster),
  emails: {
    contactPerson: c.emails?.contactPerson ?? [],
    signingAuthority: c.emails?.signingAuthority ?? [],
    licenseUsers: c.emails?.licenseUsers ?? [],
    financeTeam: c.emails?.financeTeam ?? [],
    usageAlertClient: c.emails?.usageAlertClient ?? [],
    usageAlertAdmin: c.emails?.usageAlertAdmin ?? [],
  },
});

/** The sanitized contract: only the recipient lists the owner may see and change. */
export const userContractJson = (c: contractsV1.Contract, cluster?: string): z.input<typeof UserContractJson> => ({
  ...common(c, cluster),
  emails: { licenseUsers: c.emails?.licenseUsers ?? [], usageAlertClient: c.emails?.usageAlertClient ?? [] },
});

export const AuditEventJson = z
  .object({ id: int64, contractID: int64, addedBy: z.string(), event: z.string(), createdUnix: unix })
  .meta({ id: 'ContractAuditEvent' });

export const auditEventJson = (e: contractsV1.AuditEvent): z.input<typeof AuditEventJson> => ({
  id: e.id,
  contractID: e.contractId,
  addedBy: e.addedBy,
  event: e.event,
  createdUnix: e.createdUnix,
});

export const QuotaUsageJson = z
  .object({
    enabled: z.boolean().meta({ description: 'Whether the contract has a quota; nothing else is set without one' }),
    metric: z.string().meta({ description: 'The quota’s metric, as the contract names it (`object-hours`)' }),
    limit: z.number(),
    used: z
      .number()
      .meta({
        description: 'What the bound clusters reported since the contract’s start, in the metric’s unit, as license issuing measures it',
      }),
    measuredUnix: unix.meta({ description: 'When it was measured (Unix seconds): now' }),
  })
  .meta({ id: 'ContractQuotaUsage' });

export const quotaUsageJson = (u: contractsV1.QuotaUsage): z.input<typeof QuotaUsageJson> => ({
  enabled: u.enabled,
  metric: u.metric,
  limit: u.limit,
  used: u.used,
  measuredUnix: u.measuredUnix,
});

export const ImportableClusterJson = z
  .object({
    id: z.string().meta({ description: 'The cluster UUID (as `uid`)' }),
    uid: z.string().meta({ description: 'The cluster UUID' }),
    name: z.string(),
    displayName: z.string(),
    provider: z.string(),
    kubernetesVersion: z.string(),
    nodeCount: int64,
    status: z.record(z.string(), z.unknown()).meta({ description: 'Kubernetes-style status object, free-form' }),
    hubUID: z.string().meta({ description: 'The hub of a managed cluster; empty for a hub' }),
  })
  .meta({ id: 'ImportableCluster' });

/** A status_json that is not a JSON object reads as an empty status rather than failing the list. */
function statusOf(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export const importableClusterJson = (c: contractsV1.ImportableCluster): z.input<typeof ImportableClusterJson> => ({
  id: c.uid,
  uid: c.uid,
  name: c.name,
  displayName: c.displayName,
  provider: c.provider,
  kubernetesVersion: c.kubernetesVersion,
  nodeCount: c.nodeCount,
  status: statusOf(c.statusJson),
  hubUID: c.hubUid,
});

export const AssociatedClusterJson = z
  .object({
    associatedContractIDs: z.array(int64),
    cluster: z.string().meta({ description: 'The cluster UUID' }),
    displayName: z.string(),
    tags: z.array(z.string()),
  })
  .meta({ id: 'AssociatedCluster' });

export const associatedClusterJson = (c: contractsV1.AssociatedCluster): z.input<typeof AssociatedClusterJson> => ({
  associatedContractIDs: c.associatedContractIds,
  cluster: c.cluster,
  displayName: c.displayName,
  tags: c.tags,
});

export const ProductCatalogJson = z
  .record(z.string(), z.unknown())
  .meta({ id: 'ProductCatalog', description: 'Product alias → plan info (free-form); community products are not listed' });

/** The signed document URL: a JSON string. */
export const DocumentUrlJson = z
  .string()
  .meta({ description: 'A URL that downloads the contract document without a token, valid 30 minutes' });
