import { z } from 'zod';
import { NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import { SELF_REGISTRATION } from '../../gating';
import { sectionRoutes, type EdgeContext, type Route } from '../../route';
import { clusterUuid } from '../../params';
import { ContractClusterId } from '../contracts/shared';
import { ownerOf } from '../contracts/shared';
import { licenseProxyRoute } from './proxy';

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
    handlerChecks: [
      '405 for a revoked or expired contract, or an offline license the contract does not allow',
      '403 when the quota is used up',
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
    requires: [{ on: 'org', permission: 'access:org', denied: 'org membership required' }],
    handlerChecks: [
      'issue-license:cluster on the bound cluster (the contract owner counts as the cluster owner for a cluster not enrolled)',
      '405 for a revoked or expired contract, or an offline license the contract does not allow',
      '403 when the quota is used up',
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ params }, ctx) {
      const owner = ownerOf(ctx);
      const contracts = ctx.backends.contractsLicensing.contracts;
      const { clusters } = await contracts.listContractClusters({ id: params.id, ownerId: owner.id, actor: '' });
      const bound = clusters.find((c) => c.id === params.ccID);
      if (!bound) throw new NotFoundError(`contract ${params.id} has no cluster ${params.ccID}`);
      const object = `cluster:${bound.cluster}`;
      const { allowed } = await ctx.backends.authz.authz.check({
        tuple: { user: `user:${ctx.caller.id}`, relation: 'issue_license', object },
        contextualTuples: [{ user: `${owner.type}:${owner.id}`, relation: 'owner', object }],
      });
      if (!allowed) throw new NotAllowedError('you do not have the issue-license:cluster permission on this cluster');
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
    handlerChecks: [
      'a license-proxy token acts for the account it was made for (still a member of that organization: 403 otherwise)',
      '403 when the quota is used up',
      '405 when the contract is revoked or expired',
      '404 when no contract covers the cluster',
    ],
    response: { status: 200, schema: LicenseJson },
    async handle({ body }, ctx) {
      if (!body.cluster) throw new ValidationError('cluster: the cluster UUID is required', [{ field: 'cluster', description: 'missing' }]);
      // A license proxy's token (POST /user/license-proxy) acts for the account the proxy serves.
      const ownerId = ctx.scope?.name === 'license-proxy' ? ctx.scope.accountId : ctx.caller.id;
      if (ownerId !== ctx.caller.id) {
        const { allowed } = await ctx.backends.authz.authz.checkPermission({
          userId: ctx.caller.id,
          permission: 'access:org',
          objectId: ownerId,
        });
        if (!allowed) throw new NotAllowedError('the license proxy’s token belongs to someone no longer a member of the organization');
      }
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
    handlerChecks: [
      `403 unless DEPLOYMENT_TYPE is ${SELF_REGISTRATION.join(' or ')}`,
      '400 for empty features, then for a cluster the platform does not know (whatever the license: it is read only for a known cluster)',
      '422 for a missing, malformed, tampered, foreign or revoked license',
    ],
    response: { status: 200, schema: z.undefined() },
    async handle({ body }, ctx) {
      if (!SELF_REGISTRATION.includes(ctx.config.DEPLOYMENT_TYPE))
        throw new NotAllowedError(`clusters cannot register themselves on a ${ctx.config.DEPLOYMENT_TYPE} deployment`);
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
