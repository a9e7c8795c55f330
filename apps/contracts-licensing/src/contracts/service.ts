import { contractsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import { catalogJson } from './catalog';
import type { Contracts, ContractView } from './contracts';
import { unix } from './contracts-store';
import { EMAIL_LISTS } from './validation';

/** The ContractsService methods that change nothing; every other one is announced as a change (announcingWrites). */
export const CONTRACTS_READS: readonly (keyof typeof contractsV1.ContractsServiceService)[] = [
  'listContracts',
  'getContract',
  'getDocument',
  'listAudit',
  'getQuotaUsage',
  'listContractClusters',
  'importableClusters',
  'clusterStatus',
  'batchClusterStatus',
  'availableProducts',
  'associatedClusters',
  'countClusterContracts',
];

/** What a contract used of its quota, measured now (licenses/quota.ts measureQuota, which reads billing's usage). */
export type QuotaMeasure = (ref: { id: number; ownerId: number }) => Promise<contractsV1.QuotaUsage>;

/** The ContractsService binding: one line per RPC of proto/platformadmin/contractslicensing/v1/contracts.proto. */
export function contractsService(
  contracts: Contracts,
  quotaUsage: QuotaMeasure,
): ServiceBinding<typeof contractsV1.ContractsServiceService> {
  const list = (views: ContractView[]) => ({ contracts: views.map(toContract) });
  return bindService(contractsV1.ContractsServiceService, {
    createContracts: async (req) => list(await contracts.lifecycle.create(req)),
    listContracts: async (req) =>
      list(
        await contracts.listing.list({
          ownerId: req.ownerId,
          activeOnly: req.activeOnly,
          offlineOnly: req.offlineOnly,
          boundTo: req.boundTo || undefined,
          notBoundTo: req.notBoundTo || undefined,
        }),
      ),
    getContract: async (req) => toContract(await contracts.listing.get(req.id, req.ownerId)),
    updateContract: async (req) => toContract(await contracts.lifecycle.update(req)),
    deleteContract: async (req) => (await contracts.lifecycle.delete(req.id, req.ownerId), {}),
    extendContract: async (req) => toContract(await contracts.lifecycle.extend(req.id, req.ownerId, req.endUnix, req.actor)),
    revokeContract: async (req) => (await contracts.lifecycle.revoke(req.id, req.ownerId, req.actor), {}),
    getDocument: (req) => contracts.documents.of(req.id, req.ownerId),
    listAudit: async (req) => ({ events: await contracts.auditTrail.of(req.id, req.ownerId) }),
    getQuotaUsage: (req) => quotaUsage(req),
    listContractClusters: async (req) => ({ clusters: await contracts.listing.clusters(req.id, req.ownerId) }),
    bindClusters: async (req) => ({ clusters: await contracts.binding.bind(req.id, req.ownerId, req.clusters, req.actor) }),
    importableClusters: async (req) => ({ clusters: await contracts.binding.importable(req.id, req.ownerId) }),
    unbindCluster: async (req) => (await contracts.binding.unbind(req), {}),
    renameContractCluster: async (req) => (await contracts.binding.rename(refOf(req.ref), req.name), {}),
    setContractClusterTags: async (req) => (await contracts.binding.setTags(refOf(req.ref), req.tags), {}),
    clusterStatus: (req) => contracts.listing.clusterStatus(req.ownerId, req.cluster, req.contractId),
    batchClusterStatus: async (req) => ({ clusters: await contracts.listing.batchStatus(req.ownerId, req.clusters, req.contractId) }),
    availableProducts: async () => ({ catalogJson: JSON.stringify(catalogJson()) }),
    assignCluster: async (req) => (await contracts.binding.assign(req), {}),
    associatedClusters: async (req) => ({ clusters: await contracts.binding.associated(req.ownerId) }),
    setPreferences: async (req) => toContract(await contracts.lifecycle.setPreferences(req)),
    countClusterContracts: (req) => contracts.binding.countClusterContracts(req.clusters),
  });
}

const refOf = (ref: contractsV1.ContractClusterRef | undefined): contractsV1.ContractClusterRef =>
  ref ?? { id: 0, ccId: 0, ownerId: 0, actor: '' };

/** The Contract message of a contract and the status of its clusters. */
export function toContract({ contract: c, clusters }: ContractView): contractsV1.Contract {
  const emails = Object.fromEntries(EMAIL_LISTS.map((list) => [list, c.emails[list] ?? []])) as unknown as contractsV1.ContractEmails;
  return {
    id: c.id,
    ownerId: c.owner_id,
    ownerLogin: c.owner_login,
    ownerType: c.owner_type,
    name: c.name,
    product: c.product,
    features: c.features,
    clusters,
    emails,
    quota: {
      enabled: c.quota.enabled ?? false,
      metric: c.quota.metric ?? '',
      limit: c.quota.limit ?? 0,
      alertThresholds: c.quota.alertThresholds ?? [],
      disableLicenseOnLimitReached: c.quota.disableLicenseOnLimitReached ?? false,
    },
    startUnix: unix(c.start_at),
    endUnix: unix(c.end_at),
    documentPath: c.document_path,
    allowOffline: c.allow_offline,
    autoAssignCluster: c.auto_assign_cluster,
    disableAnalytics: c.disable_analytics,
    enableClientBilling: c.enable_client_billing,
    revoked: c.revoked,
    restrictions: c.restrictions,
    createdUnix: unix(c.created_at),
  };
}
