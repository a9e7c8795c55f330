import type { Knex } from 'knex';
import { InputError, NotFoundError, quote } from '@platform/errors';
import type { Database } from '@platform/db';
import { checkLengths, TEXT_LIMITS, type LengthCheck, type Logger } from '@platform/service-kit';
import type { AuthzEngine, Tuple } from '../engine';
import { assignableOf, isAssignable, roleGrantTuples } from '../permissions';
import { isDuplicateName, RolesStore, type RolePermission, type StoredRole } from './roles-store';
import { RowsAndTuples, tupleDiff, type TupleReader } from './unit-of-work';

/** Longest role name and description accepted (docs/limits.md). */
export const MAX_ROLE_NAME_LENGTH = TEXT_LIMITS.roleName;
export const MAX_ROLE_DESCRIPTION_LENGTH = TEXT_LIMITS.description;

export interface RolesOptions {
  /** Most custom roles one team may be assigned (MAX_ROLES_PER_TEAM). */
  maxRolesPerTeam: number;
  log?: Logger;
}

export interface CreateRoleInput {
  orgId: number;
  name: string;
  description: string;
  permissions: RolePermission[];
  teamIds: number[];
}

export interface UpdateRoleInput {
  orgId: number;
  id: number;
  name?: string;
  description?: string;
  /** When given, replaces the whole set. */
  permissions?: RolePermission[];
  /** When given, replaces the assignments. */
  teamIds?: number[];
}

/** A team the role is assigned to, or a user it reaches through such a team (or a direct assignment). */
export interface Principal {
  type: 'team' | 'user';
  id: number;
  /** For a user: the assigned teams they are a member of, ascending. */
  viaTeamIds: number[];
}

// The tuples of the shared contract (docs/custom-roles.md).
const roleObject = (id: number) => `role:${id}`;
const orgObject = (id: number) => `organization:${id}`;
const orgTuple = (orgId: number, roleId: number): Tuple => ({
  user: orgObject(orgId),
  relation: 'organization',
  object: roleObject(roleId),
});
/** The team's members hold the role: for good, or until a time (the model's `not_after` condition). */
const teamAssignee = (teamId: number, roleId: number, until?: string): Tuple => ({
  user: `team:${teamId}#member`,
  relation: 'assignee',
  object: roleObject(roleId),
  ...(until && { condition: { name: 'not_after', context: { expires_at: until } } }),
});

/** Role id to RFC 3339 end, checked: each a role given, each a valid time in the future. */
function checkUntil(until: Record<number, string>, roleIds: number[], now = Date.now()): Map<number, string> {
  const out = new Map<number, string>();
  for (const [key, value] of Object.entries(until)) {
    const roleId = Number(key);
    if (!value) continue;
    if (!roleIds.includes(roleId)) throw new InputError(`until names role ${key}, which is not among the roles given`);
    const at = Date.parse(value);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at))
      throw new InputError(`until of role ${key} must be an RFC 3339 time, not '${value}'`);
    if (at <= now) throw new InputError(`until of role ${key} must be in the future`);
    out.set(roleId, new Date(at).toISOString());
  }
  return out;
}

function assertId(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new InputError(`${what} must be a positive integer`);
}

const unique = <T>(items: T[]) => [...new Set(items)];

/** Custom roles of organizations: rows in authz.roles/role_teams, made effective by tuples. */
export class Roles {
  private readonly store: RolesStore;
  private readonly unit: RowsAndTuples;

  constructor(
    db: Database,
    private readonly engine: AuthzEngine,
    private readonly opts: RolesOptions,
  ) {
    this.store = RolesStore.create(db);
    this.unit = new RowsAndTuples(db, engine, opts.log);
  }

  async create(input: CreateRoleInput): Promise<StoredRole> {
    assertId(input.orgId, 'org id');
    const name = checkName(input.name);
    checkDescription(input.description);
    const permissions = checkPermissions(input.permissions);
    const teamIds = await this.checkTeams(input.orgId, input.teamIds);
    return this.unit.run(async (trx) => {
      if (await this.store.nameTaken(input.orgId, name, trx)) throw duplicateName(name);
      await this.checkTeamCapacity(teamIds, undefined, trx);
      const row = await this.store
        .insert({ org_id: input.orgId, name, description: input.description ?? '', permissions }, trx)
        .catch(rethrowName(name));
      await this.store.setTeamsOfRole(row.id, teamIds, trx);
      const desired = [
        orgTuple(input.orgId, row.id),
        ...roleGrantTuples(row.id, input.orgId, permissions),
        ...teamIds.map((t) => teamAssignee(t, row.id)),
      ];
      return { result: { ...row, team_ids: [...teamIds].sort((a, b) => a - b) }, writes: desired, deletes: [] };
    });
  }

