import { InputError, NotAllowedError, NotFoundError } from '@platform/errors';
import type { Knex } from 'knex';
import type { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { toUser } from '../identity/identity';
import { isOrgMember, isSiteAdmin, orgById, protectsSiteAdmins, userAccount, type AccountRef, type OrgsContext } from './accounts';
import { stageTuples } from './effects';
import { OWNER_PERMISSION, type OrgRow } from './rows';
import { teamMember } from './tuples';

/** The memberships a removal took away, so it can be put back. */
export interface RemovedMembership {
  orgId: number;
  uid: number;
  teamIds: number[];
  /** The org_users row, when the user left the organization with it. */
  orgUser?: { is_public: boolean };
}

/**
 * Removes a user from some teams of an organization (all of them when teamIds is undefined), inside a
 * transaction: 404 when the user is in none of them, 400 when that would leave the owner team empty, 403
 * when it would take a site admin out of the administrative organization. Leaving the last team leaves
 * the organization.
 */
async function removeFromTeams(
  ctx: OrgsContext,
  trx: Knex.Transaction,
  org: OrgRow,
  user: AccountRef,
  teamIds?: number[],
): Promise<RemovedMembership> {
  const { db } = ctx;
  // Locking the owner team serialises removals, so two of them cannot each leave the other as last owner.
  const ownerTeam = await db.table('teams', trx).where({ org_id: org.id, permission: OWNER_PERMISSION }).forUpdate().first('id');
  const mine: number[] = (await db.table('team_users', trx).where({ org_id: org.id, uid: user.id }).pluck('team_id')).map(Number);
  const leaving = teamIds ? mine.filter((id) => teamIds.includes(id)) : mine;
  if (leaving.length === 0)
    throw new NotFoundError(teamIds ? `${user.login} is not a member of the team` : `${user.login} is not a member of ${org.login}`);
  if (ownerTeam && leaving.includes(ownerTeam.id)) {
    const owners = await db.table('team_users', trx).where({ team_id: ownerTeam.id }).count<{ count: string }[]>('uid as count');
    if (Number(owners[0].count) <= 1)
      throw new InputError(`${user.login} is the last owner of ${org.login}; add another owner before removing them`);
  }
  const leavesOrg = leaving.length === mine.length;
  if (leavesOrg && user.is_admin && protectsSiteAdmins(ctx, org))
    throw new NotAllowedError(`site admins cannot be removed from the administrative organization ${org.login}`);
  await db.table('team_users', trx).where({ org_id: org.id, uid: user.id }).whereIn('team_id', leaving).delete();
  const removed: RemovedMembership = { orgId: org.id, uid: user.id, teamIds: leaving };
  if (leavesOrg) {
    const [row] = await db.table('org_users', trx).where({ org_id: org.id, uid: user.id }).delete().returning('is_public');
    if (row) removed.orgUser = { is_public: row.is_public };
  }
  return removed;
}

/**
 * Takes a user out of some teams (every team when teamIds is undefined) and so perhaps out of the
 * organization, with the tuples that go with it; a failure to remove the tuples puts the rows back.
 */
export async function removeMembership(
  orgs: OrgsContext,
  org: OrgRow,
  user: AccountRef,
  teamIds: number[] | undefined,
  ctx: CallContext,
): Promise<void> {
  await orgs.outbox.run(
    async (trx, stage) => {
      const removed = await removeFromTeams(orgs, trx, org, user, teamIds);
      stageTuples(
        stage,
        removed.teamIds.map((id) => teamMember(id, removed.uid)),
      );
      return removed;
    },
    { call: ctx, undo: (trx, removed) => restoreMembership(orgs, trx, removed) },
  );
}

/** Puts back what removeFromTeams took away. */
async function restoreMembership(ctx: OrgsContext, trx: Knex.Transaction, removed: RemovedMembership): Promise<void> {
  if (removed.orgUser)
    await ctx.db.table('org_users', trx).insert({ org_id: removed.orgId, uid: removed.uid, is_public: removed.orgUser.is_public });
  await ctx.db.table('team_users', trx).insert(removed.teamIds.map((team_id) => ({ team_id, org_id: removed.orgId, uid: removed.uid })));
}

/** Organization members and public members. */
export class Members {
  constructor(private readonly orgs: OrgsContext) {}

  private get db() {
    return this.orgs.db;
  }

  /** Whether the viewer may know about private members: a member or a site admin. */
  private async seesPrivate(orgId: number, viewerId: number): Promise<boolean> {
    return (await isOrgMember(this.db, orgId, viewerId)) || (await isSiteAdmin(this.db, viewerId));
  }

  /** Members by login; only the public ones unless the viewer sees private members and publicOnly is off. */
  async list(req: orgsTeamsOrgsV1.ListMembersRequest): Promise<orgsTeamsV1.User[]> {
    await orgById(this.db, req.orgId);
    const all = !req.publicOnly && (await this.seesPrivate(req.orgId, req.viewerId));
    const q = this.db.table('org_users as m').join('accounts as a', 'a.id', 'm.uid').where('m.org_id', req.orgId);
    if (!all) q.andWhere('m.is_public', true);
    return (await q.orderBy('a.lower_login').select('a.*')).map(toUser);
  }

  /** Whether a user is a (public) member, and whether the viewer may know about private members. */
  async membership(req: orgsTeamsOrgsV1.GetMembershipRequest): Promise<orgsTeamsOrgsV1.Membership> {
    await orgById(this.db, req.orgId);
    const row = await this.db
      .table('org_users as m')
      .join('accounts as a', 'a.id', 'm.uid')
      .where({ 'm.org_id': req.orgId, 'a.lower_login': req.username.toLowerCase() })
      .first('m.is_public');
    return { viewerSeesPrivate: await this.seesPrivate(req.orgId, req.viewerId), member: !!row, public: !!row?.is_public };
  }

  /** Makes a membership public or private; 404 when the user is not a member. */
  async setVisibility(orgId: number, uid: number, isPublic: boolean): Promise<void> {
    const org = await orgById(this.db, orgId);
    const user = await userAccount(this.db, { id: uid });
    const n = await this.db.table('org_users').where({ org_id: orgId, uid }).update({ is_public: isPublic });
    if (n === 0) throw new NotFoundError(`${user.login} is not a member of ${org.login}`);
  }

  /** Removes a user from every team of the organization, and so from the organization. */
  async remove(req: orgsTeamsOrgsV1.RemoveMemberRequest, ctx: CallContext): Promise<void> {
    const org = await orgById(this.db, req.orgId);
    const user = await userAccount(this.db, { id: req.userId, login: req.username });
    await removeMembership(this.orgs, org, user, undefined, ctx);
  }
}
