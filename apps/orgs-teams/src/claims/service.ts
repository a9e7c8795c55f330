import type { Database, Outbox } from '@platform/db';
import { orgClaimsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import { OrgClaims } from './claims';

/** The OrgClaimsService methods that change nothing; every other one is announced (changes.ts). */
export const ORG_CLAIMS_READS: readonly (keyof typeof orgClaimsV1.OrgClaimsServiceService)[] = ['oldestClaimable', 'checkClaimable'];

/** The OrgClaimsService RPCs. */
export function orgClaimsService(db: Database, outbox: Outbox): ServiceBinding<typeof orgClaimsV1.OrgClaimsServiceService> {
  const claims = new OrgClaims(db, outbox);
  return bindService(orgClaimsV1.OrgClaimsServiceService, {
    createClaim: (req) => claims.create(req),
    claimOrg: (req, ctx) => claims.claim(req.claimId, req.userId, ctx),
    oldestClaimable: () => claims.oldestClaimable(),
    checkClaimable: (req) => claims.check(req.claimId),
    markClaimable: (req) => claims.flag(req.claimId),
  });
}
