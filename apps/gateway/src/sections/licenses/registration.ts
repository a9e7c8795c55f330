import { z } from 'zod';
import type { licensingV1 } from '@platform/proto';
import { SELF_REGISTRATION } from '../../gating';
import { sectionRoutes, type Route } from '../../route';
import { clusterUuid } from '../../params';

// License registration (docs/licensing.md): a cluster presents its license at POST /register; contracts-licensing
// verifies it and records it with its holder, whom a self-hosted platform makes an account for, as one operation;
// site admins list what registered.

const registration = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });

const base64 = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9+/=\s]+$/, 'must be base64')
  .meta({ format: 'byte' });

const RegisterLicenseRequest = z
  .object({
    clusterUID: clusterUuid,
    features: z.string().max(2048).meta({ description: 'Requested features, comma-separated; empty is 400' }),
    caCert: base64.optional(),
    license: base64,
  })
  .meta({ id: 'RegisterLicenseRequest' });

export const LicenseRegistrationJson = z
  .object({
    licenseID: z.string().meta({ description: 'The license serial' }),
    clusterID: z.string().meta({ description: 'The cluster UUID it registered for' }),
    contractID: z.number().int(),
    ownerID: z.number().int().meta({ description: 'The account whose contract the license came from' }),
    ownerName: z.string(),
    email: z.string().meta({ description: 'The license holder: the email the license names' }),
    userID: z.number().int().meta({ description: 'The holder’s user account; 0 when the platform has none' }),
    username: z.string(),
    features: z.array(z.string()),
    firstRegisteredAt: z.number().int().meta({ description: 'Unix seconds' }),
    lastRegisteredAt: z.number().int().meta({ description: 'Unix seconds' }),
    notAfter: z.number().int().meta({ description: 'Unix seconds: when the license expires' }),
  })
  .meta({ id: 'LicenseRegistration' });

const registrationJson = (r: licensingV1.Registration): z.input<typeof LicenseRegistrationJson> => ({
  licenseID: r.serial,
  clusterID: r.clusterUid,
  contractID: r.contractId,
  ownerID: r.ownerId,
  ownerName: r.ownerLogin,
  email: r.holderEmail,
  userID: r.holderId,
  username: r.holderLogin,
  features: r.features,
  firstRegisteredAt: r.firstRegisteredUnix,
  lastRegisteredAt: r.lastRegisteredUnix,
  notAfter: r.expiryUnix,
});

export const registrationRoutes: Route[] = [
  registration({
    method: 'post',
    scope: 'write:organization',
    path: '/register',
    summary:
      'Register a cluster with its license, verified for real (one certificate, chain, cluster, validity, features, revocation): the license, its cluster and its holder are recorded once',
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
          'for empty features, then, for a valid license, for a cluster no contract of the license’s owner binds or another account enrolled',
      },
      {
        status: 422,
        description:
          'for a missing, malformed, tampered, foreign, expired or revoked license, whatever the cluster; bytes after the one certificate are malformed',
      },
    ],
    response: { status: 200, schema: z.undefined() },
    async handle({ body }, ctx) {
      // One operation of contracts-licensing: verified, the holder's account found or made, recorded (docs/licensing.md).
      await ctx.backends.contractsLicensing.licenses.registerLicense({
        license: Buffer.from(body.license, 'base64'),
        clusterUid: body.clusterUID,
        features: body.features.split(','),
        caCert: body.caCert ? Buffer.from(body.caCert, 'base64') : Buffer.alloc(0),
      });
      return { body: undefined };
    },
  }),
  registration({
    method: 'get',
    scope: 'read:admin',
    path: '/licenses/registrations',
    summary: 'The licenses clusters registered, with their cluster, holder and owner, the latest registered first (site admins)',
    auth: 'token',
    requires: [{ on: 'site', permission: 'view_licensed_users:site_admin' }],
    response: { status: 200, schema: z.array(LicenseRegistrationJson) },
    async handle(_input, ctx) {
      const { registrations } = await ctx.kept.contractsLicensing.licenses.listRegistrations({});
      return { body: registrations.map(registrationJson) };
    },
  }),
];
