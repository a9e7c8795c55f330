import type { Database } from '@platform/db';
import { orgClaimsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { OrgAuthz } from '../orgs/org-authz';
import { OrgClaims } from './claims';

/** The OrgClaimsService RPCs. */
export function orgClaimsService(db: Database, authz: OrgAuthz): ServiceBinding<typeof orgClaimsV1.OrgClaimsServiceService> {
  const claims = new OrgClaims(db, authz);
  return bindService(orgClaimsV1.OrgClaimsServiceService, {
    createClaim: (req) => claims.create(req.orgId),
    claimOrg: (req, ctx) => claims.claim(req.claimId, req.userId, ctx.requestId, ctx.log),
    oldestClaimable: () => claims.oldestClaimable(),
  });
}
