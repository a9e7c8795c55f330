import { randomBytes, createHash } from 'node:crypto';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import { SELF_REGISTRATION } from '../../gating';
import { sectionRoutes, type EdgeContext, type Route } from '../../route';
import { clusterUuid } from '../../params';

// License registration (docs/licensing.md): a cluster presents its license at POST /register; a valid one is
// recorded with its holder, whom a self-hosted platform makes an account for; site admins list what registered.

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

/** The holder's account: found, made here (`created`, to take back if recording fails), or none. */
interface Holder {
  id: number;
  login: string;
  created: boolean;
}

const LOGIN_MAX = 40;

/**
 * The logins a holder's account may have, in order: the email's local part made a login, then the same with a
 * digest of the whole email, so two holders with one local part at different domains get two accounts.
 */
export function holderLogins(email: string): string[] {
  const local = email.split('@')[0].toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
  const trim = (s: string) => s.replace(/^[._-]+|[._-]+$/g, '');
  const base = trim(local.slice(0, LOGIN_MAX)) || 'license-holder';
  const digest = createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 8);
  return [base, `${trim(base.slice(0, LOGIN_MAX - 9)) || 'holder'}-${digest}`];
}

/**
 * The license holder's user account, by its email. A user whose login is one the email gives and whose email is it
 * is the holder. On a self-hosted platform that has none, one is made through orgs-teams' CreateUser with a random
 * password nobody is told and must_change_password, so it has no usable password until its holder sets one through
 * a reset. On a hosted platform (which issued the license and knows its accounts) or when the email belongs to an
 * account under another login, the holder is recorded by email alone.
 */
async function holderOf(ctx: EdgeContext, email: string): Promise<Holder | undefined> {
  if (!email) return undefined;
  const identity = ctx.backends.orgsTeams.identity;
  const same = (u: { email: string }) => u.email.toLowerCase() === email.toLowerCase();
  for (const login of holderLogins(email)) {
    const found = await identity.getUser({ id: 0, login }).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    if (found) {
      if (same(found)) return { id: found.id, login: found.login, created: false };
      continue;
    }
    if (ctx.config.DEPLOYMENT_TYPE === 'Hosted') return undefined;
    try {
      const made = await identity.createUser({
        username: login,
        email,
        password: randomBytes(32).toString('base64url'),
        fullName: '',
        mustChangePassword: true,
        isAdmin: false,
      });
      return { id: made.id, login: made.login, created: true };
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      // A registration of the same holder made it just now, or the email is another login's account.
      const raced = await identity.getUser({ id: 0, login }).catch(() => undefined);
      return raced && same(raced) ? { id: raced.id, login: raced.login, created: false } : undefined;
    }
  }
  return undefined;
}

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
        description: 'for a missing, malformed, tampered, foreign, expired or revoked license, whatever the cluster; bytes after the one certificate are malformed',
      },
    ],
    response: { status: 200, schema: z.undefined() },
    async handle({ body }, ctx) {
      const licenses = ctx.backends.contractsLicensing.licenses;
      const verified = await licenses.verifyRegistration({
        license: Buffer.from(body.license, 'base64'),
        clusterUid: body.clusterUID,
        features: body.features.split(','),
        caCert: body.caCert ? Buffer.from(body.caCert, 'base64') : Buffer.alloc(0),
      });
      const holder = await holderOf(ctx, verified.email);
      try {
        await licenses.recordRegistration({
          serial: verified.serial,
          clusterUid: verified.clusterUid,
          holderId: holder?.id ?? 0,
          holderLogin: holder?.login ?? '',
          holderEmail: verified.email,
        });
      } catch (err) {
        // Nothing half done: an account made for this registration goes with it (it was never used).
        if (holder?.created) await ctx.backends.orgsTeams.identity.deleteUnusedUser({ id: holder.id }).catch(() => undefined);
        throw err;
      }
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
      const { registrations } = await ctx.backends.contractsLicensing.licenses.listRegistrations({});
      return { body: registrations.map(registrationJson) };
    },
  }),
];
