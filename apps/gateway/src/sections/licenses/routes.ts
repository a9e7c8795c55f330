import { z } from 'zod';
import { NotFoundError, ValidationError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import { SELF_REGISTRATION } from '../../gating';
import { sectionRoutes, type EdgeContext, type ObjectResolver, type Route, type User } from '../../route';
import { clusterUuid } from '../../params';
import { ContractClusterId } from '../contracts/shared';
import { ownerOf } from '../contracts/shared';
import { clusterOwnedBy, ISSUE_LICENSE_DENIED, licenseProxyRoute } from './proxy';

// Licenses (docs/licensing.md): issuing from a contract cluster (spec 4.3 and 4.4 `issue-license`), for a cluster
// from the caller's contracts (4.11 `POST /license/issue`), registration (4.11 `POST /register`), and, beyond the
// spec, the revocation list and the CA certificate that offline verifiers need.

const admin = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const user = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const registration = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });
const beyond = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });

const base64 = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9+/=\s]+$/, 'must be base64')
  .meta({ format: 'byte' });

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

const RegisterLicenseRequest = z
  .object({
    clusterUID: clusterUuid,
    features: z.string().max(2048).meta({ description: 'Requested features, comma-separated; empty is 400' }),
    caCert: base64.optional(),
    license: base64,
  })
  .meta({ id: 'RegisterLicenseRequest' });

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
    const { clusters } = await ctx.backends.contractsLicensing.contracts.listContractClusters({
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

/** The organization a license-proxy token was made for. */
const tokenAccount: ObjectResolver<unknown, EdgeContext & { caller: User }> = {
  describe: 'the organization the license-proxy token acts for',
  resolve: async (_input, ctx) => ({ type: 'organization', id: accountOf(ctx) }),
};

export const licenseRoutes: Route[] = [
  admin({
    method: 'post',
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
    path: '/license/issue',
    summary: 'Issue a license for a cluster from the caller’s active contract that has it bound (or auto-assigns it)',
    auth: 'token',
    scopes: ['license-proxy'],
    body: { schema: IssueLicenseRequest },
    // A license proxy's token (POST /user/license-proxy) acts for the account the proxy serves, while its maker
    // is still a member there.
    checks: [
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
    ],
    errors: [
      { status: 403, description: 'when the quota is used up' },
      { status: 405, description: 'when the contract is revoked or expired' },
      { status: 404, description: 'when no contract covers the cluster' },
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ body }, ctx) {
      if (!body.cluster) throw new ValidationError('cluster: the cluster UUID is required', [{ field: 'cluster', description: 'missing' }]);
      const ownerId = accountOf(ctx);
      const license = await ctx.backends.contractsLicensing.licenses.issueClusterLicense({
        ownerId,
        cluster: body.cluster,
        features: body.features ?? [],
        actor: ctx.caller.login,
        ownerEmail: ownerId === ctx.caller.id ? ctx.caller.email : '',
      });
      return { body: licenseJson(license) };
    },
  }),
  registration({
    method: 'post',
    path: '/register',
    summary: 'Register a cluster with its license, which is verified for real (chain, cluster, validity, features, revocation)',
    auth: 'public',
    body: { schema: RegisterLicenseRequest },
    checks: [
      {
        check: `DEPLOYMENT_TYPE is ${SELF_REGISTRATION.join(' or ')}`,
        holds: (_input, ctx) => SELF_REGISTRATION.includes(ctx.config.DEPLOYMENT_TYPE),
        denied: (_input, ctx) => `clusters cannot register themselves on a ${ctx.config.DEPLOYMENT_TYPE} deployment`,
      },
    ],
    errors: [
      {
        status: 400,
        description:
          'for empty features, then for a cluster the platform does not know (whatever the license: it is read only for a known cluster)',
      },
      { status: 422, description: 'for a missing, malformed, tampered, foreign or revoked license' },
    ],
    response: { status: 200, schema: z.undefined() },
    async handle({ body }, ctx) {
      await ctx.backends.contractsLicensing.licenses.verifyRegistration({
        license: Buffer.from(body.license, 'base64'),
        clusterUid: body.clusterUID,
        features: body.features.split(','),
        caCert: body.caCert ? Buffer.from(body.caCert, 'base64') : Buffer.alloc(0),
      });
      return { body: undefined };
    },
  }),
  beyond({
    method: 'get',
    path: '/licenses/crl',
    summary: 'The license revocation list, signed by the platform CA: DER, or PEM with `format=pem`',
    auth: 'public',
    scopes: ['license-proxy'],
    query: z.object({ format: z.enum(['der', 'pem']).optional() }),
    response: { status: 200, schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }), contentType: 'application/pkix-crl' },
    async handle({ query }, ctx) {
      const crl = await ctx.backends.contractsLicensing.licenses.revocationList({});
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
    path: '/licenses/ca',
    summary: 'The platform CA certificate (PEM) that licenses chain to, for offline verification',
    auth: 'public',
    scopes: ['license-proxy'],
    response: {
      status: 200,
      schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }),
      contentType: 'application/x-pem-file',
    },
    async handle(_input, ctx) {
      const { pem } = await ctx.backends.contractsLicensing.licenses.caCertificate({});
      return { body: Buffer.from(pem), headers: { 'Content-Type': 'application/x-pem-file', 'Cache-Control': 'public, max-age=3600' } };
    },
  }),
  licenseProxyRoute,
];
