import type { OpenedMessage } from '@platform/agent-protocol';
import { contractsV1, licensingV1 } from '@platform/proto';
import { chunks, createClient } from '@platform/service-kit';

/**
 * Whose a report is, from what the platform knows rather than from what the report says (docs/billing-ingestion.md,
 * "Attribution"). A member cluster's key proves which cluster speaks, not which user or contract the usage belongs
 * to: the user and contract a report names are claims, checked against the cluster's owner (the organization
 * holding the bus account it was verified with) and contracts-licensing's records of the licenses it issued and
 * the contracts binding the cluster.
 */

/** A license the platform issued, as far as attribution needs it. */
export interface IssuedLicenseRecord {
  serial: string;
  contractId: number;
  /** The contract owner, who holds the license; 0 when the contract is gone. */
  ownerId: number;
  /** The one cluster it was issued for. */
  clusterUid: string;
}

/** A contract binding a cluster. */
export interface BindingContract {
  id: number;
  product: string;
}

/** What contracts-licensing knows that attribution reads. An error propagates: the reports are redelivered. */
export interface LicensingRecords {
  /** The licenses the platform issued among these ids; ids of no issued license are left out. At most 1,000 ids. */
  issuedLicenses(serials: string[]): Promise<IssuedLicenseRecord[]>;
  /** The contracts of `ownerId` that bind the cluster (whatever their state). */
  contractsBinding(ownerId: number, clusterUID: string): Promise<BindingContract[]>;
}

/** contracts-licensing's RPCs (`GetIssuedLicenses`, `ListContracts`) at an address; with how to close the clients. */
export function licensingRecordsAt(address: string): { records: LicensingRecords; close(): void } {
  const licensing = createClient(licensingV1.LicensingServiceService, address, { name: 'contracts-licensing', deadlineMs: 5_000 });
  const contracts = createClient(contractsV1.ContractsServiceService, address, { name: 'contracts-licensing', deadlineMs: 5_000 });
  return {
    records: {
      async issuedLicenses(serials) {
        const { licenses } = await licensing.getIssuedLicenses({ serials });
        return licenses.map((l) => ({ serial: l.serial, contractId: l.contractId, ownerId: l.ownerId, clusterUid: l.clusterUid }));
      },
      async contractsBinding(ownerId, clusterUID) {
        const list = await contracts.listContracts({ ownerId, activeOnly: false, offlineOnly: false, boundTo: clusterUID, notBoundTo: '' });
        return list.contracts.map((c) => ({ id: c.id, product: c.product }));
      },
    },
    close: () => {
      licensing.close();
      contracts.close();
    },
  };
}

/**
 * Why a claim of a report was refused (the label of `billing_agent_claims_refused_total`). The first two refuse the
 * whole report; the others refuse the claim only, and the report is applied as the platform attributes it.
 */
export type ClaimRefusal =
  /** The license id names a license the platform issued for another cluster: the report is not applied. */
  | 'license-of-other-cluster'
  /** The verified account names no owner to attribute to (never so for an account of orgs-teams): not applied. */
  | 'owner-unknown'
  /** The user is not the license's holder (the issued license's contract owner, else the cluster's owner). */
  | 'user-mismatch'
  /** The contract is not the issued license's, nor a contract of the cluster's owner binding the cluster for the product. */
  | 'contract-mismatch';

/** What a report is attributed to, and the claims refused on the way; or why it is refused altogether. */
export type Attribution =
  | { refused: ClaimRefusal; detail: string }
  | {
      userId: number;
      /** Usage samples only (0: no contract); 0 for the other kinds. */
      contractId: number;
      /** Claims that differed from the attribution, and were replaced by it. */
      ignored: { reason: ClaimRefusal; claimed: number; attributed: number }[];
    };

/** A verified report of a kind billing-dashboard applies. */
export type BillingReport = Extract<OpenedMessage, { kind: 'license-usage' | 'resource-event' | 'usage-sample' }>;

export function isBillingReport(m: OpenedMessage): m is BillingReport {
  return m.kind === 'license-usage' || m.kind === 'resource-event' || m.kind === 'usage-sample';
}

/**
 * Attributes the reports of one batch: one `issuedLicenses` call for all their license ids, one `contractsBinding`
 * call per (owner, cluster) among the samples that name a contract without holding an issued license. Nothing is
 * kept past the call, so a change of a license or binding counts from the next batch on; an error of the records
 * propagates (the batch is redelivered).
 *
 * The rule: the owner is the organization holding the account the report was verified with, which the inventory
 * records as the cluster's owner. A license id the platform issued must have been issued for the report's cluster.
 * The user is that license's holder, else the owner. A sample's contract is that license's contract; without one,
 * the contract it names when that is a contract of the owner binding the cluster for the sample's product; else none.
 */
export async function attribute(messages: readonly BillingReport[], records: LicensingRecords): Promise<Attribution[]> {
  const serials = [...new Set(messages.map((m) => m.payload.licenseId).filter((id) => id !== ''))];
  const issued = new Map<string, IssuedLicenseRecord>();
  for (const part of chunks(serials, 1000)) for (const l of await records.issuedLicenses(part)) issued.set(l.serial, l);
  const bindings = new Map<string, Promise<BindingContract[]>>();
  const bindingsOf = (ownerId: number, clusterUID: string) => {
    const key = `${ownerId} ${clusterUID}`;
    let answer = bindings.get(key);
    if (!answer) bindings.set(key, (answer = records.contractsBinding(ownerId, clusterUID)));
    return answer;
  };

  return Promise.all(
    messages.map(async (m): Promise<Attribution> => {
      const ownerId = Number(m.account.ownerId ?? 0);
      if (!ownerId) return { refused: 'owner-unknown', detail: `the bus account ${m.senderPubKey} names no owner` };
      const p = m.payload;
      const license = issued.get(p.licenseId);
      if (license && license.clusterUid.toLowerCase() !== m.clusterUID)
        return {
          refused: 'license-of-other-cluster',
          detail: `license ${p.licenseId} was issued for cluster ${license.clusterUid.toLowerCase()}, not ${m.clusterUID}`,
        };
      const ignored: { reason: ClaimRefusal; claimed: number; attributed: number }[] = [];
      const userId = license?.ownerId || ownerId;
      if (p.userId !== userId) ignored.push({ reason: 'user-mismatch', claimed: p.userId, attributed: userId });
      let contractId = 0;
      if (m.kind === 'usage-sample') {
        const claimed = m.payload.contractId;
        if (license) contractId = license.contractId;
        else if (
          claimed !== 0 &&
          (await bindingsOf(ownerId, m.clusterUID)).some((c) => c.id === claimed && c.product === m.payload.product)
        )
          contractId = claimed;
        if (claimed !== contractId) ignored.push({ reason: 'contract-mismatch', claimed, attributed: contractId });
      }
      return { userId, contractId, ignored };
    }),
  );
}
