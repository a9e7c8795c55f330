import { z } from 'zod';
import { InputError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import { sectionRoutes, type EdgeContext, type OrgRef, type Requirement, type User } from '../../route';
import {
  AuthHookResult,
  BackendContext,
  FlavorAResponse,
  FlavorBResponse,
  PROJECT_ID,
  RegisterRequest,
  backendMessage,
  connectionJson,
} from './presenters';

// Metrics proxy (docs/metrics-proxy.md): cluster metrics backends registered as datasources of the two
// dashboard flavors by the organization's admins, and the auth hook reverse proxies ask before letting a
// dashboard's query through to a cluster's metrics backend.

const route = sectionRoutes({ tag: 'Metrics proxy', backend: 'metricsproxy' });

type Context = z.output<typeof BackendContext>;
const ORG_ADMIN = [
  { on: 'org' as const, permission: 'admin:org' as const, denied: 'registering metrics backends takes admin rights in the organization' },
];

/**
 * The cluster the registration is for: `clusterUID`, or the hub when only `hubUID` is given. Every UID named must
 * be a cluster of the organization in the inventory, and a named cluster must be the hub or one of its spokes.
 * An unknown UID and another owner's cluster are refused alike (403), so the answer tells nothing of other owners.
 *
 * Unregister (`gone: 'allowed'`) also takes a cluster that has left the inventory, so the datasource of a deleted
 * cluster can still be removed: the registrations it finds are the organization's own (keyed by its id), and
 * another owner's existing cluster is still 403.
 */
async function clusterOfOrg(
  c: Context,
  org: OrgRef,
  ctx: EdgeContext,
  gone: 'refused' | 'allowed',
): Promise<{ clusterUid: string; hubUid: string }> {
  const refuse = (uid: string) => new NotAllowedError(`cluster ${uid} is not a cluster of organization ${org.name}`);
  const owned = async (uid: string) => {
    const cluster = await ctx.kept.clusters.clusters.getCluster({ uid }).catch((e: unknown) => {
      if (e instanceof NotFoundError && gone === 'refused') throw refuse(uid);
      if (e instanceof NotFoundError) return undefined;
      throw e;
    });
    if (cluster && (cluster.ownerType !== 'organization' || cluster.ownerId !== org.id)) throw refuse(uid);
    return cluster;
  };
  const named = (c.clusterUID ?? c.hubUID)!.toLowerCase();
  const cluster = await owned(named);
  if (!cluster) return { clusterUid: named, hubUid: (c.hubUID ?? '').toLowerCase() };
  if (c.clusterUID && c.hubUID) {
    await owned(c.hubUID);
    const hub = c.hubUID.toLowerCase();
    if (cluster.uid.toLowerCase() !== hub && cluster.hubUid.toLowerCase() !== hub) {
      throw new ValidationError('clusterUID is not the hub hubUID nor one of its managed clusters', [
        { field: 'clusterUID', description: 'not a cluster of hubUID' },
      ]);
    }
  }
  return { clusterUid: cluster.uid.toLowerCase(), hubUid: (c.hubUID ?? cluster.hubUid ?? '').toLowerCase() };
}

// One lookup per request: the check finds the clusters, the handler sends them.
const clustersOfRequest = new WeakMap<object, Promise<{ clusterUid: string; hubUid: string }>>();
function clustersOf(c: Context, org: OrgRef, ctx: EdgeContext, gone: 'refused' | 'allowed') {
  let found = clustersOfRequest.get(ctx.req);
  if (!found) clustersOfRequest.set(ctx.req, (found = clusterOfOrg(c, org, ctx, gone)));
  return found;
}

/** The clusters a registration names are the organization's: clusterOfOrg refuses itself, naming the one that is not. */
const clustersOfOrg = (gone: 'refused' | 'allowed'): Requirement<never, { body: Context }, EdgeContext & { org: OrgRef }> => ({
  check:
    gone === 'refused'
      ? 'the clusterUID (and hubUID) are clusters of `org` in the inventory (nothing is created otherwise)'
      : "the clusterUID (and hubUID) are clusters of `org` in the inventory, or gone from it (not another owner's)",
  holds: async ({ body }, ctx) => Boolean(await clustersOf(body, ctx.org, ctx, gone)),
  denied: (_input, ctx) => `a cluster named is not a cluster of organization ${ctx.org.name}`,
});
const HUB_MISMATCH = { status: 400, description: 'when clusterUID is neither the hub hubUID nor one of its managed clusters' };

async function contextMessage(c: Context, org: OrgRef, ctx: EdgeContext, gone: 'refused' | 'allowed' = 'refused') {
  const { clusterUid, hubUid } = await clustersOf(c, org, ctx, gone);
  return {
    ownerId: org.id,
    ownerName: org.name,
    hubUid,
    clusterUid,
    projectId: c.projectId ?? '',
    clientOrgId: c.clientOrgID ?? '',
    isDefault: c.default ?? false,
    issueToken: c.issueToken ?? false,
  };
}

// ---- the auth hook ----

/** What the hook knows of one `uid.clusterid[.projectid]`. */
interface Facts {
  owner: string;
  clusterName: string;
  clientOrg: string;
}

/** `uid.clusterid[.projectid]`: 400 when it has another form or the uid is not a number. */
function parseUidcid(uidcid: string): { ownerId: number; clusterUid: string; projectId: string; tenant: string } {
  const parts = uidcid.split('.');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    throw new InputError('uidcid must be uid.clusterid or uid.clusterid.projectid');
  }
  if (!/^[1-9]\d{0,15}$/.test(parts[0])) throw new InputError('uidcid: the uid must be a number');
  if (parts[2] !== undefined && !PROJECT_ID.test(parts[2]))
    throw new InputError('uidcid: the projectid must be 1 to 63 letters, digits, _ or -');
  const clusterUid = parts[1].toLowerCase();
  const projectId = parts[2] ?? '';
  const ownerId = Number(parts[0]);
  return { ownerId, clusterUid, projectId, tenant: [ownerId, clusterUid, ...(projectId ? [projectId] : [])].join('.') };
}

