import { z } from 'zod';
import type { clustersV1, licensedV1, licensingV1 } from '@platform/proto';
import type { AccountName } from '../../kept-accounts';
import { clusterJson } from '../clusters/presenters';

// The spec's usage and billing shapes that the licensed rows of the admin billing dashboard answer (docs/billing-dashboard.md),
// and how each is made of what the backends answer. Times are Unix seconds unless a field says RFC3339.

const unixSeconds = (description: string) =>
  z
    .number()
    .int()
    .meta({ description: `${description} (Unix seconds)` });

export const LicensedUserAPIForm = z
  .object({
    username: z.string().meta({ description: 'Login of the account; empty when the account no longer exists' }),
    userType: z.enum(['user', 'organization', '']).meta({ description: 'Account type; empty when the account no longer exists' }),
    email: z.string(),
    userID: z.number().int(),
    lastReceivedAt: unixSeconds('Last licensed product received from the account; 0 when it never reported one'),
  })
  .meta({ id: 'LicensedUserAPIForm' });

export const ClusterInfo = z
  .object({
    id: z.number().int().meta({ description: 'The inventory record id; 0 for a cluster that reported but is not in the inventory' }),
    displayName: z.string(),
    name: z.string(),
    uid: z.string().meta({ description: 'Cluster UID' }),
    ownerID: z.number().int().meta({ description: 'Owning account id; 0 when the cluster is not in the inventory' }),
    ownerName: z.string(),
    provider: z.string(),
    kubernetesVersion: z.string(),
    nodeCount: z.number().int(),
    createdAt: z.string().meta({
      description: 'RFC3339: when the platform recorded the cluster, or for one not in the inventory when it first reported',
    }),
    status: z.record(z.string(), z.unknown()).meta({ description: 'Kubernetes-style status object as last reported, free-form' }),
  })
  .meta({ id: 'ClusterInfo' });

export const ActiveClustersAPIForm = z
  .object({
    username: z.string(),
    clusterID: z.string(),
    firstReceivedAt: unixSeconds('First licensed product received from the cluster'),
    lastReceivedAt: unixSeconds('Last licensed product received from the cluster'),
    noOfAssociatedContracts: z.number().int().meta({ description: 'Active (neither revoked nor expired) contracts binding the cluster' }),
  })
  .meta({ id: 'ActiveClustersAPIForm' });

export const LicensedPlan = z
  .object({
    uid: z
      .number()
      .int()
      .meta({ description: 'License holder: the contract owner of a license the platform issued, else the reporting user' }),
    email: z.string(),
    licenseID: z.string(),
    clusters: z.array(z.string()).meta({ description: 'Cluster UIDs the license is for (issued) or was reported on' }),
    planName: z.string().meta({ description: 'Plan of the contract product; empty for a license the platform did not issue' }),
    notBefore: unixSeconds('Validity start; 0 for a license the platform did not issue'),
    notAfter: unixSeconds('Validity end; 0 for a license the platform did not issue'),
    registeredAt: unixSeconds('When a cluster first reported the license'),
    createdAt: unixSeconds('When the platform issued it, else when it was first reported'),
    updatedAt: unixSeconds('When it was revoked, else issued; for one not issued here, when it was last reported'),
  })
  .meta({ id: 'LicensedPlan' });

export const LicenseWithSiteInfo = z
  .object({
    license: LicensedPlan,
    siteinfo: z
      .record(z.string(), z.unknown())
      .meta({ description: 'What the cluster last reported about itself (the cluster inventory); {} when it is not in the inventory' }),
  })
  .meta({ id: 'LicenseWithSiteInfo' });

export const ActiveLicenseAPIForm = z
  .object({
    username: z.string(),
    email: z.string(),
    userId: z.number().int(),
    licenseID: z.string(),
    firstReceivedAt: unixSeconds('First product received under the license'),
    lastReceivedAt: unixSeconds('Last product received under the license'),
  })
  .meta({ id: 'ActiveLicenseAPIForm' });

export const ReceivedLicensedProduct = z
  .object({
    userName: z.string(),
    userType: z.enum(['user', 'organization', '']),
    email: z.string(),
    userID: z.number().int(),
    clusterID: z.string(),
    licenseID: z.string(),
    productName: z.string(),
    firstReceivedAt: unixSeconds('First time the product was received'),
    lastReceivedAt: unixSeconds('Last time the product was received'),
  })
  .meta({ id: 'ReceivedLicensedProduct' });

