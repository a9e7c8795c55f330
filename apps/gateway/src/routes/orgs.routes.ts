import { z } from 'zod';
import { InputError, NotAllowedError, NotFoundError, quote } from '@platform/errors';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { orgJson, profileJson } from '../presenters-orgs';
import { userJson } from '../presenters';
import type { Route, RouteContext } from '../route';
import { parseBody, parseId } from '../validation';
import { orgFromPath, orgOfPath, requirePermission } from './org-path';

// Over-long texts are 422 like any other malformed organization body; limits: docs/limits.md.
const OrgFields = {
  full_name: z.string().max(L.fullName).optional(),
  description: z.string().max(L.description).optional(),
  website: z.string().max(L.website).optional(),
  location: z.string().max(L.location).optional(),
  /** public | limited | private; unknown values are 400 from the service. */
  orgType: z.string().max(L.choice).optional(),
  managerManagementClusterEndPoint: z.string().max(L.endpoint).optional(),
  visibility: z.string().max(L.choice).optional(),
};
const CreateOrgOption = z.object({ username: z.string().min(1).max(L.login), ...OrgFields });
const EditOrgOption = z.object(OrgFields);

/** The user a member action names: `uid`, required, a positive int64 (400 otherwise). */
const uidOf = (req: { query: Record<string, unknown> }) => parseId(req.query.uid, 'uid');

/** Users as member lists show them; anonymous callers do not get email addresses (as in Gitea). */
const memberJson = (ctx: RouteContext) => (u: Parameters<typeof userJson>[0]) => ({ ...userJson(u), ...(!ctx.caller && { email: '' }) });

const isCaller = (ctx: RouteContext, login: string) => ctx.caller?.login.toLowerCase() === login.toLowerCase();

/** Public membership changes act on the caller only. */
function callerOnly(ctx: RouteContext, username: string): number {
  if (!isCaller(ctx, username)) throw new NotAllowedError('you can only change your own public membership');
  return ctx.caller!.id;
}

const MEMBER_ACTIONS = ['private', 'public', 'remove', 'leave'] as const;

/**
 * POST /orgs/{orgname}/members/action/{action}: org members act on memberships. `private` and `public`
 * change the visibility of one's own membership, or anyone's with `admin:org`; `remove` takes another
 * member out of the organization (needs `admin:org`); `leave` takes the caller out (`uid` must be the caller).
 */
function memberAction(action: (typeof MEMBER_ACTIONS)[number]): Route {
  return {
    method: 'post',
    path: `/orgs/:orgname/members/action/${action}`,
    summary: `Member action ${action} (query uid)`,
    auth: 'token',
    // Removing someone (owners among them) takes org ownership, as DELETE members/{username} does; the rest needs membership.
    check: { permission: action === 'remove' ? 'manage_owners:org' : 'member:org', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const uid = uidOf(req);
      const org = await orgOfPath(req, ctx);
      const self = uid === ctx.caller!.id;
      const { orgs } = ctx.backends;
      const opts = { requestId: ctx.requestId };
      switch (action) {
        case 'private':
        case 'public':
          if (!self) await requirePermission(ctx, 'admin:org', org.id);
          await orgs.setMemberVisibility({ orgId: org.id, userId: uid, public: action === 'public' }, opts);
          break;
        case 'remove':
          await orgs.removeMember({ orgId: org.id, userId: uid, username: '' }, opts);
          break;
        case 'leave':
          if (!self) throw new NotAllowedError('leave acts on yourself: uid must be your own id');
          await orgs.removeMember({ orgId: org.id, userId: uid, username: '' }, opts);
          break;
      }
      return { status: 200 };
    },
  };
}