/**
 * The facts composed from their owners' read models (the gateway keeps none of them itself): the cluster from the
 * inventory's (`clusters.changed`), the owner from orgs-teams' (its accounts notices), the registration from
 * metricsproxy's (`metricsproxy.changed`). A dashboard of forty panels asks the hook forty times within a second about
 * the same cluster: after the first, each is answered from those read models, behind one fence per request.
 */
async function loadFacts(ownerId: number, clusterUid: string, projectId: string, ctx: EdgeContext): Promise<Facts> {
  const [clusters, accounts] = await Promise.all([
    ctx.kept.clusters.clusters.getClusters({ uids: [clusterUid] }),
    ctx.kept.orgsTeams.identity.getAccounts({ ids: [ownerId] }),
  ]);
  const cluster = clusters.clusters.find((c) => c.uid.toLowerCase() === clusterUid);
  const owner = accounts.users.find((u) => u.id === ownerId);
  if (!owner) throw new NotFoundError(`no account ${ownerId}`);
  if (!cluster || cluster.ownerId !== ownerId) throw new NotFoundError(`account ${ownerId} has no cluster ${clusterUid}`);
  const backend = await ctx.kept.metricsproxy.metricsproxy.lookupBackend({ ownerId, clusterUid, projectId });
  return { owner: owner.login, clusterName: cluster.name, clientOrg: backend.clientOrgId };
}

/**
 * Whether the caller may read the metrics of `uidcid`'s owner: the owning user itself, or a member of the owning
 * organization. Decided from the uid alone, before the owner or the cluster is looked up, so that to anyone else an
 * unknown uid or cluster and another tenant's are the same refusal after the same work.
 */
async function mayRead(uidcid: string, ctx: EdgeContext & { caller: User }): Promise<boolean> {
  const { ownerId } = parseUidcid(uidcid);
  if (ctx.caller.id === ownerId) return true;
  // A user account has no members, so this holds only for an organization the caller is in.
  const { allowed } = await ctx.kept.authz.authz.checkPermission({
    userId: ctx.caller.id,
    permission: 'member:org',
    objectId: ownerId,
  });
  return allowed;
}

/** The hook's one refusal: it names neither the owner nor the cluster, whatever the uidcid. */
const MAY_NOT_READ =
  'you may not read the metrics of this cluster: only the members of the organization that owns it (or the user who owns it) may';

