import { NotFoundError } from '@platform/errors';
import type { CallContext } from '@platform/service-kit';
import type { Identity } from '../identity/identity';
import type { Organizations } from './organizations';

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
