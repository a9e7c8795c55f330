import { z } from 'zod';
import { NotFoundError, ValidationError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import { sectionRoutes, type EdgeContext, type ObjectResolver, type Route, type User } from '../../route';
import { clusterUuid } from '../../params';
import { ContractClusterId } from '../contracts/shared';
import { ownerOf } from '../contracts/shared';
import { clusterOwnedBy, ISSUE_LICENSE_DENIED, licenseProxyRoute } from './proxy';
import { registrationRoutes } from './registration';

// Licenses (docs/licensing.md): issuing from a contract cluster (the admin and user contract routes' `issue-license`), for a cluster
// from the caller's contracts (`POST /license/issue`), registration (`POST /register`, registration.ts),
// and, beyond the spec, the revocation list and the CA certificate that offline verifiers need.

const admin = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const user = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const registration = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const beyond = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });

export const LicenseJson = z
  .object({
    contract: z.object({
      id: z.number().int(),
      startTimestamp: z.string().meta({ description: 'RFC 3339' }),
      expiryTimestamp: z.string().meta({ description: 'RFC 3339' }),
    }),
    license: z.string().meta({ description: 'The license certificate, DER, base64', format: 'byte' }),
  })
  .meta({ id: 'License' });

const licenseJson = (l: licensingV1.License): z.input<typeof LicenseJson> => ({
  contract: {
    id: l.contractId,
    startTimestamp: new Date(l.startUnix * 1000).toISOString(),
    expiryTimestamp: new Date(l.expiryUnix * 1000).toISOString(),
  },
  license: Buffer.from(l.license).toString('base64'),
});

const IssueLicenseRequest = z
  .object({
    cluster: clusterUuid.optional().meta({ description: 'The cluster UUID the license is for' }),
    features: z.array(z.string().max(64)).max(100).optional(),
  })
  .meta({ id: 'IssueLicenseRequest' });

/** The caller's email, for the SAN email, when the license is for the caller's own account. */
const ownerEmail = (ctx: EdgeContext & { caller: { email: string } }) => (ctx.org ? '' : ctx.caller.email);

/**
 * The cluster contract `{id}` binds as `{ccID}`, for `issue-license:cluster` on it: the contract's owner account is
 * handed to authz as the cluster's owner, so the owner counts as such for a cluster not enrolled. 404 for another
 * account's contract or a binding it does not have.
 */
const boundCluster: ObjectResolver<{ params: { id: number; ccID: number } }, EdgeContext & { caller: User }> = {
  describe: 'the cluster contract `{id}` binds as `{ccID}` (its owner counts as the cluster’s for one not enrolled)',
  async resolve({ params }, ctx) {
    const owner = ownerOf(ctx);
    const { clusters } = await ctx.kept.contractsLicensing.contracts.listContractClusters({
      id: params.id,
      ownerId: owner.id,
      actor: '',
    });
    const bound = clusters.find((c) => c.id === params.ccID);
    if (!bound) throw new NotFoundError(`contract ${params.id} has no cluster ${params.ccID}`);
    return clusterOwnedBy(bound.cluster, owner);
  },
};

/** The account a request acts for: a license-proxy token's own account, else the caller's. */
const accountOf = (ctx: Pick<EdgeContext, 'scope'> & { caller: User }) =>
  ctx.scope?.name === 'license-proxy' ? ctx.scope.accountId : ctx.caller.id;

/** The account `POST /license/issue` issues for: a license-proxy token's own, else the `org` organization, else the caller's. */
const issuingAccount = (ctx: Pick<EdgeContext, 'scope' | 'org'> & { caller: User }) =>
  ctx.scope?.name === 'license-proxy' ? ctx.scope.accountId : (ctx.org?.id ?? ctx.caller.id);

/**
 * The organizations whose contracts `POST /license/issue` without `org` searches beside the caller's own account
 * (docs/licensing.md, "The caller's active contract"): those the caller is a member of and may issue the cluster's
 * license for by the check the contract route makes (`issue_license` on the cluster, the organization standing in as
 * its owner: its owners, site admins and holders of a custom role carrying issue-license:cluster). None with `org`
 * (that organization alone) or with a license proxy's token (its own account alone).
 */
