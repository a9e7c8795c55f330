import { authzRolesV1, authzV1 } from '@platform/proto';
import { createClient, type CallOptions, type PromiseClient } from '@platform/service-kit';
import { permissionKey, type Catalog } from './import-checks';

/** A custom role of an organization as the import compares it: its id and the teams it is assigned to. */
export interface ExistingRole {
  id: number;
  teamIds: number[];
}

/**
 * What the import needs of authz's custom roles: the catalog a role's permissions are checked against, the roles an
 * organization has by name, and the writes the custom-role routes make (CreateRole with its teams, UpdateRole's team
 * list), so an imported role is stored, tupled and assigned exactly as one made through `POST /authz/roles`.
 */
export interface ImportRoles {
  catalog(call?: CallOptions): Promise<Catalog>;
  /** The organization's roles, by lower-cased name. */
  rolesOf(orgId: number, call?: CallOptions): Promise<Map<string, ExistingRole>>;
  create(
    orgId: number,
    role: { name: string; description: string; permissions: { namespace: string; action: string }[] },
    teamIds: number[],
    call?: CallOptions,
  ): Promise<void>;
  /** Replaces the teams a role is assigned to. */
  assign(orgId: number, roleId: number, teamIds: number[], call?: CallOptions): Promise<void>;
}

/** ImportRoles over gRPC: authz's RolesService and AuthzService. */
export class GrpcImportRoles implements ImportRoles {
  private readonly roles: PromiseClient<typeof authzRolesV1.RolesServiceService>;
  private readonly authz: PromiseClient<typeof authzV1.AuthzServiceService>;

  constructor(address: string) {
    this.roles = createClient(authzRolesV1.RolesServiceService, address, { name: 'authz', idempotent: ['listRoles'] });
    this.authz = createClient(authzV1.AuthzServiceService, address, { name: 'authz', idempotent: ['permissionCatalog'] });
  }

  async catalog(call?: CallOptions): Promise<Catalog> {
    const { permissions } = await this.authz.permissionCatalog({}, call);
    return new Set(permissions.map(permissionKey));
  }

  async rolesOf(orgId: number, call?: CallOptions): Promise<Map<string, ExistingRole>> {
    const { roles } = await this.roles.listRoles({ orgId }, call);
    return new Map(roles.map((r) => [r.name.trim().toLowerCase(), { id: r.id, teamIds: r.teamIds }]));
  }

  async create(
    orgId: number,
    role: { name: string; description: string; permissions: { namespace: string; action: string }[] },
    teamIds: number[],
    call?: CallOptions,
  ): Promise<void> {
    await this.roles.createRole(
      { orgId, name: role.name.trim(), description: role.description, permissions: role.permissions, teamIds },
      call,
    );
  }

  async assign(orgId: number, roleId: number, teamIds: number[], call?: CallOptions): Promise<void> {
    await this.roles.updateRole({ orgId, id: roleId, teamIds: { teamIds } }, call);
  }

  close(): void {
    this.roles.close();
    this.authz.close();
  }
}