  async get(orgId: number, id: number): Promise<StoredRole> {
    assertId(orgId, 'org id');
    assertId(id, 'role id');
    const role = await this.store.find(orgId, id);
    if (!role) throw notFound(id);
    return role;
  }

  /** Most custom roles one team may be assigned (MAX_ROLES_PER_TEAM). */
  get maxRolesPerTeam(): number {
    return this.opts.maxRolesPerTeam;
  }

  async list(orgId: number): Promise<StoredRole[]> {
    assertId(orgId, 'org id');
    return this.store.list(orgId);
  }

  async update(input: UpdateRoleInput): Promise<StoredRole> {
    assertId(input.orgId, 'org id');
    assertId(input.id, 'role id');
    const name = input.name !== undefined ? checkName(input.name) : undefined;
    checkDescription(input.description);
    const permissions = input.permissions !== undefined ? checkPermissions(input.permissions) : undefined;
    const teamIds = input.teamIds !== undefined ? await this.checkTeams(input.orgId, input.teamIds) : undefined;
    return this.unit.run(async (trx, tuples) => {
      const current = await this.store.find(input.orgId, input.id, trx, true);
      if (!current) throw notFound(input.id);
      if (name !== undefined && (await this.store.nameTaken(input.orgId, name, trx, input.id))) throw duplicateName(name);
      if (teamIds)
        await this.checkTeamCapacity(
          teamIds.filter((t) => !current.team_ids.includes(t)),
          input.id,
          trx,
        );
      const row = await this.store
        .update(
          input.id,
          {
            ...(name !== undefined && { name }),
            ...(input.description !== undefined && { description: input.description }),
            ...(permissions && { permissions }),
          },
          trx,
        )
        .catch(rethrowName(name ?? ''));
      if (teamIds) await this.store.setTeamsOfRole(input.id, teamIds, trx);
      const team_ids = teamIds ? [...teamIds].sort((a, b) => a - b) : current.team_ids;
      const actual = await this.ownedTuples(tuples, input.orgId, input.id, { directAssignees: false });
      const until = await this.store.untilOf({ roleId: input.id }, trx);
      const desired = [
        orgTuple(input.orgId, input.id),
        // Stored permissions the catalog no longer offers grant nothing.
        ...roleGrantTuples(
          input.id,
          input.orgId,
          row.permissions.filter((p) => isAssignable(p.namespace, p.action)),
        ),
        ...team_ids.map((t) => teamAssignee(t, input.id, until.get(`${t}:${input.id}`))),
      ];
      return { result: { ...row, team_ids }, ...tupleDiff(actual, desired) };
    });
  }

  /** Deletes the role with every tuple it had: its grants, its team assignments and its organization link. */
  async delete(orgId: number, id: number): Promise<void> {
    assertId(orgId, 'org id');
    assertId(id, 'role id');
    await this.unit.run(async (trx, tuples) => {
      const current = await this.store.find(orgId, id, trx, true);
      if (!current) throw notFound(id);
      await this.store.delete(id, trx);
      const actual = await this.ownedTuples(tuples, orgId, id, { directAssignees: true });
      return { result: undefined, writes: [], deletes: actual };
    });
  }

  /** Deletes every role of an organization with all their tuples (the organization is being deleted). */
  async deleteOrgRoles(orgId: number): Promise<number[]> {
    assertId(orgId, 'org id');
    return this.unit.run(async (trx, tuples) => {
      const ids = (await this.store.list(orgId, trx)).map((r) => r.id);
      const deletes: Tuple[] = [];
      for (const id of ids) {
        await this.store.delete(id, trx);
        deletes.push(...(await this.ownedTuples(tuples, orgId, id, { directAssignees: true })));
      }
      return { result: ids, writes: [], deletes };
    });
  }