export const metricsProxyRoutes = [
  route({
    auth: 'token',
    org: 'required',
    requires: ORG_ADMIN,
    method: 'post',
    scope: 'write:organization',
    path: '/metricsproxy/register',
    summary: "Register a cluster's metrics backend as a flavor A (Grafana-compatible) datasource in the organization's folder",
    body: { schema: RegisterRequest },
    checks: [clustersOfOrg('refused')],
    errors: [
      HUB_MISMATCH,
      { status: 503, description: 'when flavor A is not configured or unreachable' },
      { status: 502, description: 'when flavor A fails' },
    ],
    response: { status: 200, schema: FlavorAResponse },
    async handle({ body }, ctx) {
      const context = await contextMessage(body, ctx.org, ctx);
      const r = await ctx.backends.metricsproxy.metricsproxy.registerFlavorA({ context, backend: backendMessage(body.backend) });
      return {
        body: {
          flavora: { ...connectionJson(body.backend, r.url), dashboard: { datasource: r.datasource, folderID: r.folderId } },
          folderID: r.folderId,
          datasource: r.datasource,
        },
      };
    },
  }),
  route({
    auth: 'token',
    org: 'required',
    requires: ORG_ADMIN,
    method: 'post',
    scope: 'write:organization',
    path: '/metricsproxy/unregister',
    summary: "Remove a cluster's flavor A datasource (and the organization's folder once empty)",
    body: { schema: BackendContext },
    checks: [clustersOfOrg('allowed')],
    errors: [HUB_MISMATCH, { status: 404, description: 'when the cluster has no flavor A backend' }],
    response: { status: 200 },
    async handle({ body }, ctx) {
      await ctx.backends.metricsproxy.metricsproxy.unregisterFlavorA(await contextMessage(body, ctx.org, ctx, 'allowed'));
      return {};
    },
  }),
  route({
    auth: 'token',
    org: 'required',
    requires: ORG_ADMIN,
    method: 'post',
    scope: 'write:organization',
    path: '/metricsproxy/flavorb/register',
    summary: "Register a cluster's metrics backend as a flavor B (Perses-compatible) datasource, its credentials a project secret",
    body: { schema: RegisterRequest },
    checks: [clustersOfOrg('refused')],
    errors: [
      HUB_MISMATCH,
      { status: 503, description: 'when flavor B is not configured or unreachable' },
      { status: 502, description: 'when flavor B fails' },
    ],
    response: { status: 200, schema: FlavorBResponse },
    async handle({ body }, ctx) {
      const context = await contextMessage(body, ctx.org, ctx);
      const r = await ctx.backends.metricsproxy.metricsproxy.registerFlavorB({ context, backend: backendMessage(body.backend) });
      const dashboard = { projectName: r.projectName, folderName: r.folderName, datasource: r.datasource };
      return { body: { flavorb: { ...connectionJson(body.backend, r.url), dashboard }, ...dashboard } };
    },
  }),
  route({
    auth: 'token',
    org: 'required',
    requires: ORG_ADMIN,
    method: 'post',
    scope: 'write:organization',
    path: '/metricsproxy/flavorb/unregister',
    summary: "Remove a cluster's flavor B datasource and its secret",
    body: { schema: BackendContext },
    checks: [clustersOfOrg('allowed')],
    errors: [HUB_MISMATCH, { status: 404, description: 'when the cluster has no flavor B backend' }],
    response: { status: 200 },
    async handle({ body }, ctx) {
      await ctx.backends.metricsproxy.metricsproxy.unregisterFlavorB(await contextMessage(body, ctx.org, ctx, 'allowed'));
      return {};
    },
  }),
  route({
    auth: 'token',
    method: 'get',
    scope: 'read:organization',
    path: '/metricsproxy/auth/:uidcid/*path',
    summary:
      'Auth hook for a reverse proxy (nginx auth_request, Traefik ForwardAuth): may the caller read the cluster metrics of uidcid; sets X-Scope-OrgID',
    params: z.object({
      uidcid: z.string().max(200),
      path: z.union([z.string(), z.array(z.string())]).meta({ description: 'The proxied path (trailing wildcard)' }),
    }),
    // Refused callers are "not authenticated" for the metrics: what the reverse proxies expect.
    checks: [
      {
        check:
          'the caller is the account `uid` or a member of the organization `uid`, decided before the owner or cluster is looked up, so an unknown one is refused alike',
        status: 401,
        holds: ({ params }, ctx) => mayRead(params.uidcid, ctx),
        denied: MAY_NOT_READ,
      },
    ],
    errors: [
      { status: 400, description: 'for a uidcid not uid.clusterid[.projectid] or a uid not a number' },
      { status: 404, description: 'to the owner or its members, when the owner has no cluster of that UID' },
    ],
    response: { status: 200, schema: AuthHookResult },
    async handle({ params }, ctx) {
      const { ownerId, clusterUid, projectId, tenant } = parseUidcid(params.uidcid);
      const facts = await loadFacts(ownerId, clusterUid, projectId, ctx);
      return {
        body: {
          owner: facts.owner,
          clusterName: facts.clusterName,
          tenantID: tenant,
          ...(facts.clientOrg && { clientOrg: facts.clientOrg }),
        },
        // What nginx auth_request_set / Traefik authResponseHeaders copy to the upstream request.
        headers: {
          'X-Scope-OrgID': tenant,
          'X-Metrics-Owner': facts.owner,
          'X-Metrics-Cluster': facts.clusterName,
          ...(facts.clientOrg && { 'X-Metrics-Client-Org': facts.clientOrg }),
          'Cache-Control': 'no-store',
        },
      };
    },
  }),
];
