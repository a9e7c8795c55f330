import { randomUUID } from 'node:crypto';
import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { isUniqueViolation, type Database, type Outbox } from '@platform/db';
import type { orgClaimsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { ACCOUNT_TYPE } from '../identity/identity';
import { stageTuples } from '../orgs/effects';
import { OWNER_PERMISSION } from '../orgs/rows';
import { teamMember } from '../orgs/tuples';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
  ) {}

  async create(orgId: number): Promise<orgClaimsV1.OrgClaim> {
    const org = await this.db.table('accounts').where({ id: orgId, type: ACCOUNT_TYPE.organization }).first('id');
    if (!org) throw new NotFoundError(`organization ${orgId} does not exist`);
    try {
      const [row] = await this.db.table('org_claims').insert({ claim_id: randomUUID(), org_id: orgId }).returning(['claim_id', 'org_id']);
      return { claimId: row.claim_id, orgId: row.org_id };
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`organization ${orgId} is already claimable`);
      throw err;
    }
  }

  async oldestClaimable(): Promise<orgClaimsV1.OrgClaimableCheck> {
    const row = await this.db.table('org_claims').whereNull('claimed_by').orderBy('created_at').orderBy('claim_id').first('claim_id');
    return row ? { isClaimable: true, claimId: row.claim_id } : { isClaimable: false, claimId: '' };
  }

  /**
   * The caller becomes the only member of the organization's owner team. Rows change in one transaction
   * (the claim is taken with a conditional update, so two concurrent claims cannot both win); then the
   * team tuples follow through the outbox, and if they cannot be written the rows are put back.
   */
  async claim(claimId: string, userId: number, ctx: CallContext): Promise<orgClaimsV1.ClaimOrgResponse> {
    if (!UUID.test(claimId)) throw new NotFoundError(`claim ${claimId} does not exist`);
    if (!userId) throw new InputError('a signed-in user is required to claim an organization');
    const change = await this.outbox.run<ClaimChange>(
      async (trx, stage) => {
        const claim = await this.db.table('org_claims', trx).where({ claim_id: claimId }).first();
        if (!claim) throw new NotFoundError(`claim ${claimId} does not exist`);
        const taken = await this.db
          .table('org_claims', trx)
          .where({ claim_id: claimId })
          .whereNull('claimed_by')
          .update({ claimed_by: userId, claimed_at: this.db.knex.fn.now() });
        if (taken === 0) throw new ConflictError(`claim ${claimId} has already been claimed`);
        const org = await this.db.table('accounts', trx).where({ id: claim.org_id }).first('id', 'login');
        const team = await this.db.table('teams', trx).where({ org_id: org.id, permission: OWNER_PERMISSION }).first('id');
        const previous: number[] = await this.db.table('team_users', trx).where({ team_id: team.id }).pluck('uid');
        const callerWasOwner = previous.includes(userId);
        const others = previous.filter((uid) => uid !== userId);
        await this.db.table('team_users', trx).where({ team_id: team.id }).whereIn('uid', others).delete();
        // Previous owners stay organization members only while they are still in another team.
        const stillInTeams: number[] = await this.db.table('team_users', trx).where({ org_id: org.id }).whereIn('uid', others).pluck('uid');
        const leftOrg = others.filter((uid) => !stillInTeams.includes(uid));
        await this.db.table('org_users', trx).where({ org_id: org.id }).whereIn('uid', leftOrg).delete();
        if (!callerWasOwner) await this.db.table('team_users', trx).insert({ team_id: team.id, org_id: org.id, uid: userId });
        const joined = await this.db
          .table('org_users', trx)
          .insert({ org_id: org.id, uid: userId, is_public: false })
          .onConflict(['org_id', 'uid'])
          .ignore()
          .returning('uid');
        stageTuples(
          stage,
          previous.concat(userId).map((uid) => teamMember(team.id, uid)),
        );
        return {
          orgId: org.id,
          orgName: org.login,
          ownerTeamId: team.id,
          previousOwners: others,
          leftOrg,
          callerWasOwner,
          callerJoinedOrg: joined.length > 0,
        };
      },
      {
        call: ctx,
        undo: async (trx, c) => {
          await this.db.table('org_claims', trx).where({ claim_id: claimId }).update({ claimed_by: null, claimed_at: null });
          if (!c.callerWasOwner) await this.db.table('team_users', trx).where({ team_id: c.ownerTeamId, uid: userId }).delete();
          if (c.callerJoinedOrg) await this.db.table('org_users', trx).where({ org_id: c.orgId, uid: userId }).delete();
          if (c.previousOwners.length) {
            await this.db
              .table('team_users', trx)
              .insert(c.previousOwners.map((uid) => ({ team_id: c.ownerTeamId, org_id: c.orgId, uid })));
          }
          if (c.leftOrg.length)
            await this.db.table('org_users', trx).insert(c.leftOrg.map((uid) => ({ org_id: c.orgId, uid, is_public: false })));
        },
      },
    );
    return { orgId: change.orgId, orgName: change.orgName };
  }
}