  /** The teams assigned the role and the users it reaches: teams first, then users, each by ascending id. */
  async principals(orgId: number, id: number): Promise<Principal[]> {
    await this.get(orgId, id);
    const assignees = await this.engine.readTuples({ object: roleObject(id), relation: 'assignee' });
    const teams = new Set<number>();
    const users = new Map<number, Set<number>>();
    for (const t of assignees) {
      const m = /^(team|user):(\d+)(#member)?$/.exec(t.user);
      if (!m) continue;
      if (m[1] === 'team' && m[3]) teams.add(Number(m[2]));
      else if (m[1] === 'user' && !m[3]) users.set(Number(m[2]), users.get(Number(m[2])) ?? new Set());
    }
    for (const team of teams) {
      for (const t of await this.engine.readTuples({ object: `team:${team}`, relation: 'member' })) {
        const m = /^user:(\d+)$/.exec(t.user);
        if (!m) continue;
        const via = users.get(Number(m[1])) ?? new Set<number>();
        via.add(team);
        users.set(Number(m[1]), via);
      }
    }
    const asc = (a: number, b: number) => a - b;
    return [
      ...[...teams].sort(asc).map((t) => ({ type: 'team' as const, id: t, viaTeamIds: [] })),
      ...[...users.keys()].sort(asc).map((u) => ({ type: 'user' as const, id: u, viaTeamIds: [...users.get(u)!].sort(asc) })),
    ];
  }

  /**
   * Replaces the roles of one team. The roles must be roles of the organization and at most
   * MAX_ROLES_PER_TEAM; the team must be one of the organization's (unless no roles are given, so a team
   * being deleted can be cleared after its own tuples are gone).
   */
  async assignTeamRoles(teamId: number, orgId: number, roleIds: number[], until: Record<number, string> = {}): Promise<number[]> {
    assertId(teamId, 'team id');
    assertId(orgId, 'org id');
    roleIds.forEach((r) => assertId(r, 'role id'));
    const wanted = unique(roleIds).sort((a, b) => a - b);
    const ends = checkUntil(until, wanted);
    if (wanted.length > this.opts.maxRolesPerTeam) {
      throw new InputError(`a team can have at most ${this.opts.maxRolesPerTeam} custom roles; ${wanted.length} were given`);
    }
    if (wanted.length) await this.checkTeams(orgId, [teamId]);
    return this.unit.run(async (trx, tuples) => {
      const inOrg = await this.store.idsInOrg(orgId, wanted, trx);
      const foreign = wanted.filter((r) => !inOrg.has(r));
      if (foreign.length) throw new InputError(`role ${foreign.join(', ')} is not a custom role of organization ${orgId}`);
      const before = (await this.store.rolesOf([teamId], trx)).get(teamId) ?? [];
      await this.store.setRolesOfTeam(teamId, wanted, trx, ends);
      await this.store.touch(
        unique([...before, ...wanted]).filter((r) => before.includes(r) !== wanted.includes(r)),
        trx,
      );
      const actual = await tuples.readTuples({ user: `team:${teamId}#member`, relation: 'assignee', object: 'role:' });
      return {
        result: wanted,
        ...tupleDiff(
          actual,
          wanted.map((r) => teamAssignee(teamId, r, ends.get(r))),
        ),
      };
    });
  }

  /**
   * What a change would give that the user does not hold on the organization, so that no one gives more than they
   * hold: of `permissions`, of every permission of the roles `roleIds` and of the roles the teams `teamIds` carry,
   * those whose grant relation the user lacks there, as `action:namespace` in catalog order (empty: allowed).
   * Owners and site admins hold every grant relation. Pairs a role may not carry and roles of other organizations
   * count for nothing here: the write refuses them (400). One statement for the roles, one engine call.
   */
  async missingGrants(userId: number, orgId: number, given: { permissions: RolePermission[]; roleIds: number[]; teamIds: number[] }) {
    assertId(userId, 'user id');
    assertId(orgId, 'org id');
    given.roleIds.forEach((r) => assertId(r, 'role id'));
    given.teamIds.forEach((t) => assertId(t, 'team id'));
    const ofRoles = await this.store.permissionsOf(orgId, unique(given.roleIds), unique(given.teamIds));
    const carried = assignableOf([...given.permissions, ...ofRoles.flat()]);
    if (carried.length === 0) return [];
    const held = new Set(await this.engine.listRelations(`user:${userId}`, orgObject(orgId), unique(carried.map((p) => p.grant!))));
    return carried.filter((p) => !held.has(p.grant!)).map((p) => p.name);
  }

  /** The roles of each team that has any, ascending. */
  async listTeamRoles(teamIds: number[]): Promise<Map<number, number[]>> {
    teamIds.forEach((t) => assertId(t, 'team id'));
    return this.store.rolesOf(unique(teamIds));
  }

  /** When each time-bound assignment of the teams ends: team id to (role id to RFC 3339). */
  async teamRolesUntil(teamIds: number[]): Promise<Map<number, Map<number, string>>> {
    teamIds.forEach((t) => assertId(t, 'team id'));
    const out = new Map<number, Map<number, string>>();
    if (teamIds.length === 0) return out;
    for (const [key, until] of await this.store.untilOf({ teamIds: unique(teamIds) })) {
      const [team, role] = key.split(':').map(Number);
      if (!out.has(team)) out.set(team, new Map());
      out.get(team)!.set(role, until);
    }
    return out;
  }

  /** Deduplicated team ids, each a team of the organization (tuple organization:<org> organization team:<team>). */
  private async checkTeams(orgId: number, teamIds: number[]): Promise<number[]> {
    teamIds.forEach((t) => assertId(t, 'team id'));
    const ids = unique(teamIds);
    if (ids.length === 0) return ids;
    const held = await this.engine.batchCheck(ids.map((t) => ({ user: orgObject(orgId), relation: 'organization', object: `team:${t}` })));
    const foreign = ids.filter((_, i) => !held[i]);
    if (foreign.length) throw new InputError(`team ${foreign.join(', ')} is not a team of organization ${orgId}`);
    return ids;
  }

  /** Refuses to give a team one role more when it already has the maximum (roles other than `exceptRole`). */
  private async checkTeamCapacity(teamIds: number[], exceptRole: number | undefined, trx: Knex.Transaction): Promise<void> {
    const current = await this.store.rolesOf(teamIds, trx);
    for (const team of teamIds) {
      const others = (current.get(team) ?? []).filter((r) => r !== exceptRole);
      if (others.length + 1 > this.opts.maxRolesPerTeam) {
        throw new InputError(`team ${team} already has the maximum of ${this.opts.maxRolesPerTeam} custom roles`);
      }
    }
  }

  /** The tuples a role owns: on role:<id> (organization link, team assignments, and direct user ones if asked) and its grants. */
  private async ownedTuples(tuples: TupleReader, orgId: number, id: number, opts: { directAssignees: boolean }): Promise<Tuple[]> {
    const onRole = await tuples.readTuples({ object: roleObject(id) });
    const grants = await tuples.readTuples({ object: orgObject(orgId), user: `role:${id}#assignee` });
    return [...onRole.filter((t) => opts.directAssignees || t.relation !== 'assignee' || t.user.startsWith('team:')), ...grants];
  }
}

function checkName(raw: string): string {
  const name = (raw ?? '').trim();
  if (!name) throw new InputError('name must not be empty', [{ field: 'name', description: 'required' }]);
  if (name.length > MAX_ROLE_NAME_LENGTH)
    throw new InputError(`name must be at most ${MAX_ROLE_NAME_LENGTH} characters`, [
      { field: 'name', description: `at most ${MAX_ROLE_NAME_LENGTH} characters` },
    ]);
  return name;
}

/** A description is stored and served in every role list: at most MAX_ROLE_DESCRIPTION_LENGTH characters. */
function checkDescription(description: string | undefined): void {
  checkLengths([['description', description, MAX_ROLE_DESCRIPTION_LENGTH]]);
}

/** The permissions deduplicated in the order given; unknown or unassignable ones are an input error naming them all. */
function checkPermissions(permissions: RolePermission[]): RolePermission[] {
  checkLengths(
    permissions.flatMap((p, i): LengthCheck[] => [
      [`permissions[${i}].namespace`, p.namespace, TEXT_LIMITS.permissionPart],
      [`permissions[${i}].action`, p.action, TEXT_LIMITS.permissionPart],
    ]),
  );
  const bad = permissions.filter((p) => !isAssignable(p.namespace, p.action));
  if (bad.length) {
    const names = unique(bad.map((p) => `${p.action}:${p.namespace}`));
    const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? ` and ${names.length - 10} more` : '');
    throw new InputError(`permission ${shown} is unknown or cannot be assigned to a custom role`, [
      { field: 'permissions', description: 'see GET /authz/roles/available_permissions' },
    ]);
  }
  const seen = new Set<string>();
  return permissions
    .map((p) => ({ namespace: p.namespace, action: p.action }))
    .filter((p) => {
      const k = `${p.namespace}\u0000${p.action}`;
      return !seen.has(k) && (seen.add(k), true);
    });
}

const notFound = (id: number) => new NotFoundError(`role ${id} does not exist in this organization`);
// The spec lists 400 (not 409) for the role writes; a duplicate name is an invalid request there.
const duplicateName = (name: string) => new InputError(`a role named ${quote(name)} already exists in this organization`);
const rethrowName = (name: string) => (err: unknown) => {
  throw isDuplicateName(err) ? duplicateName(name) : err;
};
