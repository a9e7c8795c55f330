import { ConflictError, InputError, NotFoundError, TooManyRequestsError, UnavailableError } from '@platform/errors';
import type { ProvisionRequest, SubscriberDirectory } from '../src/subscriptions/subscribers';

/** A stand-in for orgs-teams and contracts-licensing that records what it was asked and fails on demand. */
export interface FakeDirectory extends SubscriberDirectory {
  provisioned: ProvisionRequest[];
  deprovisioned: string[];
  revoked: number[];
  flagged: string[];
  /** Claims by id: 'open', 'backoff' (429) or 'claimed'. */
  claims: Map<string, 'open' | 'backoff' | 'claimed'>;
  /**
   * How the next provision fails, after it "made" the organization, which must be taken back: a service down
   * (unavailable), or contracts-licensing refusing the contract (refused, a permanent failure).
   */
  failNextProvision: false | 'unavailable' | 'refused';
  /** Makes provision wait until released, to hold a binding between commit and provisioning. */
  gate?: Promise<void>;
}

export function fakeDirectory(): FakeDirectory {
  let nextContract = 100;
  const orgs = new Map<string, number>();
  const dir: FakeDirectory = {
    provisioned: [],
    deprovisioned: [],
    revoked: [],
    flagged: [],
    claims: new Map(),
    failNextProvision: false,
    async provision(req) {
      await dir.gate;
      const key = `${req.marketplace}/${req.subscriptionId}`;
      if (!orgs.has(key)) orgs.set(key, 1000 + orgs.size);
      const failure = dir.failNextProvision;
      dir.failNextProvision = false;
      if (failure === 'unavailable') throw new UnavailableError('contracts-licensing is unavailable');
      if (failure === 'refused') throw new InputError('end: the contract period is invalid');
      dir.provisioned.push(req);
      const claimId = `00000000-0000-4000-8000-${String(orgs.get(key)).padStart(12, '0')}`;
      if (req.flagged) dir.claims.set(claimId, 'open');
      else if (!dir.claims.has(claimId)) dir.claims.set(claimId, 'backoff');
      return { subscriberId: orgs.get(key)!, requesterId: 1, claimId, contractIds: [nextContract++] };
    },
    async deprovision(req) {
      orgs.delete(`${req.marketplace}/${req.subscriptionId}`);
      dir.deprovisioned.push(`${req.marketplace}/${req.subscriptionId}`);
    },
    async revokeContracts(ids) {
      dir.revoked.push(...ids);
    },
    async flagClaim(claimId) {
      dir.flagged.push(claimId);
      if (dir.claims.get(claimId) === 'backoff') dir.claims.set(claimId, 'open');
    },
    async isProduct(product) {
      return ['productdb', 'productbackup'].includes(product);
    },
    async checkClaim(claimId) {
      const state = dir.claims.get(claimId);
      if (!state) throw new NotFoundError(`claim ${claimId} does not exist`);
      if (state === 'claimed') throw new ConflictError(`claim ${claimId} has already been claimed`);
      if (state === 'backoff') throw new TooManyRequestsError(`claim ${claimId} is not claimable yet; retry later`, 120);
      return { isClaimable: true, claimId };
    },
    close() {},
  };
  return dir;
}
