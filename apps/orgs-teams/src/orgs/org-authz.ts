import { authzRolesV1 } from '@platform/proto';
import { createClient, type CallOptions, type PromiseClient } from '@platform/service-kit';
import type { Relationships, Tuple } from '../relationships';

/**
 * What organizations and teams need from the authz service: tuple writes and the custom roles of teams. Each
 * call is made for `call` (a CallContext, or an outbox effect's): its request id, deadline and cancellation.
 */
export interface OrgAuthz {
  /** Writes and deletes atomically; throws when authz refuses or cannot be reached (see Relationships.write). */
  write(writes: Tuple[], deletes: Tuple[], call?: CallOptions, opts?: { idempotent?: boolean }): Promise<void>;
  /**
   * Replaces a team's custom roles (400 for roles of another organization or too many); `until` names the roles
   * held only until a time (role id to RFC 3339). Answers the new set.
   */
  assignTeamRoles(orgId: number, teamId: number, roleIds: number[], until?: RoleUntil, call?: CallOptions): Promise<number[]>;
  /** The custom roles of each team, ascending, with the ends of its time-bound ones; teams without roles are absent. */
  listTeamRoles(teamIds: number[], call?: CallOptions): Promise<Map<number, TeamRoles>>;
  /** Deletes every custom role of an organization (with its grants and assignments). */
  deleteOrgRoles(orgId: number, call?: CallOptions): Promise<void>;
  /** The ids of an organization's custom roles. */
  roleIdsOf(orgId: number, call?: CallOptions): Promise<Set<number>>;
  /** The organization's custom roles, and the most of them one team may hold (0: authz did not say). */
  rolesOf(orgId: number, call?: CallOptions): Promise<{ ids: Set<number>; maxPerTeam: number }>;
}

/** When each time-bound role of a team ends: role id to an RFC 3339 time. */
export type RoleUntil = Record<number, string>;

/** A team's custom roles, ascending, and the ends of those held only until a time. */
export interface TeamRoles {
  roleIds: number[];
  until: RoleUntil;
}

/** OrgAuthz over gRPC: AuthzService for tuples, RolesService for team roles. */
export class GrpcOrgAuthz implements OrgAuthz {
  private readonly roles: PromiseClient<typeof authzRolesV1.RolesServiceService>;

  constructor(
    private readonly relationships: Relationships,
    address: string,
  ) {
    this.roles = createClient(authzRolesV1.RolesServiceService, address, {
      name: 'authz',
      idempotent: ['listTeamRoles', 'listRoles', 'assignTeamRoles'],
    });
  }

  write(writes: Tuple[], deletes: Tuple[], call?: CallOptions, opts?: { idempotent?: boolean }): Promise<void> {
    return this.relationships.write(writes, deletes, call, opts);
  }

  async assignTeamRoles(orgId: number, teamId: number, roleIds: number[], until?: RoleUntil, call?: CallOptions): Promise<number[]> {
    const ends = until && Object.keys(until).length ? { until: { until } } : {};
    return (await this.roles.assignTeamRoles({ orgId, teamId, roleIds, ...ends }, call)).roleIds;
  }

  async listTeamRoles(teamIds: number[], call?: CallOptions): Promise<Map<number, TeamRoles>> {
    if (teamIds.length === 0) return new Map();
    const { teamRoles, teamRolesUntil } = await this.roles.listTeamRoles({ teamIds }, call);
    return new Map(
      Object.entries(teamRoles).map(([id, v]) => [Number(id), { roleIds: v.roleIds, until: teamRolesUntil[Number(id)]?.until ?? {} }]),
    );
  }

  async deleteOrgRoles(orgId: number, call?: CallOptions): Promise<void> {
    await this.roles.deleteOrgRoles({ orgId }, call);
  }

  async roleIdsOf(orgId: number, call?: CallOptions): Promise<Set<number>> {
    return (await this.rolesOf(orgId, call)).ids;
  }

  async rolesOf(orgId: number, call?: CallOptions): Promise<{ ids: Set<number>; maxPerTeam: number }> {
    const { roles, maxRolesPerTeam } = await this.roles.listRoles({ orgId }, call);
    return { ids: new Set(roles.map((r) => r.id)), maxPerTeam: maxRolesPerTeam };
  }

  close(): void {
    this.roles.close();
  }
}
