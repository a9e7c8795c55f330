import { z } from 'zod';
import { InputError, NotAllowedError, NotFoundError, quote } from '@platform/errors';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { PAGE_HEADERS, pageHeaders, pageOf, Paging } from '../../paging';
import * as p from '../../params';
import { recordedWith } from '../../audit';
import { sectionRoutes, type EdgeContext, type Requirement, type Route } from '../../route';
import { takenNameIs422 } from '../../gitea';
import { orgInPath } from '../../targets';
import { OrganizationJson, orgJson, UserJson, userJsonFor } from '../identity/presenters';
import { ProfileJson, profileJson } from './presenters';
import { webUrl } from '../../web-url';

const route = sectionRoutes({ tag: 'Organizations', backend: 'orgs-teams' });

// Organizations, members and public members (avatars, tokens and claims have their own
// files in this folder). Over-long texts are 422 (docs/limits.md).

const OrgFields = {
  full_name: z.string().max(L.fullName).optional(),
  description: z.string().max(L.description).optional(),
  website: webUrl(L.website, "The organization's website").optional(),
  location: z.string().max(L.location).optional(),
  /** public | limited | private; unknown values are 400 from the service. */
  orgType: z.string().max(L.choice).optional(),
  managerManagementClusterEndPoint: webUrl(L.website, 'The multi-cluster-manager endpoint').optional(),
  visibility: z.string().max(L.choice).optional(),
  /** The contact address; empty for none. Gitea answers a malformed one 422. */
  email: z
    .string()
    .max(L.email)
    .refine((v) => v === '' || z.email().safeParse(v).success, 'must be an email address')
    .optional(),
};
export const CreateOrgOption = z.object({ username: z.string().min(1).max(L.login), ...OrgFields });

/** A taken name is Gitea's 422 (docs/gitea-dialect.md), not the service's 409. */
export const TAKEN_ORG_NAME = {
  status: 422,
  description: 'when the name is taken by a user or an organization (any case), as Gitea answers',
};

/**
 * Creates an organization owned by `ownerId` (its Owners team's only member), as `POST /orgs` and the admin's create do,
 * handing the request's audit event to the write (AuditWith).
 */
export async function createOrgFor(
  { backends, audit }: Pick<EdgeContext, 'backends' | 'audit'>,
  ownerId: number,
  body: z.output<typeof CreateOrgOption>,
) {
  const created = backends.orgsTeams.organizations.createOrg({
    creatorId: ownerId,
    username: body.username,
    fullName: body.full_name ?? '',
    description: body.description ?? '',
    website: body.website ?? '',
    location: body.location ?? '',
    orgType: body.orgType ?? '',
    visibility: body.visibility ?? '',
    managerEndpoint: body.managerManagementClusterEndPoint ?? '',
    email: body.email ?? '',
    audit: audit?.event,
  });
  return recordedWith(audit, await takenNameIs422(created, 'username'));
}
const EditOrgOption = z.object(OrgFields);

const Org = z.object({ orgname: p.login });
const OrgMember = Org.extend({ username: p.login });
/** The user a member action names: `uid`, required, a positive int64 (400 otherwise). */
const Uid = z.object({ uid: p.id });

/** Users as member lists show them: emails to site admins and the user only (userJsonFor). */
const memberJson = (ctx: Pick<EdgeContext, 'caller'>) => (u: Parameters<typeof userJsonFor>[0]) => userJsonFor(u, ctx.caller);

const isCaller = (ctx: Pick<EdgeContext, 'caller'>, login: string) => ctx.caller?.login.toLowerCase() === login.toLowerCase();

const MEMBER_ACTIONS = ['private', 'public', 'remove', 'leave'] as const;

/** A site admin, who may act on anyone's membership where Gitea lets them. */
const SITE_ADMIN = { on: 'site', permission: 'admin:site' } as const;

/** A member action on the caller's own membership: `uid` is the caller's id. */
const uidIsCaller = (action: string): Requirement<'organization', { query: { uid: number } }, { caller: { id: number } }> => ({
  check: 'uid is the caller',
  holds: ({ query }, { caller }) => query.uid === caller.id,
  denied: `${action} acts on yourself: uid must be your own id`,
});

/**
 * POST /orgs/{orgname}/members/action/{action}: org members act on memberships. `private` and `public`
 * change the visibility of one's own membership, or anyone's with `admin:org`; `remove` takes another
 * member out of the organization (needs org ownership, as DELETE members/{username}); `leave` takes the
 * caller out (`uid` must be the caller).
 */
