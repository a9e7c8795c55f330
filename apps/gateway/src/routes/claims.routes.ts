import { orgJson } from '../presenters-orgs';
import type { Route } from '../route';

/**
 * Standalone-organization claims (spec 4.13). They come before the `/orgs/{orgname}` routes, so that
 * `/orgs/claim/` is never read as an organization named "claim".
 */
export const claimsRoutes: Route[] = [
  {
    method: 'patch',
    path: '/orgs/claim/:claimID',
    summary: 'Claim a standalone organization: ownership moves to the caller',
    auth: 'token',
    gate: 'hosted',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const claimed = await ctx.backends.orgClaims.claimOrg(
        { claimId: String(req.params.claimID), userId: ctx.caller!.id },
        { requestId: ctx.requestId },
      );
      const org = await ctx.backends.orgs.getOrg({ name: claimed.orgName, viewerId: ctx.caller!.id }, { requestId: ctx.requestId });
      return { body: orgJson(org) };
    },
  },
  {
    method: 'get',
    path: '/orgs/claim',
    summary: 'The oldest claimable standalone organization (site admin)',
    auth: 'token',
    gate: 'marketplace-or-dev',
    check: { permission: 'admin:site', on: 'site' },
    service: 'orgs-teams',
    async handle(_req, ctx) {
      const res = await ctx.backends.orgClaims.oldestClaimable({}, { requestId: ctx.requestId });
      return { body: { isClaimable: res.isClaimable, claimID: res.claimId } };
    },
  },
];
