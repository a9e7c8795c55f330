import { randomBytes } from 'node:crypto';
import type { Logger } from '@platform/service-kit';
import type { Identity } from './identity';
import type { Relationships } from '../relationships';

/** The site object every site-admin permission is checked on. */
export const SITE_OBJECT = 'site:platform';

export interface SiteAdminSettings {
  username: string;
  email: string;
  password?: string;
}

/**
 * First start: when no site admin exists, create one from PLATFORM_ADMIN_* and grant it the site admin
 * relation. A generated password is printed once to stderr (never to the log). Later starts change nothing.
 */
export async function ensureSiteAdmin(
  identity: Identity,
  relationships: Relationships,
  settings: SiteAdminSettings,
  log: Logger,
): Promise<void> {
  if (await identity.hasSiteAdmin()) return;
  const password = settings.password ?? randomBytes(18).toString('base64url');
  const user = await identity.createUser({
    username: settings.username,
    email: settings.email,
    password,
    fullName: 'Site administrator',
    mustChangePassword: false,
    isAdmin: true,
  });
  try {
    await relationships.write([{ user: `user:${user.id}`, relation: 'admin', object: SITE_OBJECT }], []);
  } catch (err) {
    await identity.deleteAccount(user.id);
    throw err;
  }
  log.info({ userId: user.id, login: user.login }, 'site admin created');
  if (!settings.password) {
    process.stderr.write(
      `\n  Site admin "${user.login}" created with generated password: ${password}\n` +
        `  It is shown only now. Set PLATFORM_ADMIN_PASSWORD to choose one.\n\n`,
    );
  }
}