function memberAction(action: (typeof MEMBER_ACTIONS)[number]): Route {
  const own = action === 'private' || action === 'public';
  return route({
    method: 'post',
    scope: 'write:organization',
    path: `/orgs/:orgname/members/action/${action}`,
    summary: `Member action ${action} (query uid)`,
    auth: 'token',
    params: Org,
    query: Uid,
    target: orgInPath,
    requires: [{ on: 'target', permission: action === 'remove' ? 'manage_owners:org' : 'member:org' }],
    // Anyone's visibility with admin:org, one's own with membership; leaving is one's own.
    checks: own
      ? [{ anyOf: [uidIsCaller(action), { on: 'target', permission: 'admin:org' }] }]
      : action === 'leave'
        ? [uidIsCaller(action)]
        : [],
    response: { status: 200 },
    async handle({ query }, ctx) {
      const { organizations } = ctx.backends.orgsTeams;
      if (own) {
        await organizations.setMemberVisibility({ orgId: ctx.target.id, userId: query.uid, public: action === 'public' });
      } else {
        await organizations.removeMember({ orgId: ctx.target.id, userId: query.uid, username: '' });
      }
      return {};
    },
  });
}

/**
 * A member list, one page (`page`, `limit`) at a time: every member for those who may see private members, else
 * the public ones (publicOnly: always).
 */