type User = AccountName;

const typeOf = (a: User | undefined) => (a === undefined ? '' : a.type === 1 ? 'organization' : 'user') as 'user' | 'organization' | '';

export const licensedUser = (id: number, lastReceivedAt: number, a: User | undefined): z.input<typeof LicensedUserAPIForm> => ({
  username: a?.login ?? '',
  userType: typeOf(a),
  email: a?.email ?? '',
  userID: id,
  lastReceivedAt,
});

/** A cluster as the inventory has it, or, for one that reported but is not in the inventory, what the reports tell. */
export const clusterInfo = (
  uid: string,
  c: clustersV1.Cluster | undefined,
  owner: User | undefined,
  firstReceivedUnix: number,
): z.input<typeof ClusterInfo> => ({
  id: c?.id ?? 0,
  displayName: c?.displayName ?? '',
  name: c?.name ?? '',
  uid,
  ownerID: c?.ownerId ?? 0,
  ownerName: owner?.login ?? '',
  provider: c?.provider ?? '',
  kubernetesVersion: c?.kubernetesVersion ?? '',
  nodeCount: c?.nodeCount ?? 0,
  createdAt: new Date((c ? c.createdUnix : firstReceivedUnix) * 1000).toISOString(),
  status: c ? (JSON.parse(c.statusJson || '{}') as Record<string, unknown>) : {},
});

export const activeCluster = (
  e: licensedV1.LicensedEntry,
  user: User | undefined,
  contracts: number,
): z.input<typeof ActiveClustersAPIForm> => ({
  username: user?.login ?? '',
  clusterID: e.clusterUid,
  firstReceivedAt: e.firstReceivedUnix,
  lastReceivedAt: e.lastReceivedUnix,
  noOfAssociatedContracts: contracts,
});

/**
 * A license as LicensedPlan: from its issue record when the platform issued it (plan, validity, holder), with the
 * reports' times; a license the platform did not issue (an offline or foreign one) has only what the reports tell.
 */
export const licensedPlan = (
  e: licensedV1.LicensedEntry,
  issued: licensingV1.IssuedLicense | undefined,
  user: User | undefined,
  holder: User | undefined,
): z.input<typeof LicensedPlan> => ({
  uid: issued?.ownerId || e.userId,
  email: issued?.email || holder?.email || user?.email || '',
  licenseID: e.licenseId,
  clusters: issued ? [issued.clusterUid] : e.clusterUids,
  planName: issued?.planName ?? '',
  notBefore: issued?.issuedUnix ?? 0,
  notAfter: issued?.notAfterUnix ?? 0,
  registeredAt: e.firstReceivedUnix,
  createdAt: issued?.issuedUnix ?? e.firstReceivedUnix,
  updatedAt: issued ? issued.revokedUnix || issued.issuedUnix : e.lastReceivedUnix,
});

/** What the cluster last reported about itself: its inventory record and when the last snapshot was observed. */
export const siteInfo = (c: clustersV1.Cluster | undefined): Record<string, unknown> =>
  c ? { ...clusterJson(c), observedAt: c.observedUnix ? new Date(c.observedUnix * 1000).toISOString() : '' } : {};

export const activeLicense = (e: licensedV1.LicensedEntry, user: User | undefined): z.input<typeof ActiveLicenseAPIForm> => ({
  username: user?.login ?? '',
  email: user?.email ?? '',
  userId: e.userId,
  licenseID: e.licenseId,
  firstReceivedAt: e.firstReceivedUnix,
  lastReceivedAt: e.lastReceivedUnix,
});

export const receivedProduct = (e: licensedV1.LicensedEntry, user: User | undefined): z.input<typeof ReceivedLicensedProduct> => ({
  userName: user?.login ?? '',
  userType: typeOf(user),
  email: user?.email ?? '',
  userID: e.userId,
  clusterID: e.clusterUid,
  licenseID: e.licenseId,
  productName: e.product,
  firstReceivedAt: e.firstReceivedUnix,
  lastReceivedAt: e.lastReceivedUnix,
});
