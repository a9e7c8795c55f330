import { InputError, NotAllowedError, NotFoundError } from '@platform/errors';
import type { Knex } from 'knex';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { toUser } from '../identity/identity';
import { stageClusterConnection } from './cluster-connections';
import { stageTuples } from './effects';
import { MembersStore, type AccountRef } from './members-store';
import { OrganizationsStore } from './organizations-store';
import { protectsSiteAdmins, type OrgsContext } from './orgs-context';
import type { OrgRow } from './rows';
import { TeamsStore } from './teams-store';
import { teamMember } from './tuples';

/** The memberships a removal took away, so it can be put back. */
export interface RemovedMembership {
  orgId: number;
  uid: number;
  teamIds: number[];
  /** The org_users row, when the user left the organization with it. */
  orgUser?: { is_public: boolean };
  /** Whether one of the teams left is the owner team. */
  leftOwnerTeam?: boolean;
}

/**
 * Taking users out of teams, and so perhaps out of their organization: shared by Members (out of every
 * team) and TeamMembers (out of one).
 */
export class Memberships {
  private readonly teams: TeamsStore;
  private readonly members: MembersStore;

  constructor(private readonly orgs: OrgsContext) {
    this.teams = TeamsStore.create(orgs.db);
    this.members = MembersStore.create(orgs.db);
  }

  /**
   * Takes a user out of some teams (every team when teamIds is undefined) and so perhaps out of the
   * organization, with the tuples that go with it; a failure to remove the tuples puts the rows back. With
   * `disconnectClusters`, leaving the owner team also disconnects the user's clusters (team auto-connect), and a
   * failure to do so puts the rows back too.
   */
  async remove(
    org: OrgRow,
    user: AccountRef,
    teamIds: number[] | undefined,
    ctx: CallContext,
    opts: { disconnectClusters?: boolean } = {},
  ): Promise<void> {
    await this.orgs.outbox.run(
      async (trx, stage) => {
        const removed = await this.removeFromTeams(trx, org, user, teamIds);
        stageTuples(
          stage,
          removed.teamIds.map((id) => teamMember(id, removed.uid)),
        );
        // Put back, the user is an owner again but stays disconnected: no one is connected without asking.
        if (opts.disconnectClusters && removed.leftOwnerTeam)
          stageClusterConnection(stage, { orgId: org.id, userId: user.id, login: user.login, role: '', connect: false });
        return removed;
      },
      { call: ctx, undo: (trx, removed) => this.restore(trx, removed) },
    );
  }

  /**
   * Removes a user from some teams of an organization (all of them when teamIds is undefined), inside a
   * transaction: 404 when the user is in none of them, 400 when that would leave the owner team empty, 403
   * when it would take a site admin out of the administrative organization. Leaving the last team leaves
   * the organization.
   */
  private async removeFromTeams(trx: Knex.Transaction, org: OrgRow, user: AccountRef, teamIds?: number[]): Promise<RemovedMembership> {
    // Locking the owner team serialises removals, so two of them cannot each leave the other as last owner.
    const ownerTeamId = await this.teams.ownerTeamId(org.id, trx, true);
    const mine = await this.members.teamIdsOf(org.id, user.id, trx);
    const leaving = teamIds ? mine.filter((id) => teamIds.includes(id)) : mine;
    if (leaving.length === 0)
      throw new NotFoundError(teamIds ? `${user.login} is not a member of the team` : `${user.login} is not a member of ${org.login}`);
    if (ownerTeamId !== undefined && leaving.includes(ownerTeamId)) {
      if ((await this.members.countOfTeam(ownerTeamId, trx)) <= 1)
        throw new InputError(`${user.login} is the last owner of ${org.login}; add another owner before removing them`);
    }
    const leavesOrg = leaving.length === mine.length;
    if (leavesOrg && user.is_admin && protectsSiteAdmins(this.orgs, org))
      throw new NotAllowedError(`site admins cannot be removed from the administrative organization ${org.login}`);
    await this.members.leaveTeams(org.id, user.id, leaving, trx);
    const removed: RemovedMembership = { orgId: org.id, uid: user.id, teamIds: leaving };
    if (ownerTeamId !== undefined && leaving.includes(ownerTeamId)) removed.leftOwnerTeam = true;
    if (leavesOrg) {
      const row = await this.members.leaveOrg(org.id, user.id, trx);
      if (row) removed.orgUser = { is_public: row.is_public };
    }
    return removed;
  }

  /** Puts back what removeFromTeams took away. */
  private async restore(trx: Knex.Transaction, removed: RemovedMembership): Promise<void> {
    if (removed.orgUser)
      await this.members.insertOrgMemberships([{ org_id: removed.orgId, uid: removed.uid, is_public: removed.orgUser.is_public }], trx);
    await this.members.insertTeamMemberships(
      removed.teamIds.map((team_id) => ({ team_id, org_id: removed.orgId, uid: removed.uid })),
      trx,
    );
  }
}

/** Organization members and public members. */
export class Members {
  private readonly organizations: OrganizationsStore;
  private readonly members: MembersStore;
  private readonly memberships: Memberships;

  constructor(orgs: OrgsContext) {
    this.organizations = OrganizationsStore.create(orgs.db, orgs.cache);
    this.members = MembersStore.create(orgs.db);
    this.memberships = new Memberships(orgs);
  }

  /** Whether the viewer may know about private members: a member or a site admin. */
  private async seesPrivate(orgId: number, viewerId: number): Promise<boolean> {
    return (await this.members.isOrgMember(orgId, viewerId)) || (await this.members.isSiteAdmin(viewerId));
  }

  /** One page of members by login; only the public ones unless the viewer sees private members and publicOnly is off. */
  async list(req: orgsTeamsOrgsV1.ListMembersRequest): Promise<orgsTeamsOrgsV1.ListMembersResponse> {
    await this.organizations.get(req.orgId);
    const all = !req.publicOnly && (await this.seesPrivate(req.orgId, req.viewerId));
    const { rows, total } = await this.members.orgMembers(req.orgId, !all, req.page);
    return { members: rows.map(toUser), total };
  }

  /** Whether a user is a (public) member, and whether the viewer may know about private members. */
  async membership(req: orgsTeamsOrgsV1.GetMembershipRequest): Promise<orgsTeamsOrgsV1.Membership> {
    await this.organizations.get(req.orgId);
    const row = await this.members.orgMembership(req.orgId, req.username);
    return { viewerSeesPrivate: await this.seesPrivate(req.orgId, req.viewerId), member: !!row, public: !!row?.is_public };
  }

  /** Makes a membership public or private; 404 when the user is not a member. */
  async setVisibility(orgId: number, uid: number, isPublic: boolean): Promise<void> {
    const org = await this.organizations.get(orgId);
    const user = await this.members.user({ id: uid });
    if (!(await this.members.setPublic(orgId, uid, isPublic))) throw new NotFoundError(`${user.login} is not a member of ${org.login}`);
  }

  /** Removes a user from every team of the organization, and so from the organization. */
  async remove(req: orgsTeamsOrgsV1.RemoveMemberRequest, ctx: CallContext): Promise<void> {
    const org = await this.organizations.get(req.orgId);
    const user = await this.members.user({ id: req.userId, login: req.username });
    await this.memberships.remove(org, user, undefined, ctx);
  }
}
