import { isUniqueViolation } from '@platform/db';
import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { ACCOUNT_TYPE } from '../identity/identity';
import { stageTeamRoles, stageTuples, teamCreated } from './effects';
import { MembersStore } from './members-store';
import type { OrgAuthz, RoleUntil, TeamRoles } from './org-authz';
import { OrganizationsStore } from './organizations-store';
import type { OrgsContext } from './orgs-context';
import { OWNER_PERMISSION, toTeam, type OrgRow, type TeamRow } from './rows';
import { TeamsStore, type TeamFields } from './teams-store';
import { teamMember, teamOfOrg } from './tuples';

/** Team types: `kubernetes` teams work on the organization's clusters, `general` teams on everything else. */
export const TEAM_TYPES = ['kubernetes', 'general'] as const;
/** Permissions a team may be created with; `custom` (rights from custom roles only) is accepted on edit. */
export const CREATE_PERMISSIONS = ['read', 'write', 'admin'] as const;
export const EDIT_PERMISSIONS = ['read', 'write', 'admin', 'custom'] as const;
/** Gitea's team-name rule (AlphaDashDot, at most 255 characters). */
const TEAM_NAME = /^[a-zA-Z0-9_.-]{1,255}$/;

function checkName(name: string): void {
  if (!TEAM_NAME.test(name))
    throw new InputError('name must be 1 to 255 letters, digits, "_", "." or "-"', [{ field: 'name', description: 'invalid team name' }]);
}

function checkType(type: string): void {
  if (!(TEAM_TYPES as readonly string[]).includes(type))
    throw new InputError(`type must be one of ${TEAM_TYPES.join(', ')}`, [{ field: 'type', description: 'unknown team type' }]);
}

function checkPermission(permission: string, allowed: readonly string[]): void {
  if (!allowed.includes(permission))
    throw new InputError(`permission must be one of ${allowed.join(', ')}`, [{ field: 'permission', description: 'not allowed here' }]);
}

function checkUnits(units: string[]): void {
  if (units.some((u) => !u || u.length > 64) || new Set(units).size !== units.length)
    throw new InputError('units must be distinct non-empty names of at most 64 characters', [{ field: 'units', description: 'invalid' }]);
}

/** An RFC 3339 date-time, as authz takes it. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** 400 unless each end names a role being assigned and is an RFC 3339 time still to come. */
function checkEnds(roleIds: number[], until: RoleUntil): void {
  const now = Date.now();
  for (const [id, at] of Object.entries(until)) {
    const field = [{ field: 'assignedRoleUntil', description: 'a future RFC 3339 time for each of assignedRoleIDs' }];
    if (!roleIds.includes(Number(id))) throw new InputError(`role ${id} has an end but is not among the team's roles`, field);
    const t = Date.parse(at);
    if (!RFC3339.test(at) || Number.isNaN(t)) throw new InputError(`the end of role ${id} is not an RFC 3339 time: ${at}`, field);
    if (t <= now) throw new InputError(`the end of role ${id} has passed: ${at}`, field);
  }
}

/** Teams of organizations. */
export class Teams {
  private readonly organizations: OrganizationsStore;
  private readonly teams: TeamsStore;
  private readonly members: MembersStore;

  constructor(
    private readonly orgs: OrgsContext,
    private readonly authz: OrgAuthz,
  ) {
    this.organizations = OrganizationsStore.create(orgs.db, orgs.cache);
    this.teams = TeamsStore.create(orgs.db);
    this.members = MembersStore.create(orgs.db);
  }

  /** The team row; with orgId, 404 unless the team belongs to that organization. */
  async row(teamId: number, orgId?: number): Promise<TeamRow> {
    const row = await this.teams.find(teamId);
    if (!row || (orgId && row.org_id !== orgId)) throw new NotFoundError(`team ${teamId} does not exist`);
    return row;
  }

  private async present(rows: TeamRow[], org: OrgRow, ctx: CallContext): Promise<orgsTeamsOrgsV1.Team[]> {
    const roles = await this.authz.listTeamRoles(
      rows.map((r) => r.id),
      ctx,
    );
    return rows.map((r) => toTeam(r, org, roles.get(r.id)?.roleIds ?? [], roles.get(r.id)?.until ?? {}));
  }

