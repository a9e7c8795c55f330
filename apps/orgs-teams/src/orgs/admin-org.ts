import { ConflictError, NotFoundError, UnavailableError } from '@platform/errors';
import type { CallContext } from '@platform/service-kit';
import type { Identity } from '../identity/identity';
import type { Organizations } from './organizations';

/**
 * Bootstrap: the administrative organization (PLATFORM_ADMIN_ORG) exists, owned by the first site admin
 * and private, so site-wide settings have one home from the first start. An existing one is left as it is, and so
 * is one another replica starting at the same time created first.
 */
export async function ensureAdminOrg(identity: Identity, orgs: Organizations, slug: string, ctx: CallContext): Promise<void> {
  const [adminId] = await identity.siteAdminIds();
  // None (the admin this replica's bootstrap found was removed meanwhile): retried as an unreachable authz is; the
  // organization is never made without an owner.
  if (adminId === undefined) throw new UnavailableError('there is no site admin yet to own the administrative organization; retrying');
  const exists = () =>
    orgs.get(slug, adminId).then(
      () => true,
      (err) => {
        if (err instanceof NotFoundError) return false;
        throw err;
      },
    );
  if (await exists()) return;
  const org = await orgs
    .create(
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
    )
    .catch(async (err) => {
      if (err instanceof ConflictError && (await exists())) return undefined;
      throw err;
    });
  if (!org) return;
  ctx.log.info({ orgId: org.id, org: slug }, 'administrative organization created');
}
