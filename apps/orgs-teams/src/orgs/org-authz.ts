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
  /** Replaces a team's custom roles (400 for roles of another organization or too many); answers the new set. */
  assignTeamRoles(orgId: number, teamId: number, roleIds: number[], call?: CallOptions): Promise<number[]>;
  /** The custom roles of each team, ascending; teams without roles are absent. */
  listTeamRoles(teamIds: number[], call?: CallOptions): Promise<Map<number, number[]>>;
  /** Deletes every custom role of an organization (with its grants and assignments). */
  deleteOrgRoles(orgId: number, call?: CallOptions): Promise<void>;
  /** The ids of an organization's custom roles. */
  roleIdsOf(orgId: number, call?: CallOptions): Promise<Set<number>>;
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

  async assignTeamRoles(orgId: number, teamId: number, roleIds: number[], call?: CallOptions): Promise<number[]> {
    return (await this.roles.assignTeamRoles({ orgId, teamId, roleIds }, call)).roleIds;
  }

  async listTeamRoles(teamIds: number[], call?: CallOptions): Promise<Map<number, number[]>> {
    if (teamIds.length === 0) return new Map();
    const { teamRoles } = await this.roles.listTeamRoles({ teamIds }, call);
    return new Map(Object.entries(teamRoles).map(([id, v]) => [Number(id), v.roleIds]));
  }

  async deleteOrgRoles(orgId: number, call?: CallOptions): Promise<void> {
    await this.roles.deleteOrgRoles({ orgId }, call);
  }

  async roleIdsOf(orgId: number, call?: CallOptions): Promise<Set<number>> {
    return new Set((await this.roles.listRoles({ orgId }, call)).roles.map((r) => r.id));
  }

  close(): void {
    this.roles.close();
  }
}
