import { z } from 'zod';
import { NotFoundError } from '@platform/errors';
import { chunks } from '@platform/service-kit';
import type { clustersV1, licensedV1, licensingV1 } from '@platform/proto';
import type { Gate } from '../../gating';
import { accountsOf } from '../../kept-accounts';
import * as p from '../../params';
import { sectionRoutes, type EdgeContext, type Requirement } from '../../route';
import { clusterUuid } from '../../params';
import {
  activeCluster,
  ActiveClustersAPIForm,
  activeLicense,
  ActiveLicenseAPIForm,
  ClusterInfo,
  clusterInfo,
  LicensedPlan,
  licensedPlan,
  licensedUser,
  LicensedUserAPIForm,
  LicenseWithSiteInfo,
  ReceivedLicensedProduct,
  receivedProduct,
  siteInfo,
} from './licensed-forms';

// The licensed users, clusters, licenses and products of the admin billing dashboard
// (docs/billing-dashboard.md): billing-enabled deployments only, site admins with view_licensed_users:site_admin,
// `org` required. billing-dashboard answers what was reported with first and last received times; the names come
// from orgs-teams, the clusters from the inventory, licenses and contract counts from contracts-licensing, each kept by
// its owner's read model (kept-accounts.ts for the names). What is not kept is asked once per request for
// all the rows (GetAccounts, GetClusters, GetIssuedLicenses, CountClusterContracts), or once per
// 1,000 where the backend takes at most that many a call (a user may have reported from many more clusters).

const route = sectionRoutes({ tag: 'Billing dashboard', backend: 'billing-dashboard' });

/** Who may call every row here. */
const siteAdmins: { auth: 'token'; gate: Gate; org: 'required'; requires: Requirement<never>[] } = {
  auth: 'token',
  gate: 'billing',
  org: 'required',
  requires: [{ on: 'site', permission: 'view_licensed_users:site_admin' }],
};

// Cluster UIDs are stored lower-case; any case names the same cluster.
const clusterUid = clusterUuid.transform((s) => s.toLowerCase()).meta({ description: 'Cluster UID' });
const licenseId = z.string().min(1).max(255, 'must be at most 255 characters');
const productName = z.string().min(1).max(255, 'must be at most 255 characters');

/** Path params `{uid}`, `{cid}`, `{lid}`, `{productName}`; exported for the rows below a license's products. */
export const UserParams = z.object({ uid: p.id });
export const UserClusterParams = UserParams.extend({ cid: clusterUid });
export const LicenseParams = UserClusterParams.extend({ lid: licenseId });
export const ProductParams = LicenseParams.extend({ productName });

/** `limit`: the activity window (a Go duration back from now, or a date); the last 180 days when absent. */
const Window = z.object({ limit: p.activitySince });

const unixOf = (d: Date) => Math.floor(d.getTime() / 1000);

/** A LicensedQuery with the keys given; since 0: all time. */
const query = (q: Partial<licensedV1.LicensedQuery>): licensedV1.LicensedQuery => ({
  userId: 0,
  clusterUid: '',
  licenseId: '',
  product: '',
  sinceUnix: 0,
  ...q,
});

/** The inventory's clusters of these (lower-case) UIDs, by UID: one GetClusters call per 1,000 not kept by its read model. */
async function clustersOf(ctx: EdgeContext, uids: string[]): Promise<Map<string, clustersV1.Cluster>> {
  const answers = await Promise.all(
    chunks(uids, CLUSTERS_PER_CALL).map((batch) => ctx.kept.clusters.clusters.getClusters({ uids: batch })),
  );
  return new Map(answers.flatMap((a) => a.clusters).map((c) => [c.uid, c]));
}

/** ListUserAccounts answers at most this many accounts a page. */
const USER_ACCOUNTS_PER_PAGE = 1000;

/** GetClusters and CountClusterContracts take at most this many cluster UIDs a call. */
const CLUSTERS_PER_CALL = 1000;