async function issuingOrganizations(ctx: EdgeContext & { caller: User }, cluster: string): Promise<number[]> {
  if (ctx.org || ctx.scope?.name === 'license-proxy') return [];
  const { orgs } = await ctx.kept.orgsTeams.organizations.listUserOrgs({
    userId: ctx.caller.id,
    username: '',
    viewerId: ctx.caller.id,
    page: undefined,
  });
  const uid = cluster.toLowerCase();
  const allowed = await Promise.all(
    orgs.map(async (org) => {
      const object = clusterOwnedBy(uid, { id: org.id, login: org.username, type: 'organization' });
      const { allowed } = await ctx.kept.authz.authz.check({
        tuple: { user: `user:${ctx.caller.id}`, relation: 'issue_license', object: `${object.type}:${object.id}` },
        contextualTuples: object.contextualTuples ?? [],
      });
      return allowed;
    }),
  );
  return orgs.filter((_, i) => allowed[i]).map((org) => org.id);
}

/** The `org` organization, for the right to issue its licenses. */
const orgAccount: ObjectResolver<unknown, EdgeContext & { caller: User }> = {
  describe: 'the `org` organization',
  resolve: async (_input, ctx) => {
    if (!ctx.org) throw new NotFoundError('no organization named');
    return { type: 'organization', id: ctx.org.id };
  },
};

/** The organization a license-proxy token was made for. */
const tokenAccount: ObjectResolver<unknown, EdgeContext & { caller: User }> = {
  describe: 'the organization the license-proxy token acts for',
  resolve: async (_input, ctx) => ({ type: 'organization', id: accountOf(ctx) }),
};