function memberList(path: string, summary: string, publicOnly: boolean): Route {
  return route({
    method: 'get',
    scope: 'read:organization',
    path,
    summary,
    auth: 'public',
    params: Org,
    query: Paging,
    target: orgInPath,
    response: { status: 200, schema: z.array(UserJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const viewerId = ctx.caller?.id ?? 0;
      const page = pageOf(query);
      const { members, total } = await ctx.kept.orgsTeams.organizations.listMembers({
        orgId: ctx.target.id,
        viewerId,
        publicOnly,
        page,
      });
      return { body: members.map(memberJson(ctx)), headers: pageHeaders(ctx, page, total) };
    },
  });
}

/** A page of organizations, with the paging headers. */
async function orgPage(
  ctx: EdgeContext,
  page: { page: number; limit: number },
  list: Promise<{ orgs: Parameters<typeof orgJson>[0][]; total: number }>,
) {
  const { orgs, total } = await list;
  return { body: orgs.map(orgJson), headers: pageHeaders(ctx, page, total) };
}

/** Gitea's OrganizationPermissions. */
const OrganizationPermissionsJson = z
  .object({
    is_owner: z.boolean(),
    is_admin: z.boolean(),
    can_write: z.boolean(),
    can_read: z.boolean(),
    can_create_repository: z.boolean(),
  })
  .meta({ id: 'OrganizationPermissions' });

/**
 * Listing organizations, as Gitea's clients page through them. They come before the `/orgs/{orgname}` routes and
 * live under `/orgs`, `/user` and `/users` (the caller's and another user's organizations).
 */
export const orgListRoutes: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs',
    summary:
      'Organizations the caller may see, by name: public ones to everyone, limited ones to signed-in users, private ones to members and site admins',
    auth: 'public',
    query: Paging,
    response: { status: 200, schema: z.array(OrganizationJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      return orgPage(ctx, page, ctx.kept.orgsTeams.organizations.listOrgs({ viewerId: ctx.caller?.id ?? 0, page }));
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/orgs',
    summary: "The caller's organizations, by name",
    auth: 'token',
    query: Paging,
    response: { status: 200, schema: z.array(OrganizationJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      return orgPage(
        ctx,
        page,
        ctx.kept.orgsTeams.organizations.listUserOrgs({ userId: ctx.caller.id, username: '', viewerId: ctx.caller.id, page }),
      );
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/users/:username/orgs',
    summary:
      "A user's organizations as the caller may see them: all of them to the user and site admins, else those visible to the caller where the membership is public or the caller is a member too",
    auth: 'public',
    params: z.object({ username: p.login }),
    query: Paging,
    response: { status: 200, schema: z.array(OrganizationJson), headers: PAGE_HEADERS },
    async handle({ params, query }, ctx) {
      const page = pageOf(query);
      const list = ctx.kept.orgsTeams.organizations.listUserOrgs({
        userId: 0,
        username: params.username,
        viewerId: ctx.caller?.id ?? 0,
        page,
      });
      return orgPage(ctx, page, list);
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/users/:username/orgs/:orgname/permissions',
    summary: "What a user may do in an organization, from the permissions of their teams (Gitea's OrganizationPermissions)",
    auth: 'token',
    params: OrgMember,
    target: orgInPath,
    // What teams give their members is for those who may see the teams; one's own is always one's own.
    checks: [
      {
        anyOf: [
          { check: '`{username}` is the caller', holds: ({ params }, ctx) => isCaller(ctx, params.username), denied: 'not the caller' },
          {
            on: 'target',
            permission: 'list:team',
            denied: "you do not have the list:team permission, needed to read another user's permissions",
          },
        ],
      },
    ],
    response: { status: 200, schema: OrganizationPermissionsJson },
    async handle({ params }, ctx) {
      const perms = await ctx.kept.orgsTeams.organizations.getOrgPermissions({
        orgId: ctx.target.id,
        userId: 0,
        username: params.username,
      });
      return {
        body: {
          is_owner: perms.isOwner,
          is_admin: perms.isAdmin,
          can_write: perms.canWrite,
          can_read: perms.canRead,
          can_create_repository: perms.canCreateRepository,
        },
      };
    },
  }),
];

export const organizationRoutes: Route[] = [
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs',
    summary: 'Create an organization; the caller becomes its owner',
    auth: 'token',
    requires: [
      {
        // A site admin's allow_create_organization: false (PATCH /admin/users); site admins always may, as in Gitea.
        check: 'the caller may create organizations',
        holds: (_input, { caller }) => caller.isAdmin || caller.allowCreateOrganization,
        denied: 'you are not allowed to create organizations',
      },
    ],
    body: { schema: CreateOrgOption },
    response: { status: 201, schema: OrganizationJson },
    errors: [TAKEN_ORG_NAME],
    async handle({ body }, ctx) {
      return { body: orgJson(await createOrgFor(ctx, ctx.caller.id, body)) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/admin/users/:username/orgs',
    summary: 'Create an organization for a user (site admin): the user, not the admin, is its owner (Gitea’s adminCreateOrg)',
    auth: 'token',
    params: z.object({ username: p.login }),
    requires: [SITE_ADMIN],
    body: { schema: CreateOrgOption },
    response: { status: 201, schema: OrganizationJson },
    errors: [
      { status: 404, description: 'when there is no user of that name (an organization is none)' },
      { status: 403, description: 'when the user may not create organizations (allow_create_organization: false), as Gitea refuses it' },
      TAKEN_ORG_NAME,
    ],
    async handle({ params, body }, ctx) {
      const owner = await ctx.kept.orgsTeams.identity.getUser({ id: 0, login: params.username });
      // Gitea's CreateOrganization asks the owner's CanCreateOrganization, whoever makes it.
      if (!owner.isAdmin && !owner.allowCreateOrganization)
        throw new NotAllowedError(`user ${owner.login} is not allowed to create organizations`);
      return { body: orgJson(await createOrgFor(ctx, owner.id, body)) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname',
    summary: 'An organization (404 when the caller cannot see it)',
    auth: 'public',
    params: Org,
    target: orgInPath,
    response: { status: 200, schema: OrganizationJson },
    async handle(_input, { target }) {
      return { body: orgJson(target) };
    },
  }),
  route({
    method: 'patch',
    scope: 'write:organization',
    path: '/orgs/:orgname',
    summary: 'Edit an organization',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'edit:org' }],
    body: { schema: EditOrgOption },
    response: { status: 200, schema: OrganizationJson },
    async handle({ body }, { backends, target, audit }) {
      const org = await backends.orgsTeams.organizations.editOrg({
        orgId: target.id,
        fullName: body.full_name,
        description: body.description,
        website: body.website,
        location: body.location,
        orgType: body.orgType,
        visibility: body.visibility,
        managerEndpoint: body.managerManagementClusterEndPoint,
        email: body.email,
        audit: audit?.event,
      });
      return { body: orgJson(recordedWith(audit, org)) };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/orgs/:orgname',
    summary: 'Delete an organization (its last owner, or a site admin)',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'delete:org' }],
    errors: [
      {
        status: 403,
        description: 'from orgs-teams for an owner while other owners remain (only the last owner, or a site admin, deletes)',
      },
    ],
    response: { status: 204 },
    async handle(_input, { backends, caller, target, forgetTokens }) {
      await backends.orgsTeams.organizations.deleteOrg({ orgId: target.id, requesterId: caller.id });
      // Its system admin's tokens went with it.
      forgetTokens();
      return {};
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/user/:username',
    summary: 'Profile of an active user, in the context of an organization',
    auth: 'token',
    params: OrgMember,
    target: orgInPath,
    response: { status: 200, schema: ProfileJson },
    async handle({ params }, { kept, caller }) {
      const user = await kept.orgsTeams.identity.getUser({ id: 0, login: params.username }).catch((err) => {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      });
      if (!user || !user.active) throw new InputError(`${quote(params.username)} is not an active user`);
      return { body: profileJson(user, caller) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/is-owner',
    summary: 'Whether the caller owns the organization: 200, else 403',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', relation: 'owner', denied: (_input, { target }) => `you are not an owner of ${target.username}` }],
    response: { status: 200 },
    async handle() {
      return {};
    },
  }),
  memberList('/orgs/:orgname/members', 'Members (only public ones for non-members and anonymous callers)', false),
  ...MEMBER_ACTIONS.map(memberAction),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/members/action/:action',
    summary: 'Any other member action: 400',
    auth: 'token',
    params: Org.extend({ action: p.segment }),
    response: { status: 200 },
    async handle({ params }) {
      throw new InputError(`unknown member action ${quote(params.action)}; use one of ${MEMBER_ACTIONS.join(', ')}`);
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/members/:username',
    summary: 'Membership check: 204 member, 404 not; non-members are redirected to the public-members check',
    auth: 'public',
    params: OrgMember,
    target: orgInPath,
    response: {
      status: 204,
      description: 'a member',
      also: [{ status: 302, description: 'the caller may not see private members: see /orgs/{orgname}/public_members/{username}' }],
    },
    async handle({ params }, ctx) {
      const m = await ctx.kept.orgsTeams.organizations.getMembership({
        orgId: ctx.target.id,
        viewerId: ctx.caller?.id ?? 0,
        username: params.username,
      });
      if (m.viewerSeesPrivate || isCaller(ctx, params.username)) {
        if (!m.member) throw new NotFoundError(`${quote(params.username)} is not a member of ${ctx.target.username}`);
        return {};
      }
      const location = `/api/v1/orgs/${encodeURIComponent(ctx.target.username)}/public_members/${encodeURIComponent(params.username)}`;
      return { status: 302, headers: { location } };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/orgs/:orgname/members/:username',
    summary: 'Remove a member from every team of the organization',
    auth: 'token',
    params: OrgMember,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'manage_owners:org' }],
    response: { status: 204 },
    async handle({ params }, { backends, target }) {
      await backends.orgsTeams.organizations.removeMember({ orgId: target.id, userId: 0, username: params.username });
      return {};
    },
  }),
  memberList('/orgs/:orgname/public_members', 'Public members', true),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/public_members/:username',
    summary: 'Public-membership check: 204 public member, 404 not',
    auth: 'public',
    params: OrgMember,
    target: orgInPath,
    response: { status: 204, description: 'a public member' },
    async handle({ params }, ctx) {
      const m = await ctx.kept.orgsTeams.organizations.getMembership({
        orgId: ctx.target.id,
        viewerId: ctx.caller?.id ?? 0,
        username: params.username,
      });
      if (!m.public) throw new NotFoundError(`${quote(params.username)} is not a public member of ${ctx.target.username}`);
      return {};
    },
  }),
  // A member makes their own membership public or private; a site admin anyone's, as Gitea lets them
  // (reqOrgMembership lets site admins through, and PublicizeMember/ConcealMember act on another for them only).
  ...(['put', 'delete'] as const).map((method) =>
    route({
      method,
      scope: 'write:organization',
      path: '/orgs/:orgname/public_members/:username',
      summary:
        method === 'put'
          ? "Make your own membership public (a site admin: anyone's)"
          : "Make your own membership private (a site admin: anyone's)",
      auth: 'token',
      params: OrgMember,
      target: orgInPath,
      requires: [{ anyOf: [{ on: 'target', permission: 'member:org' }, SITE_ADMIN], denied: 'you do not have the member:org permission' }],
      checks: [
        {
          anyOf: [
            {
              check: '`{username}` is the caller',
              holds: ({ params }, { caller }) => isCaller({ caller }, params.username),
              denied: 'not the caller',
            },
            SITE_ADMIN,
          ],
          denied: 'you can only change your own public membership',
        },
      ],
      response: { status: 204 },
      errors: [{ status: 404, description: 'when `{username}` is no user, or not a member' }],
      async handle({ params }, { backends, kept, caller, target }) {
        const userId = isCaller({ caller }, params.username)
          ? caller.id
          : (await kept.orgsTeams.identity.getUser({ id: 0, login: params.username })).id;
        await backends.orgsTeams.organizations.setMemberVisibility({ orgId: target.id, userId, public: method === 'put' });
        return {};
      },
    }),
  ),
];