/** The licenses the platform issued among these serials, by serial: one GetIssuedLicenses call for those not kept. */
async function issuedLicensesOf(ctx: EdgeContext, serials: string[]): Promise<Map<string, licensingV1.IssuedLicense>> {
  const { licenses } = await ctx.kept.contractsLicensing.licenses.getIssuedLicenses({ serials });
  return new Map(licenses.map((l) => [l.serial, l]));
}

/**
 * How many active contracts bind each of these clusters: one CountClusterContracts call per 1,000 not kept by
 * contracts-licensing's read model, since a user may have reported from many more.
 */
async function contractCounts(ctx: EdgeContext, clusterUids: string[]): Promise<Map<string, number>> {
  const answers = await Promise.all(
    chunks(clusterUids, CLUSTERS_PER_CALL).map((clusters) => ctx.kept.contractsLicensing.contracts.countClusterContracts({ clusters })),
  );
  return new Map(answers.flatMap((a) => Object.entries(a.counts)));
}

/** The account of one id, or undefined when it no longer exists. */
const accountOf = async (ctx: EdgeContext, id: number) => (await accountsOf(ctx, [id])).get(id);

// A windowed listing answers whether its scope was ever reported (`reported`), so a row's 404 for a user who never
// reported on the cluster, or never the license, costs no call of its own.
const neverOnCluster = (uid: number, cid: string) => new NotFoundError(`user ${uid} reported no licensed product on cluster ${cid}`);
const neverLicense = (uid: number, cid: string, lid: string) =>
  new NotFoundError(`user ${uid} reported no license ${lid} on cluster ${cid}`);

/** The user's reports on the cluster (all time); 404 when the user never reported a licensed product there. */
async function userCluster(ctx: EdgeContext, uid: number, cid: string): Promise<licensedV1.LicensedEntry> {
  const [entry] = (await ctx.kept.billingDashboard.licensed.listUserClusters(query({ userId: uid, clusterUid: cid }))).entries;
  if (!entry) throw neverOnCluster(uid, cid);
  return entry;
}

/** The license as the user reported it on the cluster (all time, with its products and clusters); 404 when never. */
async function userLicense(ctx: EdgeContext, uid: number, cid: string, lid: string): Promise<licensedV1.LicensedEntry> {
  const [entry] = (await ctx.kept.billingDashboard.licensed.listClusterLicenses(query({ userId: uid, clusterUid: cid, licenseId: lid })))
    .entries;
  if (!entry) throw neverLicense(uid, cid, lid);
  return entry;
}

/** LicensedUserAPIForm of each reporting user, in the order billing answers (latest report first). */
async function licensedUsers(ctx: EdgeContext, sinceUnix: number): Promise<z.input<typeof LicensedUserAPIForm>[]> {
  const { entries } = await ctx.kept.billingDashboard.licensed.listLicensedUsers(query({ sinceUnix }));
  const accounts = await accountsOf(
    ctx,
    entries.map((e) => e.userId),
  );
  return entries.map((e) => licensedUser(e.userId, e.lastReceivedUnix, accounts.get(e.userId)));
}

/** LicensedPlan of each license entry: the issued licenses and the accounts, each kept or asked once for them all. */
async function licensedPlans(ctx: EdgeContext, uid: number, entries: licensedV1.LicensedEntry[]): Promise<z.input<typeof LicensedPlan>[]> {
  if (entries.length === 0) return [];
  const issued = await issuedLicensesOf(
    ctx,
    entries.map((e) => e.licenseId),
  );
  const accounts = await accountsOf(ctx, [uid, ...[...issued.values()].map((l) => l.ownerId)]);
  return entries.map((e) => {
    const license = issued.get(e.licenseId);
    return licensedPlan(e, license, accounts.get(uid), license ? accounts.get(license.ownerId) : undefined);
  });
}

/**
 * A cluster inventory listing of these UIDs (one GetClusters call per 1,000) and their owners' accounts (one
 * GetAccounts per 1,000 owners).
 */
async function clusterInfos(ctx: EdgeContext, entries: licensedV1.LicensedEntry[]): Promise<z.input<typeof ClusterInfo>[]> {
  if (entries.length === 0) return [];
  const byUid = await clustersOf(
    ctx,
    entries.map((e) => e.clusterUid),
  );
  const owners = await accountsOf(
    ctx,
    [...byUid.values()].map((c) => c.ownerId),
  );
  return entries.map((e) => {
    const c = byUid.get(e.clusterUid);
    return clusterInfo(e.clusterUid, c, c ? owners.get(c.ownerId) : undefined, e.firstReceivedUnix);
  });
}

