import { z } from 'zod';
import * as p from '../../params';
import { defineRoute } from '../../route';
import { OrganizationJson, orgJson } from './presenters';

/**
 * Standalone-organization claims (spec 4.13). They come before the `/orgs/{orgname}` routes, so that
 * `/orgs/claim/` is never read as an organization named "claim".
 */
export const claimsRoutes = [
  defineRoute({
    method: 'patch',
    path: '/orgs/claim/:claimID',
    summary: 'Claim a standalone organization: ownership moves to the caller',
    section: '4.13',
    auth: 'token',
    gate: 'hosted',
    backend: 'orgs-teams',
    params: z.object({ claimID: p.segment }),
    response: { status: 200, schema: OrganizationJson },
    async handle({ params }, { backends, caller }) {
      const claimed = await backends.orgsTeams.claims.claimOrg({ claimId: params.claimID, userId: caller.id });
      return { body: orgJson(await backends.orgsTeams.organizations.getOrg({ name: claimed.orgName, viewerId: caller.id })) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/orgs/claim',
    summary: 'The oldest claimable standalone organization (site admin)',
    section: '4.13',
    auth: 'token',
    gate: 'marketplace-or-dev',
    backend: 'orgs-teams',
    requires: [{ on: 'site', permission: 'admin:site' }],
    response: { status: 200, schema: z.object({ isClaimable: z.boolean(), claimID: z.string() }).meta({ id: 'OrgClaimableCheck' }) },
    async handle(_input, { backends }) {
      const res = await backends.orgsTeams.claims.oldestClaimable({});
      return { body: { isClaimable: res.isClaimable, claimID: res.claimId } };
    },
  }),
];
