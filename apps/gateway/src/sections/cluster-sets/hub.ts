import { z } from 'zod';
import { NotFoundError } from '@platform/errors';
import type { clustersV1 } from '@platform/proto';
import * as p from '../../params';
import type { EdgeContext, ObjectResolver, Requirement, Target } from '../../route';

/** The path of every cluster-set row: `/clusters/{owner}/{cluster}` (an organization or user slug and its hub's name). */
export const HubPath = z.object({ owner: p.login, cluster: p.segment });
export const HUB_PREFIX = '/clusters/:owner/:cluster';

/** The owner account of a hub path: an organization the caller can see, else a user. */
interface Owner {
  type: 'organization' | 'user';
  id: number;
  name: string;
}

// One lookup of the owner per request: the requirement on it and the hub's resolution both need it.
const owners = new WeakMap<object, Promise<Owner>>();

/**
 * The owner account `{owner}`: an organization the caller can see, else a user account. An organization the caller
 * may not see (a private one to a non-member) is looked up as a user, so it is 404 like an unknown owner and its
 * existence does not leak (user accounts are public, their existence is not a secret).
 */
function ownerOf(owner: string, ctx: EdgeContext): Promise<Owner> {
  let found = owners.get(ctx.req);
  if (!found) owners.set(ctx.req, (found = lookUpOwner(owner, ctx)));
  return found;
}

async function lookUpOwner(owner: string, ctx: EdgeContext): Promise<Owner> {
  try {
    const org = await ctx.kept.orgsTeams.organizations.getOrg({ name: owner, viewerId: ctx.caller!.id });
    return { type: 'organization', id: org.id, name: org.username };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const user = await ctx.kept.orgsTeams.identity.getUser({ id: 0, login: owner }).catch((e: unknown) => {
    throw e instanceof NotFoundError ? new NotFoundError(`no organization or user named ${owner.slice(0, 80)}`) : e;
  });
  return { type: 'user', id: user.id, name: user.login };
}

type Params = z.output<typeof HubPath>;

/** A hub as its routes use it: what names it, which does not change while it exists (its state is asked for anew). */
export type HubRef = Pick<clustersV1.Cluster, 'id' | 'uid' | 'name'>;
type HubRequirement = Requirement<'cluster', { params: Params }, EdgeContext & { target: HubRef }>;

/** The owner organization, for `access:org` on it; none when the owner is a user account. */
const ownerOrganization: ObjectResolver<{ params: Params }, EdgeContext> = {
  describe: 'the owner organization `{owner}`',
  async resolve({ params }, ctx) {
    const owner = await ownerOf(params.owner, ctx);
    return owner.type === 'organization' ? { type: 'organization', id: owner.id } : undefined;
  },
};

/**
 * Access to the owner, checked before the hub is looked up, so a caller without it learns nothing of its hubs (403)
 * and an unknown hub of an owner the caller may act for is 404: an organization's members (and site admins, who
 * pass `access:org`), a user account's user and site admins.
 */
const OWNER_ACCESS: HubRequirement = {
  anyOf: [
    { on: ownerOrganization, permission: 'access:org' },
    {
      check: 'the owner `{owner}` is the caller',
      holds: async ({ params }, ctx) => {
        const owner = await ownerOf(params.owner, ctx);
        return owner.type === 'user' && owner.id === ctx.caller!.id;
      },
      denied: ({ params }) => `clusters of user ${params.owner} are theirs alone`,
    },
    { on: 'site', permission: 'admin:site' },
  ],
  denied: async ({ params }, ctx) => {
    const owner = await ownerOf(params.owner, ctx);
    return owner.type === 'organization'
      ? `you are not a member of organization ${owner.name}`
      : `clusters of user ${owner.name} are theirs alone`;
  },
};

/** `view` (reads: the owner organization's members) or `manage` (changes: its owners, or the owning user) on the hub; site admins either way. */
const onHub = (relation: 'view' | 'manage'): HubRequirement => ({
  anyOf: [
    { on: 'target', relation },
    { on: 'site', permission: 'admin:site' },
  ],
  denied: (_input, { target }) =>
    relation === 'view' ? `you may not see cluster ${target.name}` : `you may not manage cluster ${target.name}`,
});

/** The hub `{cluster}` of `{owner}`; 404 when the owner has none of that name. */
export const hubInPath: Target<'cluster', HubRef, Params> = {
  type: 'cluster',
  describe: 'hub `{cluster}` of `{owner}`',
  async resolve({ owner, cluster }, ctx) {
    const account = await ownerOf(owner, ctx);
    // Kept by the inventory's read model (@platform/clusters-client): a cluster-set route makes the one call of its
    // operation, not a lookup first.
    const hub = await ctx.kept.clusters.clusters.getHub({ ownerType: account.type, ownerId: account.id, name: cluster });
    return { id: hub.id, uid: hub.uid, name: hub.name };
  },
  id: (hub) => hub.id,
  authzId: (hub) => hub.uid,
};

/** Reads: access to the owner, then view on the hub. */
export const HUB_READ: HubRequirement[] = [OWNER_ACCESS, onHub('view')];
/** Changes: access to the owner, then manage on the hub. */
export const HUB_MANAGE: HubRequirement[] = [OWNER_ACCESS, onHub('manage')];
