import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import type { Identity } from './identity';
import type { Relationships } from '../relationships';
import type { Organizations } from '../orgs/organizations';

/** The site object every site-admin permission is checked on. */
export const SITE_OBJECT = 'site:platform';

export interface SiteAdminSettings {
  username: string;
  email: string;
  password?: string;
}

/**
 * First start: when no site admin exists, create one from PLATFORM_ADMIN_* and grant it the site admin
 * relation. A generated password is printed once to stderr (never to the log). Later starts only make sure
 * every site admin still holds the relation (a crash between the two writes must not leave an admin without it).
 */
export async function ensureSiteAdmin(
  identity: Identity,
  relationships: Relationships,
  settings: SiteAdminSettings,
  ctx: CallContext,
): Promise<void> {
  const admins = await identity.siteAdminIds();
  if (admins.length > 0) {
    for (const id of admins) await grantSiteAdmin(relationships, id, ctx);
    return;
  }
  const password = settings.password ?? randomBytes(18).toString('base64url');
  const user = await createUser(
    identity,
    relationships,
    {
      username: settings.username,
      email: settings.email,
      password,
      fullName: 'Site administrator',
      mustChangePassword: false,
      isAdmin: true,
    },
    ctx,
  );
  ctx.log.info({ userId: user.id, login: user.login }, 'site admin created');
  if (!settings.password) {
    process.stderr.write(
      `\n  Site admin "${user.login}" created with generated password: ${password}\n` +
        `  It is shown only now. Set PLATFORM_ADMIN_PASSWORD to choose one.\n\n`,
    );
  }
}

/**
 * Creates a user; a site admin also gets the site-admin relation, and the account is removed again when that
 * cannot be written, so no admin exists without it (decision D6).
 */
export async function createUser(
  identity: Identity,
  relationships: Relationships,
  req: orgsTeamsV1.CreateUserRequest,
  ctx: CallContext,
): Promise<orgsTeamsV1.User> {
  const user = await identity.createUser(req);
  if (!req.isAdmin) return user;
  try {
    await relationships.write([{ user: `user:${user.id}`, relation: 'admin', object: SITE_OBJECT }], [], ctx);
  } catch (err) {
    await identity.deleteAccount(user.id);
    throw err;
  }
  return user;
}

/** Writes `user:<id> admin site:platform`; already holding it is fine. */
async function grantSiteAdmin(relationships: Relationships, userId: number, ctx: CallContext): Promise<void> {
  try {
    await relationships.write([{ user: `user:${userId}`, relation: 'admin', object: SITE_OBJECT }], [], ctx);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
}

/**
 * Bootstrap: the administrative organization (PLATFORM_ADMIN_ORG) exists, owned by the first site admin
 * and private, so site-wide settings have one home from the first start. An existing one is left as it is.
 */
export async function ensureAdminOrg(identity: Identity, orgs: Organizations, slug: string, ctx: CallContext): Promise<void> {
  const [adminId] = await identity.siteAdminIds();
  try {
    await orgs.get(slug, adminId);
    return;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const org = await orgs.create(
    {
      creatorId: adminId,
      username: slug,
      fullName: 'Platform administration',
      description: 'The administrative organization: site-wide settings are changed through it',
      website: '',
      location: '',
      orgType: 'private',
      visibility: '',
      managerEndpoint: '',
    },
    ctx,
  );
  ctx.log.info({ orgId: org.id, org: slug }, 'administrative organization created');
}