export const licenseRoutes: Route[] = [
  admin({
    method: 'post',
    scope: 'write:organization',
    path: '/contracts/:id/clusters/:ccID/issue-license',
    summary: 'Issue a license for a cluster bound to the contract',
    auth: 'token',
    gate: 'hosted',
    org: 'optional',
    params: ContractClusterId,
    requires: [{ on: 'site', permission: 'issue_license:site_admin' }],
    errors: [
      { status: 405, description: 'for a revoked or expired contract, or an offline license the contract does not allow' },
      { status: 403, description: 'when the quota is used up' },
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ params }, ctx) {
      const license = await ctx.backends.contractsLicensing.licenses.issueContractLicense({
        contractId: params.id,
        ccId: params.ccID,
        ownerId: 0,
        actor: ctx.caller.login,
        ownerEmail: '',
      });
      return { body: licenseJson(license) };
    },
  }),
  user({
    method: 'post',
    scope: 'write:organization',
    path: '/user/contracts/:id/clusters/:ccID/issue-license',
    summary: 'Issue a license for a cluster bound to one of the account’s contracts',
    auth: 'token',
    gate: 'hosted',
    org: 'optional',
    params: ContractClusterId,
    requires: [
      { on: 'org', permission: 'access:org', denied: 'org membership required' },
      { on: boundCluster, relation: 'issue_license', denied: ISSUE_LICENSE_DENIED },
    ],
    errors: [
      { status: 404, description: 'for a contract of another account, or a cluster the contract does not bind as `{ccID}`' },
      { status: 405, description: 'for a revoked or expired contract, or an offline license the contract does not allow' },
      { status: 403, description: 'when the quota is used up' },
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ params }, ctx) {
      const owner = ownerOf(ctx);
      const license = await ctx.backends.contractsLicensing.licenses.issueContractLicense({
        contractId: params.id,
        ccId: params.ccID,
        ownerId: owner.id,
        actor: ctx.caller.login,
        ownerEmail: ownerEmail(ctx),
      });
      return { body: licenseJson(license) };
    },
  }),
  registration({
    method: 'post',
    scope: 'write:organization',
    path: '/license/issue',
    summary:
      'Issue a license for a cluster from the account’s active contract that has it bound (or auto-assigns it): the `org` organization’s (who may issue its licenses), else the caller’s own or one of the organizations the caller may issue the cluster’s licenses for',
    auth: 'token',
    org: 'optional',
    uses: ['license-proxy'],
    body: { schema: IssueLicenseRequest },
    // A license proxy's token (POST /user/license-proxy) acts for the account the proxy serves, while its maker
    // is still a member there and may still issue its licenses: checked on every request, so a right taken away
    // stops the proxy on the next one.
    checks: [
      // An organization's contracts, for whoever may issue its licenses (its owners, site admins, custom-role holders).
      {
        anyOf: [
          { check: 'no `org` is named', holds: (_input, ctx) => !ctx.org, denied: 'no organization named' },
          { on: orgAccount, relation: 'issue_license', denied: 'you may not issue the licenses of this organization' },
        ],
      },
      // A license proxy's token acts for its own account only.
      {
        check: 'a license proxy’s token names no other `org`',
        holds: (_input, ctx) => ctx.scope?.name !== 'license-proxy' || !ctx.org || ctx.org.id === ctx.scope.accountId,
        denied: 'the license proxy’s token acts for another account',
      },
      {
        anyOf: [
          {
            check: 'the token acts for the caller’s own account',
            holds: (_input, ctx) => accountOf(ctx) === ctx.caller.id,
            denied: 'the token acts for another account',
          },
          {
            on: tokenAccount,
            permission: 'access:org',
            denied: 'the license proxy’s token belongs to someone no longer a member of the organization',
          },
        ],
      },
      {
        anyOf: [
          {
            check: 'the token acts for the caller’s own account',
            holds: (_input, ctx) => accountOf(ctx) === ctx.caller.id,
            denied: 'the token acts for another account',
          },
          {
            on: tokenAccount,
            relation: 'issue_license',
            denied: 'the license proxy’s token belongs to someone who may no longer issue licenses for the organization',
          },
        ],
      },
    ],
    errors: [
      { status: 403, description: 'when the quota is used up' },
      { status: 405, description: 'when the contract is revoked or expired' },
      { status: 404, description: 'when no contract covers the cluster' },
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ body }, ctx) {
      if (!body.cluster) throw new ValidationError('cluster: the cluster UUID is required', [{ field: 'cluster', description: 'missing' }]);
      const ownerId = issuingAccount(ctx);
      const license = await ctx.backends.contractsLicensing.licenses.issueClusterLicense({
        ownerId,
        cluster: body.cluster,
        features: body.features ?? [],
        actor: ctx.caller.login,
        ownerEmail: ownerId === ctx.caller.id ? ctx.caller.email : '',
        alsoOwnerIds: await issuingOrganizations(ctx, body.cluster),
      });
      return { body: licenseJson(license) };
    },
  }),
  beyond({
    method: 'get',
    scope: 'read:misc',
    path: '/licenses/crl',
    summary: 'The license revocation list, signed by the platform CA: DER, or PEM with `format=pem`',
    auth: 'public',
    uses: ['license-proxy'],
    query: z.object({ format: z.enum(['der', 'pem']).optional() }),
    response: { status: 200, schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }), contentType: 'application/pkix-crl' },
    async handle({ query }, ctx) {
      const crl = await ctx.kept.contractsLicensing.licenses.revocationList({});
      const pem = query.format === 'pem';
      return {
        body: pem ? Buffer.from(crl.pem) : Buffer.from(crl.der),
        headers: {
          'Content-Type': pem ? 'application/x-pem-file' : 'application/pkix-crl',
          'Cache-Control': 'public, max-age=60',
        },
      };
    },
  }),
  beyond({
    method: 'get',
    scope: 'read:misc',
    path: '/licenses/ca',
    summary: 'The platform CA certificate (PEM) that licenses chain to, for offline verification',
    auth: 'public',
    uses: ['license-proxy'],
    response: {
      status: 200,
      schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }),
      contentType: 'application/x-pem-file',
    },
    async handle(_input, ctx) {
      const { pem } = await ctx.kept.contractsLicensing.licenses.caCertificate({});
      return { body: Buffer.from(pem), headers: { 'Content-Type': 'application/x-pem-file', 'Cache-Control': 'public, max-age=3600' } };
    },
  }),
  ...registrationRoutes,
  licenseProxyRoute,
];