export const licensedRoutes = [
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/',
    summary: 'Every account that ever reported a licensed product, latest report first',
    response: { status: 200, schema: z.array(LicensedUserAPIForm) },
    async handle(_input, ctx) {
      return { body: await licensedUsers(ctx, 0) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/active',
    summary: 'The accounts whose last licensed-product report falls in the activity window (limit), latest first',
    query: Window,
    response: { status: 200, schema: z.array(LicensedUserAPIForm) },
    async handle({ query: q }, ctx) {
      return { body: await licensedUsers(ctx, unixOf(q.limit)) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/inactive',
    summary: 'The user accounts (not organizations) that never reported a licensed product, by id',
    response: { status: 200, schema: z.array(LicensedUserAPIForm) },
    async handle(_input, ctx) {
      const reported = new Set((await ctx.kept.billingDashboard.licensed.listLicensedUsers(query({}))).entries.map((e) => e.userId));
      const inactive: z.input<typeof LicensedUserAPIForm>[] = [];
      // Keyset pages of 1,000 user accounts: one call per thousand accounts, each page one index range in orgs-teams.
      let afterId = 0;
      do {
        const page = await ctx.kept.orgsTeams.identity.listUserAccounts({ afterId, limit: USER_ACCOUNTS_PER_PAGE });
        for (const u of page.users) if (!reported.has(u.id)) inactive.push(licensedUser(u.id, 0, u));
        afterId = page.nextAfterId;
      } while (afterId !== 0);
      return { body: inactive };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/',
    summary: 'The clusters a user’s licensed products ran on, latest report first, as the inventory has them',
    params: UserParams,
    response: { status: 200, schema: z.array(ClusterInfo) },
    async handle({ params }, ctx) {
      const { entries } = await ctx.kept.billingDashboard.licensed.listUserClusters(query({ userId: params.uid }));
      return { body: await clusterInfos(ctx, entries) };
    },
  }),
  // Before `{cid}`: `active` is no cluster UID.
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/active',
    summary: 'The clusters a user reported from in the activity window (limit), with the number of active contracts binding each',
    params: UserParams,
    query: Window,
    response: { status: 200, schema: z.array(ActiveClustersAPIForm) },
    async handle({ params, query: q }, ctx) {
      const { entries } = await ctx.kept.billingDashboard.licensed.listUserClusters(
        query({ userId: params.uid, sinceUnix: unixOf(q.limit) }),
      );
      if (entries.length === 0) return { body: [] };
      const [user, counts] = await Promise.all([
        accountOf(ctx, params.uid),
        contractCounts(
          ctx,
          entries.map((e) => e.clusterUid),
        ),
      ]);
      return { body: entries.map((e) => activeCluster(e, user, counts.get(e.clusterUid) ?? 0)) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid',
    summary: 'One cluster a user’s licensed products ran on, as the inventory has it',
    params: UserClusterParams,
    errors: [{ status: 404, description: 'when the user never reported a licensed product on the cluster' }],
    response: { status: 200, schema: ClusterInfo },
    async handle({ params }, ctx) {
      const entry = await userCluster(ctx, params.uid, params.cid);
      return { body: (await clusterInfos(ctx, [entry]))[0] };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid/licenses/',
    summary: 'The licenses a user reported on a cluster, latest report first',
    params: UserClusterParams,
    errors: [{ status: 404, description: 'when the user never reported a licensed product on the cluster' }],
    response: { status: 200, schema: z.array(LicensedPlan) },
    async handle({ params }, ctx) {
      const { entries } = await ctx.kept.billingDashboard.licensed.listClusterLicenses(
        query({ userId: params.uid, clusterUid: params.cid }),
      );
      if (entries.length === 0) throw neverOnCluster(params.uid, params.cid);
      return { body: await licensedPlans(ctx, params.uid, entries) };
    },
  }),
  // Before `{lid}`: a license named `active` is not reachable here, as in the spec's table.
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid/licenses/active',
    summary: 'The licenses a user reported on a cluster in the activity window (limit), latest first',
    params: UserClusterParams,
    query: Window,
    errors: [{ status: 404, description: 'when the user never reported a licensed product on the cluster' }],
    response: { status: 200, schema: z.array(ActiveLicenseAPIForm) },
    async handle({ params, query: q }, ctx) {
      const [{ entries, reported }, user] = await Promise.all([
        ctx.kept.billingDashboard.licensed.listClusterLicenses(
          query({ userId: params.uid, clusterUid: params.cid, sinceUnix: unixOf(q.limit) }),
        ),
        accountOf(ctx, params.uid),
      ]);
      if (!reported) throw neverOnCluster(params.uid, params.cid);
      return { body: entries.map((e) => activeLicense(e, user)) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid/licenses/:lid',
    summary: 'One license a user reported on a cluster, with what the cluster last reported about itself',
    params: LicenseParams,
    errors: [{ status: 404, description: 'when the user never reported the license on the cluster' }],
    response: { status: 200, schema: LicenseWithSiteInfo },
    async handle({ params }, ctx) {
      const entry = await userLicense(ctx, params.uid, params.cid, params.lid);
      const [[license], clusters] = await Promise.all([licensedPlans(ctx, params.uid, [entry]), clustersOf(ctx, [params.cid])]);
      return { body: { license, siteinfo: siteInfo(clusters.get(params.cid)) } };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid/licenses/:lid/products/',
    summary: 'The products received under a user’s license on a cluster in the activity window (limit), latest first',
    params: LicenseParams,
    query: Window,
    errors: [{ status: 404, description: 'when the user never reported the license on the cluster' }],
    response: { status: 200, schema: z.array(ReceivedLicensedProduct) },
    async handle({ params, query: q }, ctx) {
      const [{ entries, reported }, user] = await Promise.all([
        ctx.kept.billingDashboard.licensed.listLicensedProducts(
          query({ userId: params.uid, clusterUid: params.cid, licenseId: params.lid, sinceUnix: unixOf(q.limit) }),
        ),
        accountOf(ctx, params.uid),
      ]);
      if (!reported) throw neverLicense(params.uid, params.cid, params.lid);
      return { body: entries.map((e) => receivedProduct(e, user)) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName',
    summary: 'One product received under a user’s license on a cluster, when it was received in the activity window (limit)',
    params: ProductParams,
    query: Window,
    errors: [{ status: 404, description: 'when the product was not received under the license on the cluster in the window' }],
    response: { status: 200, schema: ReceivedLicensedProduct },
    async handle({ params, query: q }, ctx) {
      const since = unixOf(q.limit);
      const [{ entries }, user] = await Promise.all([
        ctx.kept.billingDashboard.licensed.listLicensedProducts(
          query({ userId: params.uid, clusterUid: params.cid, licenseId: params.lid, product: params.productName, sinceUnix: since }),
        ),
        accountOf(ctx, params.uid),
      ]);
      if (!entries[0])
        throw new NotFoundError(
          `user ${params.uid} reported no product ${params.productName} under license ${params.lid} on cluster ${params.cid} since ${q.limit.toISOString()}`,
        );
      return { body: receivedProduct(entries[0], user) };
    },
  }),
  route({
    ...siteAdmins,
    method: 'get',
    scope: 'read:organization',
    path: '/dashboard/clusters/:cid/licenses/active',
    summary: 'Every user’s licenses reported on a cluster in the activity window (limit), latest first',
    params: z.object({ cid: clusterUid }),
    query: Window,
    response: { status: 200, schema: z.array(ActiveLicenseAPIForm) },
    async handle({ params, query: q }, ctx) {
      const { entries } = await ctx.kept.billingDashboard.licensed.listActiveClusterLicenses(
        query({ clusterUid: params.cid, sinceUnix: unixOf(q.limit) }),
      );
      const accounts = await accountsOf(
        ctx,
        entries.map((e) => e.userId),
      );
      return { body: entries.map((e) => activeLicense(e, accounts.get(e.userId))) };
    },
  }),
];
