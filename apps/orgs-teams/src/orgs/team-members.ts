import { ConflictError, NotFoundError } from '@platform/errors';
import type { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { toUser } from '../identity/identity';
import { clusterConnectionInStatement } from './cluster-connections';
import { tuplesInStatement } from './effects';
import { Memberships } from './members';
import { MembersStore, userOf } from './members-store';
import { OrganizationsStore } from './organizations-store';
import { OWNER_PERMISSION } from './rows';
import type { OrgsContext } from './orgs-context';
import type { Teams } from './teams';
import { teamMember } from './tuples';

/** Members of teams; joining a team joins its organization, leaving the last one leaves it. */
export class TeamMembers {
  private readonly organizations: OrganizationsStore;
  private readonly members: MembersStore;
  private readonly memberships: Memberships;

  constructor(
    private readonly orgs: OrgsContext,
    private readonly teams: Teams,
  ) {
    this.organizations = OrganizationsStore.create(orgs.db, orgs.cache);
    this.members = MembersStore.create(orgs.db);
    this.memberships = new Memberships(orgs);
  }

  /** One page of a team's members, by login. */
  async list(req: orgsTeamsOrgsV1.ListTeamMembersRequest): Promise<orgsTeamsOrgsV1.ListTeamMembersResponse> {
    await this.teams.row(req.teamId);
    const { rows, total } = await this.members.teamMembers(req.teamId, req.page);
    return { members: rows.map(toUser), total };
  }

  /** One member of a team; 404 when the user does not exist or is not in the team. */
  async get(teamId: number, username: string): Promise<orgsTeamsV1.User> {
    await this.teams.row(teamId);
    const row = await this.members.teamMember(teamId, username);
    if (!row) throw new NotFoundError(`${username} is not a member of team ${teamId}`);
    return toUser(row);
  }

  /**
   * Adds a user (never an organization: 400) to a team and, when new to it, to the organization. Adding
   * a member again is 409 with conflictIfMember, else it changes nothing. On the owner team a `clusterConnection`
   * also connects (or disconnects) the user's clusters, member already or not; when the clusters service
   * refuses, a user this call added leaves the team again and the refusal is the answer.
   */
  async add(req: orgsTeamsOrgsV1.AddTeamMemberRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.AddTeamMemberResponse> {
    const ref = { id: req.userId, login: req.username };
    // The statement that adds the member looks the team and the user up itself, one round trip in all, unless what it
    // stages needs them first: a cluster connection (the owner team's alone, its undo taking the member out again, so
    // the tuple goes through the entry) or a tuple written through the entry (authz keeps tuples elsewhere).
    const first = req.clusterConnection || !this.orgs.tuplesInStatement ? await this.members.teamAndUser(req.teamId, ref) : undefined;
    if (first && (!first.team || !first.user)) throw new NotFoundError(`team ${req.teamId} does not exist`);
    const connection = first?.team?.permission === OWNER_PERMISSION ? req.clusterConnection : undefined;
    const inStatement = !first;
    // The caller's audit event goes with a new member when nothing can undo it after the commit.
    const audit = inStatement ? req.audit : undefined;
    const { added } = await this.orgs.outbox.runInOne(
      async (entry) => {
        const joined = await this.members.joinTeamAndOrg(
          req.teamId,
          first ? { id: first.user!.id } : ref,
          entry,
          (onUndo) => ({
            // The member's tuple, and the connection when asked for; a 409 for a member already writes no entry, so
            // then only a new member's is written. With a connection asked for, a member already gets the entry too (its
            // tuple written again changes nothing): the connection is set for members already as well.
            effects: [
              ...(first ? [tuplesInStatement([teamMember(first.team!.id, first.user!.id)])] : []),
              ...(connection
                ? [
                    clusterConnectionInStatement(
                      {
                        orgId: first!.team!.org_id,
                        userId: first!.user!.id,
                        login: first!.user!.login,
                        role: connection.role,
                        connect: connection.connect,
                      },
                      onUndo,
                    ),
                  ]
                : []),
            ],
            always: !!connection && !req.conflictIfMember,
          }),
          inStatement,
          audit,
        );
        // What the statement found: it wrote nothing for a team or user that is not there, or is not a user.
        if (!joined.team) throw new NotFoundError(`team ${req.teamId} does not exist`);
        const user = userOf(joined.person, ref);
        if (!joined.joinedTeam && req.conflictIfMember)
          throw new ConflictError(`${user.login} is already a member of team ${joined.team.name}`);
        const added = joined.joinedTeam ? { joinedOrg: joined.joinedOrg, orgId: joined.team.org_id, userId: user.id } : undefined;
        return { result: { added }, row: joined.written };
      },
      {
        call: ctx,
        undo: async (trx, { added }) => {
          if (!added) return;
          await this.members.leaveTeams(added.orgId, added.userId, [req.teamId], trx);
          if (added.joinedOrg) await this.members.leaveOrg(added.orgId, added.userId, trx);
        },
      },
    );
    // The statement writes the event with a new member only: for a member already, the caller records it.
    return { added: !!added, ...(audit && added && { auditRecorded: true }) };
  }

  /**
   * Removes a user from a team: 404 when not a member, 400 for the last member of the owner team, 403 for a
   * site admin leaving the administrative organization. With `disconnectClusters`, leaving the owner team also
   * disconnects the user's clusters; when the clusters service refuses, the user stays and the refusal is the answer.
   */
  async remove(req: orgsTeamsOrgsV1.RemoveTeamMemberRequest, ctx: CallContext): Promise<void> {
    const team = await this.teams.row(req.teamId);
    const org = await this.organizations.get(team.org_id);
    const user = await this.members.user({ id: req.userId, login: req.username });
    await this.memberships.remove(org, user, [team.id], ctx, { disconnectClusters: !!req.disconnectClusters });
  }
}