/** Organizations, members and public members (spec section 4.13; avatars and tokens live elsewhere). */
export const orgsRoutes: Route[] = [
  {
    method: 'post',
    path: '/orgs',
    summary: 'Create an organization; the caller becomes its owner',
    auth: 'token',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const body = parseBody(CreateOrgOption, req.body);
      const org = await ctx.backends.orgs.createOrg(
        {
          creatorId: ctx.caller!.id,
          username: body.username,
          fullName: body.full_name ?? '',
          description: body.description ?? '',
          website: body.website ?? '',
          location: body.location ?? '',
          orgType: body.orgType ?? '',
          visibility: body.visibility ?? '',
          managerEndpoint: body.managerManagementClusterEndPoint ?? '',
        },
        { requestId: ctx.requestId },
      );
      return { status: 201, body: orgJson(org) };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname',
    summary: 'An organization (404 when the caller cannot see it)',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, ctx) {
      return { body: orgJson(await orgOfPath(req, ctx)) };
    },
  },
  {
    method: 'patch',
    path: '/orgs/:orgname',
    summary: 'Edit an organization',
    auth: 'token',
    check: { permission: 'edit:org', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const body = parseBody(EditOrgOption, req.body);
      const org = await ctx.backends.orgs.editOrg(
        {
          orgId: (await orgOfPath(req, ctx)).id,
          fullName: body.full_name,
          description: body.description,
          website: body.website,
          location: body.location,
          orgType: body.orgType,
          visibility: body.visibility,
          managerEndpoint: body.managerManagementClusterEndPoint,
        },
        { requestId: ctx.requestId },
      );
      return { body: orgJson(org) };
    },
  },
  {
    method: 'delete',
    path: '/orgs/:orgname',
    summary: 'Delete an organization (its last owner, or a site admin)',
    auth: 'token',
    check: { permission: 'delete:org', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      await ctx.backends.orgs.deleteOrg({ orgId: await orgFromPath(req, ctx), requesterId: ctx.caller!.id }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/user/:username',
    summary: 'Profile of an active user, in the context of an organization',
    auth: 'token',
    service: 'orgs-teams',
    async handle(req, ctx) {
      await orgOfPath(req, ctx);
      const login = String(req.params.username);
      const user = await ctx.backends['orgs-teams'].getUser({ id: 0, login }, { requestId: ctx.requestId }).catch((err) => {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      });
      if (!user || !user.active) throw new InputError(`${quote(login)} is not an active user`);
      return { body: profileJson(user) };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/is-owner',
    summary: 'Whether the caller owns the organization: 200, else 403',
    auth: 'token',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const org = await orgOfPath(req, ctx);
      const { allowed } = await ctx.backends.authz.check(
        { tuple: { user: `user:${ctx.caller!.id}`, relation: 'owner', object: `organization:${org.id}` }, contextualTuples: [] },
        { requestId: ctx.requestId },
      );
      if (!allowed) throw new NotAllowedError(`you are not an owner of ${org.username}`);
      return { status: 200 };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/members',
    summary: 'Members (only public ones for non-members and anonymous callers)',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const org = await orgOfPath(req, ctx);
      const { members } = await ctx.backends.orgs.listMembers(
        { orgId: org.id, viewerId: ctx.caller?.id ?? 0, publicOnly: false },
        { requestId: ctx.requestId },
      );
      return { body: members.map(memberJson(ctx)) };
    },
  },
  ...MEMBER_ACTIONS.map(memberAction),
  {
    method: 'post',
    path: '/orgs/:orgname/members/action/:action',
    summary: 'Any other member action: 400',
    auth: 'token',
    service: 'orgs-teams',
    async handle(req) {
      throw new InputError(`unknown member action ${quote(req.params.action)}; use one of ${MEMBER_ACTIONS.join(', ')}`);
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/members/:username',
    summary: 'Membership check: 204 member, 404 not; non-members are redirected to the public-members check',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const org = await orgOfPath(req, ctx);
      const username = String(req.params.username);
      const m = await ctx.backends.orgs.getMembership(
        { orgId: org.id, viewerId: ctx.caller?.id ?? 0, username },
        { requestId: ctx.requestId },
      );
      if (m.viewerSeesPrivate || isCaller(ctx, username)) return { status: m.member ? 204 : 404 };
      const location = `/api/v1/orgs/${encodeURIComponent(org.username)}/public_members/${encodeURIComponent(username)}`;
      return { status: 302, headers: { location } };
    },
  },
  {
    method: 'delete',
    path: '/orgs/:orgname/members/:username',
    summary: 'Remove a member from every team of the organization',
    auth: 'token',
    check: { permission: 'manage_owners:org', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const orgId = await orgFromPath(req, ctx);
      await ctx.backends.orgs.removeMember({ orgId, userId: 0, username: String(req.params.username) }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/public_members',
    summary: 'Public members',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const org = await orgOfPath(req, ctx);
      const { members } = await ctx.backends.orgs.listMembers(
        { orgId: org.id, viewerId: ctx.caller?.id ?? 0, publicOnly: true },
        { requestId: ctx.requestId },
      );
      return { body: members.map(memberJson(ctx)) };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/public_members/:username',
    summary: 'Public-membership check: 204 public member, 404 not',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const org = await orgOfPath(req, ctx);
      const m = await ctx.backends.orgs.getMembership(
        { orgId: org.id, viewerId: ctx.caller?.id ?? 0, username: String(req.params.username) },
        { requestId: ctx.requestId },
      );
      return { status: m.public ? 204 : 404 };
    },
  },
  ...(['put', 'delete'] as const).map((method): Route => ({
    method,
    path: '/orgs/:orgname/public_members/:username',
    summary: method === 'put' ? 'Make your own membership public' : 'Make your own membership private',
    auth: 'token',
    check: { permission: 'member:org', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const userId = callerOnly(ctx, String(req.params.username));
      await ctx.backends.orgs.setMemberVisibility(
        { orgId: await orgFromPath(req, ctx), userId, public: method === 'put' },
        { requestId: ctx.requestId },
      );
      return { status: 204 };
    },
  })),
];
