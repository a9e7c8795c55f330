import { randomUUID } from 'node:crypto';
import { DomainError } from '@platform/errors';
import type { Database } from '@platform/db';
import { createCallContext, type Logger } from '@platform/service-kit';
import { AuditStore } from '../audit/audit-store';
import type { TeamMembers } from '../orgs/team-members';
import type { UserAdmin } from './user-admin';

interface MappingRow {
  id: string | number;
  org_id: string | number | null;
  group_value: string;
  team_id: string | number | null;
  site_admin: boolean;
}

/**
 * Groups to teams (docs/authentication.md, "Groups to teams"): at every sign-in through the identity provider, the
 * person joins each mapped team one of their groups names and leaves each mapped team none of them names any more;
 * with a site-wide site-admin mapping, they are site admin exactly while one of their groups names it. Teams without
 * a mapping are never touched, so memberships given by hand stay. The changes go through the same paths as the API's
 * (the authz tuples staged through the outbox) and each is an audit event with the person as actor.
 */
export class GroupMappings {
  private readonly audit: AuditStore;

  constructor(
    private readonly db: Database,
    private readonly teamMembers: TeamMembers,
    private readonly userAdmin: UserAdmin,
    private readonly log: Logger,
  ) {
    this.audit = AuditStore.create(db);
  }

  async apply(userId: number, groups: string[]): Promise<void> {
    const mappings: MappingRow[] = await this.db.table('group_mappings').select('*');
    if (mappings.length === 0) return;
    const named = new Set(groups);
    const user = await this.db.table('accounts').where({ id: userId }).first<{ login: string; is_admin: boolean }>('login', 'is_admin');
    if (!user) return;
    const ctx = createCallContext(this.log);

    const mappedTeams = new Map<number, number>();
    const wanted = new Set<number>();
    for (const m of mappings) {
      if (m.team_id === null) continue;
      mappedTeams.set(Number(m.team_id), Number(m.org_id));
      if (named.has(m.group_value)) wanted.add(Number(m.team_id));
    }
    const current = new Set<number>(
      (
        await this.db
          .table('team_users')
          .where({ uid: userId })
          .whereIn('team_id', [...mappedTeams.keys()])
          .pluck('team_id')
      ).map(Number),
    );
    const orgNames = new Map<number, string>(
      (
        await this.db
          .table('accounts')
          .whereIn('id', [...new Set(mappedTeams.values())])
          .select('id', 'login')
      ).map((r: { id: string | number; login: string }) => [Number(r.id), r.login]),
    );
    const record = (action: string, method: string, target: string, org: string) =>
      this.audit.record({
        id: randomUUID(),
        timeUnixMs: Date.now(),
        actorId: userId,
        actorLogin: user.login,
        action,
        method,
        route: '/user/oidc/callback',
        target,
        org,
        status: 200,
        requestId: ctx.requestId,
        client: '',
      });

    for (const teamId of wanted) {
      if (current.has(teamId)) continue;
      const org = orgNames.get(mappedTeams.get(teamId)!) ?? '';
      if (await this.tried(() => this.teamMembers.add({ teamId, userId, username: '', conflictIfMember: false }, ctx), user.login, teamId))
        await record('groupSyncAddTeamMember', 'PUT', `/teams/${teamId}/members/${user.login}`, org);
    }
    for (const teamId of current) {
      if (wanted.has(teamId)) continue;
      const org = orgNames.get(mappedTeams.get(teamId)!) ?? '';
      if (await this.tried(() => this.teamMembers.remove({ teamId, userId, username: '' }, ctx), user.login, teamId))
        await record('groupSyncRemoveTeamMember', 'DELETE', `/teams/${teamId}/members/${user.login}`, org);
    }

    const adminMappings = mappings.filter((m) => m.site_admin);
    if (adminMappings.length > 0) {
      const admin = adminMappings.some((m) => named.has(m.group_value));
      if (
        admin !== user.is_admin &&
        (await this.tried(() => this.userAdmin.edit({ login: user.login, admin, editorId: 0 }, ctx), user.login))
      )
        await record(admin ? 'groupSyncGrantSiteAdmin' : 'groupSyncRevokeSiteAdmin', 'PATCH', `/admin/users/${user.login}`, '');
    }
  }

  /**
   * Runs one change; a refusal (the last owner of an organization, the last site admin) leaves that one as it is and
   * is logged: the person still signs in, and the other changes are made.
   */
  private async tried(change: () => Promise<unknown>, login: string, teamId?: number): Promise<boolean> {
    try {
      await change();
      return true;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.log.warn({ err, login, teamId }, 'a group mapping was not applied');
      return false;
    }
  }
}
