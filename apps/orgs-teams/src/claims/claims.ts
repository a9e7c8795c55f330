import { randomUUID } from 'node:crypto';
import { ConflictError, InputError, NotFoundError, TooManyRequestsError } from '@platform/errors';
import { isUniqueViolation, type Database, type Outbox } from '@platform/db';
import type { orgClaimsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { stageTuples } from '../orgs/effects';
import { MembersStore } from '../orgs/members-store';
import { OrganizationsStore } from '../orgs/organizations-store';
import { TeamsStore } from '../orgs/teams-store';
import { teamMember } from '../orgs/tuples';
import { ClaimsStore } from './claims-store';
import { isUuidAnyCase } from '@platform/proto';


/** What a claim changed, so it can be undone when the authorization tuples cannot be written. */
interface ClaimChange {
  orgId: number;
  orgName: string;
  ownerTeamId: number;
  previousOwners: number[];
  /** Previous owners who left the organization because the owner team was their only team. */
  leftOrg: number[];
  callerWasOwner: boolean;
  callerJoinedOrg: boolean;
}

/** Standalone organizations and their one-time claim: ownership moves to the user who claims. */
export class OrgClaims {
  private readonly claims: ClaimsStore;
  private readonly organizations: OrganizationsStore;
  private readonly teams: TeamsStore;
  private readonly members: MembersStore;

  constructor(
    db: Database,
    private readonly outbox: Outbox,
  ) {
    this.claims = ClaimsStore.create(db);
    this.organizations = OrganizationsStore.create(db);
    this.teams = TeamsStore.create(db);
    this.members = MembersStore.create(db);
  }

  async create(req: orgClaimsV1.CreateClaimRequest): Promise<orgClaimsV1.OrgClaim> {
    const { orgId, backoffSeconds, ifAbsent } = req;
    if (backoffSeconds < 0 || backoffSeconds > 7 * 86_400) throw new InputError('backoff_seconds must be between 0 and a week');
    await this.organizations.get(orgId);
    try {
      const row = await this.claims.insert(randomUUID(), orgId, backoffSeconds);
      return { claimId: row.claim_id, orgId: row.org_id };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = ifAbsent ? await this.claims.ofOrg(orgId) : undefined;
      if (existing) return { claimId: existing.claim_id, orgId: existing.org_id };
      throw new ConflictError(`organization ${orgId} is already claimable`);
    }
  }

  /** The marketplace's claimable check of one claim: 404 unknown, 409 claimed, 429 while its backoff runs unless flagged. */
  async check(claimId: string): Promise<orgClaimsV1.OrgClaimableCheck> {
    const claim = isUuidAnyCase(claimId) ? await this.claims.withBackoff(claimId) : undefined;
    if (!claim) throw new NotFoundError(`claim ${claimId} does not exist`);
    if (claim.claimed_by !== null) throw new ConflictError(`claim ${claimId} has already been claimed`);
    if (!claim.flagged_claimable && claim.backoff_left > 0) {
      throw new TooManyRequestsError(`claim ${claimId} is not claimable yet; retry later`, claim.backoff_left);
    }
    return { isClaimable: true, claimId };
  }

  /** Flags a claim claimable now, whatever its backoff. */
  async flag(claimId: string): Promise<orgClaimsV1.OrgClaimableCheck> {
    if (!isUuidAnyCase(claimId) || !(await this.claims.flag(claimId))) throw new NotFoundError(`claim ${claimId} does not exist`);
    return this.check(claimId);
  }

  async oldestClaimable(): Promise<orgClaimsV1.OrgClaimableCheck> {
    const claimId = await this.claims.oldestOpen();
    return claimId ? { isClaimable: true, claimId } : { isClaimable: false, claimId: '' };
  }

  /**
   * The caller becomes the only member of the organization's owner team. Rows change in one transaction
   * (the claim is taken with a conditional update, so two concurrent claims cannot both win); then the
   * team tuples follow through the outbox, and if they cannot be written the rows are put back.
   */
  async claim(claimId: string, userId: number, ctx: CallContext): Promise<orgClaimsV1.ClaimOrgResponse> {
    if (!isUuidAnyCase(claimId)) throw new NotFoundError(`claim ${claimId} does not exist`);
    if (!userId) throw new InputError('a signed-in user is required to claim an organization');
    const change = await this.outbox.run<ClaimChange>(
      async (trx, stage) => {
        const claim = await this.claims.find(claimId, trx);
        if (!claim) throw new NotFoundError(`claim ${claimId} does not exist`);
        if (!(await this.claims.take(claimId, userId, trx))) throw new ConflictError(`claim ${claimId} has already been claimed`);
        const org = await this.organizations.get(claim.org_id, trx);
        const teamId = (await this.teams.ownerTeamId(org.id, trx))!;
        const previous = await this.members.uidsOfTeam(teamId, trx);
        const callerWasOwner = previous.includes(userId);
        const others = previous.filter((uid) => uid !== userId);
        await this.members.leaveTeam(teamId, others, trx);
        // Previous owners stay organization members only while they are still in another team.
        const leftOrg = (await this.members.leaveOrgUnlessInTeam(org.id, others, trx)).map((m) => m.uid);
        if (!callerWasOwner) await this.members.insertTeamMemberships([{ team_id: teamId, org_id: org.id, uid: userId }], trx);
        const callerJoinedOrg = await this.members.joinOrg(org.id, userId, trx);
        stageTuples(
          stage,
          previous.concat(userId).map((uid) => teamMember(teamId, uid)),
        );
        return { orgId: org.id, orgName: org.login, ownerTeamId: teamId, previousOwners: others, leftOrg, callerWasOwner, callerJoinedOrg };
      },
      {
        call: ctx,
        undo: async (trx, c) => {
          await this.claims.release(claimId, trx);
          if (!c.callerWasOwner) await this.members.leaveTeam(c.ownerTeamId, [userId], trx);
          if (c.callerJoinedOrg) await this.members.leaveOrg(c.orgId, userId, trx);
          await this.members.insertTeamMemberships(
            c.previousOwners.map((uid) => ({ team_id: c.ownerTeamId, org_id: c.orgId, uid })),
            trx,
          );
          await this.members.insertOrgMemberships(
            c.leftOrg.map((uid) => ({ org_id: c.orgId, uid, is_public: false })),
            trx,
          );
        },
      },
    );
    return { orgId: change.orgId, orgName: change.orgName };
  }
}
