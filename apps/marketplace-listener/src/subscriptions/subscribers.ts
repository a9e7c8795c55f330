import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError } from '@platform/errors';
import { contractsV1, orgClaimsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type CallOptions } from '@platform/service-kit';

/** What a binding provisions for a subscriber. */
export interface ProvisionRequest {
  marketplace: string;
  subscriptionId: string;
  product: string;
  /** The contract's name: the marketplace, the plan and the subscription. */
  contractName: string;
  /** Seconds the claimable check answers 429 after the binding. */
  backoffSeconds: number;
  /** The marketplace already reported the deployment running: the claim is claimable at once. */
  flagged: boolean;
}

export interface Provisioned {
  subscriberId: number;
  requesterId: number;
  claimId: string;
  contractIds: number[];
}

/**
 * The other services' part of a subscription: a standalone organization for the subscriber with its claim
 * (orgs-teams) and a contract for it (contracts-licensing). Every method is idempotent, since the outbox
 * may apply it again after a crash: the organization's name comes from the subscription, the claim is asked
 * `if_absent`, and a contract of the same name and product is reused.
 */
export interface SubscriberDirectory {
  provision(req: ProvisionRequest, call?: CallOptions): Promise<Provisioned>;
  /** Takes a failed provisioning back: the organization and its contracts go; absent ones are fine. */
  deprovision(req: Pick<ProvisionRequest, 'marketplace' | 'subscriptionId'>, call?: CallOptions): Promise<void>;
  revokeContracts(contractIds: number[], actor: string, call?: CallOptions): Promise<void>;
  flagClaim(claimId: string, call?: CallOptions): Promise<void>;
  /** Whether contracts-licensing' catalog has the product. */
  isProduct(product: string): Promise<boolean>;
  checkClaim(claimId: string): Promise<{ isClaimable: boolean; claimId: string }>;
  close(): void;
}

/** The standalone organization's slug: stable per subscription, so a retried binding finds the same one. */
export function standaloneOrgName(marketplace: string, subscriptionId: string): string {
  const digest = createHash('sha256').update(`${marketplace}\n${subscriptionId}`).digest('hex').slice(0, 20);
  return `${marketplace.toLowerCase()}-${digest}`;
}

/** The actor contracts record for changes a marketplace made. */
export const actorOf = (marketplace: string) => `marketplace:${marketplace}`;

const ignore = (kind: new (...args: any[]) => Error) => (err: unknown) => {
  if (!(err instanceof kind)) throw err;
  return undefined;
};

/** The directory over orgs-teams and contracts-licensing' gRPC APIs. */
export function grpcSubscriberDirectory(opts: {
  orgsTeams: string;
  contracts: string;
  adminLogin: string;
  contractDays: number;
}): SubscriberDirectory {
  const clientOpts = (name: string) => ({ name, deadlineMs: 10_000 });
  const identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, opts.orgsTeams, clientOpts('orgs-teams'));
  const orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, opts.orgsTeams, clientOpts('orgs-teams'));
  const claims = createClient(orgClaimsV1.OrgClaimsServiceService, opts.orgsTeams, clientOpts('orgs-teams'));
  const contracts = createClient(contractsV1.ContractsServiceService, opts.contracts, clientOpts('contracts-licensing'));
  const admin = async (call?: CallOptions) => identity.getUser({ id: 0, login: opts.adminLogin }, call);
  const orgNamed = async (name: string, viewerId: number, call?: CallOptions) =>
    orgs.getOrg({ name, viewerId }, call).catch(ignore(NotFoundError));

  return {
    async provision(req, call) {
      const requester = await admin(call);
      const name = standaloneOrgName(req.marketplace, req.subscriptionId);
      const org =
        (await orgs
          .createOrg(
            {
              creatorId: requester.id,
              username: name,
              fullName: `${req.marketplace} subscription ${req.subscriptionId}`.slice(0, 100),
              description: 'Standalone organization of a marketplace subscriber, waiting to be claimed',
              website: '',
              location: '',
              orgType: '',
              visibility: 'private',
              managerEndpoint: '',
            },
            call,
          )
          .catch(ignore(ConflictError))) ?? (await orgNamed(name, requester.id, call));
      if (!org) throw new NotFoundError(`the standalone organization ${name} could not be made`);
      const claim = await claims.createClaim({ orgId: org.id, backoffSeconds: req.backoffSeconds, ifAbsent: true }, call);
      if (req.flagged) await claims.markClaimable({ claimId: claim.claimId }, call);
      const owned = await contracts.listContracts(
        { ownerId: org.id, activeOnly: false, offlineOnly: false, boundTo: '', notBoundTo: '' },
        call,
      );
      let mine = owned.contracts.filter((c) => c.product === req.product && c.name === req.contractName && !c.revoked);
      if (mine.length === 0) {
        const now = Math.floor(Date.now() / 1000);
        const created = await contracts.createContracts(
          {
            ownerId: org.id,
            ownerLogin: org.username,
            ownerType: 'organization',
            products: [req.product],
            actor: actorOf(req.marketplace),
            fields: {
              name: req.contractName,
              features: [],
              featuresGiven: false,
              startUnix: now,
              endUnix: now + opts.contractDays * 86_400,
            },
          },
          call,
        );
        mine = created.contracts;
      }
      return { subscriberId: org.id, requesterId: requester.id, claimId: claim.claimId, contractIds: mine.map((c) => c.id) };
    },

    async deprovision(req, call) {
      const requester = await admin(call);
      const org = await orgNamed(standaloneOrgName(req.marketplace, req.subscriptionId), requester.id, call);
      if (!org) return;
      const owned = await contracts.listContracts(
        { ownerId: org.id, activeOnly: false, offlineOnly: false, boundTo: '', notBoundTo: '' },
        call,
      );
      for (const c of owned.contracts) {
        await contracts.deleteContract({ id: c.id, ownerId: org.id, actor: actorOf(req.marketplace) }, call).catch(ignore(NotFoundError));
      }
      await orgs.deleteOrg({ orgId: org.id, requesterId: requester.id }, call).catch(ignore(NotFoundError));
    },

    async revokeContracts(contractIds, actor, call) {
      for (const id of contractIds) await contracts.revokeContract({ id, ownerId: 0, actor }, call).catch(ignore(NotFoundError));
    },

    async flagClaim(claimId, call) {
      await claims.markClaimable({ claimId }, call).catch(ignore(NotFoundError));
    },

    async isProduct(product) {
      const catalog = await contracts.availableProducts({});
      return Object.hasOwn(JSON.parse(catalog.catalogJson || '{}'), product);
    },

    async checkClaim(claimId) {
      return claims.checkClaimable({ claimId });
    },

    close() {
      for (const c of [identity, orgs, claims, contracts]) c.close();
    },
  };
}
