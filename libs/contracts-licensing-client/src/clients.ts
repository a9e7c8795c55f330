import {
  allOf,
  CLUSTERS_CHANGED,
  CONTRACTS_CHANGED,
  following,
  keptServiceReads,
  NoticeCache,
  type KeptRead,
  type ReadModel,
} from '@platform/bus';
import { contractsLicensingV1, contractsV1, licensingV1, notificationsV1 } from '@platform/proto';
import { backendState, createClients, type CallOptions, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** contracts-licensing's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const CONTRACTS_LICENSING_SERVICES = {
  licensing: contractsLicensingV1.ContractsLicensingServiceService,
  contracts: contractsV1.ContractsServiceService,
  licenses: licensingV1.LicensingServiceService,
  notifications: notificationsV1.NotificationsServiceService,
} as const;

/** contracts-licensing's services as another app calls them. */
export interface ContractsLicensingClients {
  /** The app's version (its first service answers GetVersion). */
  licensing: PromiseClient<typeof contractsLicensingV1.ContractsLicensingServiceService>;
  /** Contracts, their clusters and audit events. */
  contracts: PromiseClient<typeof contractsV1.ContractsServiceService>;
  /** License issuing, registration, the revocation list (docs/licensing.md). */
  licenses: PromiseClient<typeof licensingV1.LicensingServiceService>;
  /** Webhook endpoints, their delivery log and the notice mails (docs/notifications.md). */
  notifications: PromiseClient<typeof notificationsV1.NotificationsServiceService>;
}

/** What a reader keeps of contracts-licensing's answers, and how long at most (0 keeps nothing). */
export interface ContractsLicensingKeeping {
  ttlMs: number;
  /** Names the caches in the metrics (`<reader>.issued-licenses`, `<reader>.contract-counts`). */
  reader: string;
  /** Whether contracts-licensing answers (the reads kept whole are not served from memory while it does not). */
  available?: () => boolean;
}

