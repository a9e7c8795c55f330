import { ConflictError, NotFoundError } from '@platform/errors';
import type { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { toUser } from '../identity/identity';
import { orgById, userAccount, type OrgsContext } from './accounts';
import { stageTuples } from './effects';
import { removeMembership } from './members';
import type { Teams } from './teams';
import { teamMember } from './tuples';

/** Members of teams; joining a team joins its organization, leaving the last one leaves it. */
export class TeamMembers {
  constructor(
    private readonly orgs: OrgsContext,
    private readonly teams: Teams,
  ) {}

  private get db() {
    return this.orgs.db;
  }

  /** A team's members, by login. */
  async list(teamId: number): Promise<orgsTeamsV1.User[]> {
    await this.teams.row(teamId);
    const rows = await this.db
      .table('team_users as m')
      .join('accounts as a', 'a.id', 'm.uid')
      .where('m.team_id', teamId)
      .orderBy('a.lower_login')
      .select('a.*');
    return rows.map(toUser);
  }

  /** One member of a team; 404 when the user does not exist or is not in the team. */
  async get(teamId: number, username: string): Promise<orgsTeamsV1.User> {
    await this.teams.row(teamId);
    const row = await this.db
      .table('team_users as m')
      .join('accounts as a', 'a.id', 'm.uid')
      .where({ 'm.team_id': teamId, 'a.lower_login': username.toLowerCase() })
      .first('a.*');
    if (!row) throw new NotFoundError(`${username} is not a member of team ${teamId}`);
    return toUser(row);
  }

  /**
   * Adds a user (never an organization: 400) to a team and, when new to it, to the organization. Adding
   * a member again is 409 with conflictIfMember, else it changes nothing.
   */
  async add(req: orgsTeamsOrgsV1.AddTeamMemberRequest, ctx: CallContext): Promise<boolean> {
    const team = await this.teams.row(req.teamId);
    const user = await userAccount(this.db, { id: req.userId, login: req.username });
    const added = await this.orgs.outbox.run(
      async (trx, stage) => {
        // ON CONFLICT, not a check then an insert: two concurrent adds of one user both see "not a member",
        // and the second insert would hit the primary key. The one that inserts nothing finds a member.
        const inserted = await this.db
          .table('team_users', trx)
          .insert({ team_id: team.id, org_id: team.org_id, uid: user.id })
          .onConflict(['team_id', 'uid'])
          .ignore()
          .returning('uid');
        if (inserted.length === 0) {
          if (req.conflictIfMember) throw new ConflictError(`${user.login} is already a member of team ${team.name}`);
          return undefined;
        }
        const joinedOrg = (
          await this.db
            .table('org_users', trx)
            .insert({ org_id: team.org_id, uid: user.id, is_public: false })
            .onConflict(['org_id', 'uid'])
            .ignore()
            .returning('uid')
        ).length;
        stageTuples(stage, [teamMember(team.id, user.id)]);
        return { joinedOrg: joinedOrg > 0 };
      },
      {
        call: ctx,
        undo: async (trx, added) => {
          if (!added) return;
          await this.db.table('team_users', trx).where({ team_id: team.id, uid: user.id }).delete();
          if (added.joinedOrg) await this.db.table('org_users', trx).where({ org_id: team.org_id, uid: user.id }).delete();
        },
      },
    );
    return !!added;
  }

  /**
   * Removes a user from a team: 404 when not a member, 400 for the last member of the owner team, 403 for a
   * site admin leaving the administrative organization.
   */
  async remove(req: orgsTeamsOrgsV1.RemoveTeamMemberRequest, ctx: CallContext): Promise<void> {
    const team = await this.teams.row(req.teamId);
    const org = await orgById(this.db, team.org_id);
    const user = await userAccount(this.db, { id: req.userId, login: req.username });
    await removeMembership(this.orgs, org, user, [team.id], ctx);
  }
}
