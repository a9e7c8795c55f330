import { z } from 'zod';
import { NotAllowedError, NotFoundError } from '@platform/errors';
import type { clustersV1 } from '@platform/proto';
import * as p from '../../params';
import type { EdgeContext, Target } from '../../route';

/** The path of every 4.12 row: `/clusters/{owner}/{cluster}` (an organization or user slug and its hub's name). */
export const HubPath = z.object({ owner: p.login, cluster: p.segment });
export const HUB_PREFIX = '/clusters/:owner/:cluster';

async function isSiteAdmin(ctx: EdgeContext): Promise<boolean> {
  const { allowed } = await ctx.backends.authz.authz.checkPermission({ userId: ctx.caller!.id, permission: 'admin:site', objectId: 0 });
  return allowed;
}

/**
 * The owner account of the path and the caller's rights on it. An organization the caller may not see (a
 * private one to a non-member) is 404, like an unknown owner, so its existence does not leak; one the caller
 * sees but is not a member of is 403 (members and site admins pass `access:org`). A user account is open to
 * that user and to site admins; any other caller gets 403 (user accounts are public, their existence is not
 * a secret).
 */
async function ownerOf(owner: string, ctx: EdgeContext): Promise<{ ownerType: 'organization' | 'user'; ownerId: number }> {
  const caller = ctx.caller!;
  try {
    const org = await ctx.backends.orgsTeams.organizations.getOrg({ name: owner, viewerId: caller.id });
    const { allowed } = await ctx.backends.authz.authz.checkPermission({ userId: caller.id, permission: 'access:org', objectId: org.id });
    if (!allowed) throw new NotAllowedError(`you are not a member of organization ${org.username}`);
    return { ownerType: 'organization', ownerId: org.id };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const user = await ctx.backends.orgsTeams.identity.getUser({ id: 0, login: owner }).catch((e: unknown) => {
    throw e instanceof NotFoundError ? new NotFoundError(`no organization or user named ${owner.slice(0, 80)}`) : e;
  });
  if (user.id !== caller.id && !(await isSiteAdmin(ctx))) throw new NotAllowedError(`clusters of user ${user.login} are theirs alone`);
  return { ownerType: 'user', ownerId: user.id };
}

/**
 * The hub `{cluster}` of `{owner}` with the caller's right on it: `view` on `cluster:<uid>` to read (the owner
 * organization's members), `manage` to change (its owners, or the owning user), site admins either way. The
 * owner is checked first, so a caller without rights there learns nothing of its hubs (403), and an unknown hub
 * of an owner the caller may act for is 404.
 */
function hubTarget(relation: 'view' | 'manage'): Target<'cluster', clustersV1.Cluster, z.output<typeof HubPath>> {
  return {
    type: 'cluster',
    describe:
      relation === 'view'
        ? 'hub `{cluster}` of `{owner}`: access to the owner (organization members, the user) and view on the hub; site admins'
        : 'hub `{cluster}` of `{owner}`: access to the owner and manage on the hub (organization owners, the user); site admins',
    async resolve({ owner, cluster }, ctx) {
      const account = await ownerOf(owner, ctx);
      const hub = await ctx.backends.clusters.clusters.getHub({ ...account, name: cluster });
      const { allowed } = await ctx.backends.authz.authz.check({
        tuple: { user: `user:${ctx.caller!.id}`, relation, object: `cluster:${hub.uid}` },
        contextualTuples: [],
      });
      if (!allowed && !(await isSiteAdmin(ctx))) {
        throw new NotAllowedError(relation === 'view' ? `you may not see cluster ${hub.name}` : `you may not manage cluster ${hub.name}`);
      }
      return hub;
    },
    id: (hub) => hub.id,
  };
}

/** How the route table names the target's checks (they are made while resolving it, before the body is read). */
export const HUB_READ_CHECKS = [
  'the owner: an organization the caller is a member of (a private one it cannot see is 404), the user itself; then view on the hub `cluster:<uid>`; site admins pass both',
];
export const HUB_MANAGE_CHECKS = [
  'the owner: an organization the caller is a member of (a private one it cannot see is 404), the user itself; then manage on the hub `cluster:<uid>` (organization owners, the owning user); site admins pass both',
];

/** Reads: view on the hub. */
export const hubToRead = hubTarget('view');
/** Changes: manage on the hub. */
export const hubToManage = hubTarget('manage');
