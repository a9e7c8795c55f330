import { z } from 'zod';
import * as p from '../../params';
import { sectionRoutes } from '../../route';
import { OrganizationJson, orgJson } from '../identity/presenters';

const route = sectionRoutes({ tag: 'Organizations', backend: 'orgs-teams' });

/**
 * Standalone-organization claims. They come before the `/orgs/{orgname}` routes, so that
 * `/orgs/claim/` is never read as an organization named "claim".
 */
export const claimsRoutes = [
  route({
    method: 'patch',
    scope: 'write:organization',
    path: '/orgs/claim/:claimID',
    summary: 'Claim a standalone organization: ownership moves to the caller',
    auth: 'token',
    gate: 'hosted',
    params: z.object({ claimID: p.segment }),
    response: { status: 200, schema: OrganizationJson },
    async handle({ params }, { backends, kept, caller }) {
      const claimed = await backends.orgsTeams.claims.claimOrg({ claimId: params.claimID, userId: caller.id });
      return { body: orgJson(await kept.orgsTeams.organizations.getOrg({ name: claimed.orgName, viewerId: caller.id })) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/claim',
    summary: 'The oldest claimable standalone organization (site admin)',
    auth: 'token',
    gate: 'marketplace-or-dev',
    requires: [{ on: 'site', permission: 'admin:site' }],
    response: { status: 200, schema: z.object({ isClaimable: z.boolean(), claimID: z.string() }).meta({ id: 'OrgClaimableCheck' }) },
    async handle(_input, { kept }) {
      const res = await kept.orgsTeams.claims.oldestClaimable({});
      return { body: { isClaimable: res.isClaimable, claimID: res.claimId } };
    },
  }),
];
