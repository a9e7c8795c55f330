import type { Knex } from 'knex';
import { isUniqueViolation, type Database } from '@platform/db';
import { readObjects, readTag } from '../engine/recorded';

/** A permission as a role stores it: one namespace/action pair of the catalog. */
export interface RolePermission {
  namespace: string;
  action: string;
}

/** A row of authz.roles. */
export interface RoleRow {
  id: number;
  org_id: number;
  name: string;
  description: string;
  permissions: RolePermission[];
  created_at: Date;
  updated_at: Date;
}

/** A role with the teams it is assigned to (ascending). */
export interface StoredRole extends RoleRow {
  team_ids: number[];
}

/** Whether a database error is the unique index on (org_id, lower(name)). */
export function isDuplicateName(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; message?: string };
  return isUniqueViolation(err) && (e.constraint === 'roles_org_lower_name' || !!e.message?.includes('roles_org_lower_name'));
}

/** The rows of custom roles and their team assignments (authz.roles, authz.role_teams). */
export class RolesStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): RolesStore {
    return new RolesStore(db);
  }

  private roles(trx?: Knex.Transaction) {
    return this.db.table<RoleRow>('roles', trx);
  }

  private roleTeams(trx?: Knex.Transaction) {
    return this.db.table<{ role_id: number; team_id: number }>('role_teams', trx);
  }

  /** One role of an organization, or undefined. `lock` takes a row lock until the transaction ends. */
  async find(orgId: number, id: number, trx?: Knex.Transaction, lock = false): Promise<StoredRole | undefined> {
    const q = this.roles(trx).where({ org_id: orgId, id }).first();
    if (lock && trx) q.forUpdate();
    const row = (await q) as RoleRow | undefined;
    if (!row) return undefined;
    return { ...normalize(row), team_ids: await this.teamsOf([row.id], trx).then((m) => m.get(row.id) ?? []) };
  }

  /** Every role of an organization, oldest first. */
  async list(orgId: number, trx?: Knex.Transaction): Promise<StoredRole[]> {
    const rows: RoleRow[] = await this.roles(trx).where({ org_id: orgId }).orderBy('id');
    const teams = await this.teamsOf(
      rows.map((r) => r.id),
      trx,
    );
    return rows.map((r) => ({ ...normalize(r), team_ids: teams.get(r.id) ?? [] }));
  }

  /** Whether another role of the organization has this name (case-insensitive). */
  async nameTaken(orgId: number, name: string, trx: Knex.Transaction, exceptId?: number): Promise<boolean> {
    const q = this.roles(trx).where({ org_id: orgId }).whereRaw('lower(name) = lower(?)', [name]).first('id');
    if (exceptId !== undefined) q.whereNot({ id: exceptId });
    return !!(await q);
  }

  async insert(
    row: { org_id: number; name: string; description: string; permissions: RolePermission[] },
    trx: Knex.Transaction,
  ): Promise<RoleRow> {
    const [created] = await this.roles(trx)
      .insert({ ...row, permissions: JSON.stringify(row.permissions) as never })
      .returning('*');
    return normalize(created as RoleRow);
  }

  async update(
    id: number,
    fields: Partial<Pick<RoleRow, 'name' | 'description' | 'permissions'>>,
    trx: Knex.Transaction,
  ): Promise<RoleRow> {
    const patch: Record<string, unknown> = { ...fields, updated_at: this.db.knex.fn.now() };
    if (fields.permissions) patch.permissions = JSON.stringify(fields.permissions);
    const [row] = await this.roles(trx).where({ id }).update(patch).returning('*');
    return normalize(row as RoleRow);
  }

  /** Marks roles as changed now (their team assignments changed). */
  async touch(ids: number[], trx: Knex.Transaction): Promise<void> {
    if (ids.length)
      await this.roles(trx)
        .whereIn('id', ids)
        .update({ updated_at: this.db.knex.fn.now() as never });
  }

  async delete(id: number, trx: Knex.Transaction): Promise<void> {
    // role_teams rows go with it (on delete cascade).
    await this.roles(trx).where({ id }).delete();
  }

  /** Replaces the teams of one role; a team that keeps it keeps its end date. */
  async setTeamsOfRole(roleId: number, teamIds: number[], trx: Knex.Transaction): Promise<void> {
    await this.roleTeams(trx).where({ role_id: roleId }).whereNotIn('team_id', teamIds).delete();
    if (teamIds.length) {
      await this.roleTeams(trx)
        .insert(teamIds.map((team_id) => ({ role_id: roleId, team_id })))
        .onConflict(['role_id', 'team_id'])
        .ignore();
    }
  }

  /** Replaces the roles of one team, each until its date in `until` (role id to RFC 3339) or for good. */
  async setRolesOfTeam(teamId: number, roleIds: number[], trx: Knex.Transaction, until: Map<number, string> = new Map()): Promise<void> {
    await this.roleTeams(trx).where({ team_id: teamId }).delete();
    if (roleIds.length) {
      await this.roleTeams(trx).insert(roleIds.map((role_id) => ({ role_id, team_id: teamId, until: until.get(role_id) ?? null })));
    }
  }

  /** The end of each time-bound assignment among the teams' (or the role's), as `team:role` to RFC 3339. */
  async untilOf(filter: { teamIds?: number[]; roleId?: number }, trx?: Knex.Transaction): Promise<Map<string, string>> {
    const q = this.db.table<{ role_id: number; team_id: number; until: Date | null }>('role_teams', trx).whereNotNull('until');
    if (filter.teamIds) q.whereIn('team_id', filter.teamIds);
    if (filter.roleId !== undefined) q.where('role_id', filter.roleId);
    const rows: { role_id: number; team_id: number; until: Date | null }[] = await q.select('role_id', 'team_id', 'until');
    return new Map(rows.map((r) => [`${r.team_id}:${r.role_id}`, new Date(r.until!).toISOString()]));
  }

  /** The team ids of each role, ascending. */
  async teamsOf(roleIds: number[], trx?: Knex.Transaction): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (roleIds.length === 0) return out;
    const rows = await this.roleTeams(trx).whereIn('role_id', roleIds).orderBy(['role_id', 'team_id']);
    for (const r of rows) out.set(r.role_id, [...(out.get(r.role_id) ?? []), r.team_id]);
    return out;
  }

  /** The role ids of each team, ascending. */
  async rolesOf(teamIds: number[], trx?: Knex.Transaction): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (teamIds.length === 0) return out;
    const rows = await this.roleTeams(trx).whereIn('team_id', teamIds).orderBy(['team_id', 'role_id']);
    for (const r of rows) out.set(r.team_id, [...(out.get(r.team_id) ?? []), r.role_id]);
    return out;
  }

  /**
   * The permission sets of the organization's roles among `roleIds` and of those assigned to any of `teamIds`, in
   * one statement; roles of other organizations and unknown ids are left out.
   */
  async permissionsOf(orgId: number, roleIds: number[], teamIds: number[]): Promise<RolePermission[][]> {
    if (roleIds.length === 0 && teamIds.length === 0) return [];
    // Recorded as the tuples that go with these rows would be: a team's roles as its role assignments (`@team:12`, the
    // team's members as a role's assignees), a role's permissions as the role (a change of them names it).
    for (const team of teamIds) readTag(`@team:${team}`);
    const rows: Pick<RoleRow, 'id' | 'permissions'>[] = await this.roles()
      .where({ org_id: orgId })
      .where((q) => {
        q.whereIn('id', roleIds).orWhereIn('id', this.roleTeams().whereIn('team_id', teamIds).select('role_id'));
      })
      .select('id', 'permissions');
    readObjects('role', [...new Set([...roleIds, ...rows.map((r) => r.id)])].map(String));
    return rows.map((r) => normalize(r as RoleRow).permissions);
  }

  /** Which of the ids are roles of the organization. */
  async idsInOrg(orgId: number, ids: number[], trx: Knex.Transaction): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows: { id: number }[] = await this.roles(trx).where({ org_id: orgId }).whereIn('id', ids).select('id');
    return new Set(rows.map((r) => r.id));
  }
}

function normalize(row: RoleRow): RoleRow {
  const permissions = typeof row.permissions === 'string' ? (JSON.parse(row.permissions) as RolePermission[]) : row.permissions;
  return { ...row, permissions };
}