/** contracts-licensing's clients, answering from what the reader keeps when `keep` is given (see keptContracts). */
export function contractsLicensingClients(
  address: string,
  opts: ClientOptions,
  keep?: ContractsLicensingKeeping,
): { clients: ContractsLicensingClients; readModel: ReadModel } {
  const clients: ContractsLicensingClients = createClients(CONTRACTS_LICENSING_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  const kept = keptContracts(clients, keep);
  const reads = keptContractsLicensingReads(kept.clients, { ...keep, available: () => backendState(opts.name).available });
  return { clients: reads.clients, readModel: allOf([kept.readModel, reads.readModel]) };
}

/**
 * The NotificationsService reads a reader keeps: webhook endpoints, their deliveries and the notice mails change by its
 * write methods and in the background (a notice sweep that decided, a delivery pass that attempted, a notice sent by
 * the outbox), each announced once it wrote.
 */
export const NOTIFICATIONS_READS = {
  listWebhookEndpoints: { stale: [CONTRACTS_CHANGED] },
  listWebhookDeliveries: { stale: [CONTRACTS_CHANGED] },
  listNoticeMails: { stale: [CONTRACTS_CHANGED] },
} satisfies { readonly [K in keyof ContractsLicensingClients['notifications']]?: KeptRead };

/**
 * The LicensingService reads a reader keeps. Licenses are revoked only by a write (a contract revoked) and registrations
 * recorded only by one, both announced. The revocation list is signed with the time it was made (thisUpdate, valid
 * for days), so one kept ten seconds at most is as good as a new one. Not kept: a registration's verification (the
 * license presented is in the request, and it is a step of a write) and issued licenses (kept by keptContracts).
 */
export const LICENSING_READS = {
  caCertificate: { stale: [CONTRACTS_CHANGED] },
  revocationList: { stale: [CONTRACTS_CHANGED], ttlMs: () => 10_000 },
  listRegistrations: { stale: [CONTRACTS_CHANGED] },
} satisfies { readonly [K in keyof ContractsLicensingClients['licenses']]?: KeptRead };

/** The reads of CONTRACT_READS, LICENSING_READS and NOTIFICATIONS_READS answered from what the reader keeps. */
export function keptContractsLicensingReads<C extends { [S in 'contracts' | 'licenses' | 'notifications']: object }>(
  clients: C,
  keep: ContractsLicensingKeeping,
): { clients: C; readModel: ReadModel } {
  const reads = { contracts: CONTRACT_READS, licenses: LICENSING_READS, notifications: NOTIFICATIONS_READS };
  return keptServiceReads(clients, reads as never, {
    name: `${keep.reader}.contracts-licensing`,
    ttlMs: keep.ttlMs,
    available: keep.available,
  });
}

/**
 * What a contract answer shows: the contracts (every write of contracts-licensing is announced, `contracts.changed`, and
 * so is the moment a contract ends, when it stops being active) and the inventory's clusters bound to them (their names
 * and owners, `clusters.changed`).
 */
const CONTRACT_ANSWER: KeptRead = { stale: [CONTRACTS_CHANGED, CLUSTERS_CHANGED] };

/**
 * The ContractsService reads a reader keeps, and what makes each stale (the audit trail too: what the notice sweep and
 * webhook deliveries add to it in the background is announced once written). A contract's document is kept as where it
 * is stored (its name, type and object path, changed only by a write), never its content. The cluster counts are kept
 * by keptContracts below.
 */
export const CONTRACT_READS = {
  listContracts: CONTRACT_ANSWER,
  getContract: CONTRACT_ANSWER,
  listAudit: CONTRACT_ANSWER,
  listContractClusters: CONTRACT_ANSWER,
  importableClusters: CONTRACT_ANSWER,
  clusterStatus: CONTRACT_ANSWER,
  batchClusterStatus: CONTRACT_ANSWER,
  availableProducts: CONTRACT_ANSWER,
  associatedClusters: CONTRACT_ANSWER,
  getDocument: CONTRACT_ANSWER,
} satisfies { readonly [K in keyof ContractsLicensingClients['contracts']]?: KeptRead };

/** A cluster's count as kept: how many active contracts bind it, and when the first of them ends (0: none). */
interface ContractCount {
  count: number;
  endsUnix: number;
}

/**
 * contracts-licensing's read model, as it defines it for the apps that read it: the licenses it issued, by serial
 * (GetIssuedLicenses; that a serial names no issued license is kept too, most reported licenses being offline or
 * foreign ones), and how many active contracts bind each cluster (CountClusterContracts). The kept ones are answered
 * here, only the others asked. Its rule, written here by contracts-licensing: it announces every write it answers
 * (`contracts.changed`: a contract edited, revoked, deleted, bound or unbound, a license issued; see
 * contracts-changed.ts), which drops everything kept; and a count also changes without a write when a contract ends,
 * so it is kept until the first counted contract's end, no longer. Each answer is served only after the reader's bus
 * has caught up with the notices sent before the request arrived (`CallOptions.arrivedAt`); nothing is kept while the
 * bus is away.
 */
export function keptContracts<
  C extends {
    licenses: Pick<ContractsLicensingClients['licenses'], 'getIssuedLicenses'>;
    contracts: Pick<ContractsLicensingClients['contracts'], 'countClusterContracts'>;
  },
>(clients: C, keep: ContractsLicensingKeeping): { clients: C; readModel: ReadModel } {
  const issued = new NoticeCache<licensingV1.IssuedLicense | null>({
    name: `${keep.reader}.issued-licenses`,
    ttlMs: keep.ttlMs,
    maxEntries: 10_000,
  });
  const counts = new NoticeCache<ContractCount>({ name: `${keep.reader}.contract-counts`, ttlMs: keep.ttlMs, maxEntries: 10_000 });
  const rules = [{ subject: CONTRACTS_CHANGED, stale: () => 'all' as const }];
  const { licenses, contracts } = clients;
  return {
    clients: {
      ...clients,
      licenses: {
        ...licenses,
        getIssuedLicenses: async (req: licensingV1.GetIssuedLicensesRequest, opts?: CallOptions) => {
          const found = await issued.throughMany(
            req.serials,
            async (missing) => {
              const answer = await licenses.getIssuedLicenses({ serials: missing }, opts);
              const bySerial = new Map(answer.licenses.map((l) => [l.serial, l]));
              return new Map(missing.map((serial) => [serial, bySerial.get(serial) ?? null]));
            },
            undefined,
            opts?.arrivedAt,
          );
          return {
            licenses: [...found.values()].filter((l): l is licensingV1.IssuedLicense => l !== null),
          } as licensingV1.IssuedLicenseList;
        },
      },
      contracts: {
        ...contracts,
        countClusterContracts: async (req: contractsV1.CountClusterContractsRequest, opts?: CallOptions) => {
          const found = await counts.throughMany(
            req.clusters,
            async (missing) => {
              const answer = await contracts.countClusterContracts({ clusters: missing }, opts);
              return new Map(
                Object.entries(answer.counts).map(([uid, count]) => [uid, { count, endsUnix: Number(answer.endsUnix?.[uid] ?? 0) }]),
              );
            },
            { ttlMs: (c) => (c.endsUnix ? Math.max(0, c.endsUnix * 1000 - Date.now()) : undefined) },
            opts?.arrivedAt,
          );
          const counted = [...found];
          return {
            counts: Object.fromEntries(counted.map(([uid, c]) => [uid, c.count])),
            endsUnix: Object.fromEntries(counted.filter(([, c]) => c.endsUnix).map(([uid, c]) => [uid, c.endsUnix])),
          } as contractsV1.ClusterContractCounts;
        },
      },
    },
    readModel: allOf([issued, counts].map((cache) => following(cache, rules))),
  };
}

/**
 * Every read of contracts-licensing a reader keeps (the gateway's `kept.contractsLicensing`, KeptDoor): issued licenses
 * and cluster counts of its read model (keptContracts), and the other reads of CONTRACT_READS, LICENSING_READS and
 * NOTIFICATIONS_READS.
 */
export const CONTRACTS_LICENSING_KEPT = {
  contracts: {
    /** How many active contracts bind each cluster, kept until a contract changes or the first counted one ends. */
    countClusterContracts: 'cluster counts',
    ...CONTRACT_READS,
  },
  licenses: {
    /** Issued licenses by serial, a serial of none too, kept until a contract or license changes. */
    getIssuedLicenses: 'issued licenses',
    ...LICENSING_READS,
  },
  notifications: NOTIFICATIONS_READS,
} as const;