  /**
   * One page of the organization's teams, owner team first, then by name. Not kept here: its readers keep the lists
   * they read (libs/orgs-teams-client), evicted by this service's notices and authz's.
   */
  async list(req: orgsTeamsOrgsV1.ListTeamsRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.ListTeamsResponse> {
    const org = await this.organizations.get(req.orgId);
    const { rows, total } = await this.teams.pageOfOrg(org.id, req.page);
    return { teams: await this.present(rows, org, ctx), total };
  }

  /** One page of the organization's teams whose name (or description, with includeDesc) contains `q`. */
  async search(req: orgsTeamsOrgsV1.SearchTeamsRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.ListTeamsResponse> {
    const org = await this.organizations.get(req.orgId);
    const { rows, total } = await this.teams.pageOfOrg(org.id, req.page, { q: req.q, includeDesc: req.includeDesc });
    return { teams: await this.present(rows, org, ctx), total };
  }

  /**
   * One page of the teams a user is in, across organizations, by name (Gitea's GET /user/teams), each with its
   * organization and custom roles. A service account is in no team: its rights are its roles.
   */
  async listOfUser(req: orgsTeamsOrgsV1.ListUserTeamsRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.ListTeamsResponse> {
    const person = await this.members.person({ id: req.userId });
    if (person.type === ACCOUNT_TYPE.serviceAccount) return { teams: [], total: 0 };
    const { rows, total } = await this.teams.pageOfMember(person.id, req.page);
    const orgs = new Map<number, OrgRow>();
    for (const orgId of new Set(rows.map((r) => r.org_id))) orgs.set(orgId, await this.organizations.get(orgId));
    const roles = await this.authz.listTeamRoles(
      rows.map((r) => r.id),
      ctx,
    );
    const teams = rows.map((r) => toTeam(r, orgs.get(r.org_id)!, roles.get(r.id)?.roleIds ?? [], roles.get(r.id)?.until ?? {}));
    return { teams, total };
  }

  /** One team; its custom roles only when asked, since they cost a call to authz. */
  async get(teamId: number, orgId: number | undefined, withRoles: boolean, ctx: CallContext): Promise<orgsTeamsOrgsV1.Team> {
    const row = await this.row(teamId, orgId);
    const org = await this.organizations.get(row.org_id);
    return withRoles ? (await this.present([row], org, ctx))[0] : toTeam(row, org, []);
  }

  /**
   * Creates a team, writes its tuples and attaches its custom roles; any failure leaves no team behind. The organization
   * is read by the statement that writes the team (an unknown one: 404, nothing written), not before: a kept read waits
   * for the notice stream to catch up, a question to NATS on every create. Only custom roles, checked against the
   * organization's, need it first.
   */
  async create(req: orgsTeamsOrgsV1.CreateTeamRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.Team> {
    checkName(req.name);
    checkType(req.type);
    const permission = req.permission || 'read';
    checkPermission(permission, CREATE_PERMISSIONS);
    if (req.units) checkUnits(req.units.units);
    const roleIds = req.roleIds?.roleIds ?? [];
    const until = req.roleIds?.until ?? {};
    if (roleIds.length) await this.organizations.get(req.orgId);
    await this.checkRoles(req.orgId, roleIds, until, ctx);

    // Its tuples written by the statement itself when authz keeps them here (OrgsContext), unless custom roles follow:
    // a refused role undoes the team, which the tuples' effect then takes back with it.
    const inStatement = !!this.orgs.tuplesInStatement && !roleIds.length && !Object.keys(until).length;
    const audit = inStatement ? req.audit : undefined;
    const created = await this.orgs.outbox
      .runInOne(
        async (entry) => {
          const inserted = await this.teams.insertInOne(
            req.orgId,
            { name: req.name, description: req.description, permission, type: req.type, units: req.units ? req.units.units : null },
            entry,
            (teamId) => (inStatement ? [] : teamCreated(req.orgId, teamId, roleIds, until)),
            inStatement,
            // The caller's audit event goes with the rows when nothing can undo them after the commit.
            audit,
          );
          if (!inserted) throw new NotFoundError(`organization ${req.orgId} does not exist`);
          return { result: inserted, row: inserted.written };
        },
        { call: ctx, undo: (trx, { row }) => this.teams.delete(row.id, trx) },
      )
      .catch(async (err) => {
        if (isUniqueViolation(err))
          throw new ConflictError(`team ${req.name} already exists in ${(await this.organizations.get(req.orgId)).login}`);
        throw err;
      });
    // Without custom roles the new team is the row just written; with them it is read back with the roles authz holds.
    if (roleIds.length) return this.get(created.row.id, req.orgId, true, ctx);
    return { ...toTeam(created.row, created.org), ...(audit && { auditRecorded: true }) };
  }

  /**
   * Changes a team. The owner team keeps its name and its permission (400). When role ids are given they
   * replace the team's custom roles; if that is refused the other changes are undone.
   */
  async edit(req: orgsTeamsOrgsV1.EditTeamRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.Team> {
    const before = await this.row(req.teamId);
    const isOwnerTeam = before.permission === OWNER_PERMISSION;
    checkName(req.name);
    if (isOwnerTeam && req.name !== before.name) throw new InputError(`the owner team ${before.name} cannot be renamed`);
    if (req.permission !== undefined) {
      if (isOwnerTeam && req.permission !== OWNER_PERMISSION)
        throw new InputError(`the permission of the owner team ${before.name} cannot be changed`);
      if (!isOwnerTeam) checkPermission(req.permission, EDIT_PERMISSIONS);
    }
    if (req.type !== undefined) checkType(req.type);
    if (req.units) checkUnits(req.units.units);
    if (req.roleIds) await this.checkRoles(before.org_id, req.roleIds.roleIds, req.roleIds.until, ctx);

    const changes: Partial<TeamFields> = { name: req.name };
    if (req.description !== undefined) changes.description = req.description;
    if (req.permission !== undefined) changes.permission = req.permission;
    if (req.type !== undefined) changes.type = req.type;
    if (req.units) changes.units = req.units.units;
    const restore: TeamFields = {
      name: before.name,
      description: before.description,
      permission: before.permission,
      type: before.type,
      units: before.units,
    };
    const previousRoles = req.roleIds ? await this.rolesOf(before.id, ctx) : { roleIds: [], until: {} };
    await this.orgs.outbox
      .run(
        async (trx, stage) => {
          await this.teams.update(before.id, changes, new Date(), trx);
          if (req.roleIds)
            stageTeamRoles(stage, {
              orgId: before.org_id,
              teamId: before.id,
              roleIds: req.roleIds.roleIds,
              until: req.roleIds.until,
              previous: previousRoles.roleIds,
              previousUntil: previousRoles.until,
            });
        },
        { call: ctx, undo: (trx) => this.teams.update(before.id, restore, before.updated_at, trx) },
      )
      .catch((err) => {
        if (isUniqueViolation(err)) throw new ConflictError(`another team is already named ${req.name}`);
        throw err;
      });
    return this.get(before.id, undefined, true, ctx);
  }

  /**
   * Deletes a team (400 for the owner team): its custom roles are detached, then its rows and tuples go;
   * members in no other team of the organization leave it. A failure puts everything back.
   */
  async delete(teamId: number, ctx: CallContext): Promise<void> {
    const team = await this.row(teamId);
    if (team.permission === OWNER_PERMISSION) throw new InputError(`the owner team ${team.name} cannot be deleted`);
    const roles = await this.rolesOf(team.id, ctx);

    await this.orgs.outbox.run(
      async (trx, stage) => {
        const uids = await this.members.uidsOfTeam(team.id, trx);
        await this.teams.delete(team.id, trx);
        // Members left without a team of the organization leave it.
        const leaving = await this.members.leaveOrgUnlessInTeam(team.org_id, uids, trx);
        // Roles first: authz detaches roles only from a team that is still the organization's.
        stageTeamRoles(stage, {
          orgId: team.org_id,
          teamId: team.id,
          roleIds: [],
          previous: roles.roleIds,
          previousUntil: roles.until,
        });
        stageTuples(stage, [...teamOfOrg(team.org_id, team.id), ...uids.map((uid) => teamMember(team.id, uid))]);
        return { uids, leaving };
      },
      {
        call: ctx,
        undo: async (trx, { uids, leaving }) => {
          await this.teams.restore(team, trx);
          await this.members.insertTeamMemberships(
            uids.map((uid) => ({ team_id: team.id, org_id: team.org_id, uid })),
            trx,
          );
          await this.members.insertOrgMemberships(
            leaving.map((l) => ({ org_id: team.org_id, ...l })),
            trx,
          );
        },
      },
    );
  }

  /**
   * 400 unless every role given is a custom role of the organization, and no more of them than a team may hold,
   * and every end is a future time of one of those roles.
   * Checked before anything is written or staged: authz would refuse them too, but only after the team's rows
   * committed, leaving an undo and a dropped outbox entry (an error in the log) for what is the caller's mistake.
   */
  private async checkRoles(orgId: number, roleIds: number[], until: RoleUntil, ctx: CallContext): Promise<void> {
    checkEnds(roleIds, until);
    if (roleIds.length === 0) return;
    const { ids: ofOrg, maxPerTeam } = await this.authz.rolesOf(orgId, ctx);
    const wanted = [...new Set(roleIds)];
    if (maxPerTeam > 0 && wanted.length > maxPerTeam)
      throw new InputError(`a team can have at most ${maxPerTeam} custom roles; ${wanted.length} were given`, [
        { field: 'assignedRoleIDs', description: `at most ${maxPerTeam} custom roles` },
      ]);
    const foreign = wanted.filter((id) => !ofOrg.has(id));
    if (foreign.length)
      throw new InputError(
        `role ${foreign.join(', ')} ${foreign.length === 1 ? 'is not a custom role' : 'are not custom roles'} of this organization`,
        [{ field: 'assignedRoleIDs', description: 'custom roles of the team’s organization only' }],
      );
  }

  /** A team's custom roles, ascending, with the ends of its time-bound ones. */
  private async rolesOf(teamId: number, ctx: CallContext): Promise<TeamRoles> {
    return (await this.authz.listTeamRoles([teamId], ctx)).get(teamId) ?? { roleIds: [], until: {} };
  }
}
