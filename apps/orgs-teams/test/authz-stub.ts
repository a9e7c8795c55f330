import { authzRolesV1, authzV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer } from '@platform/service-kit';
import { ConflictError, InputError, UnavailableError } from '@platform/errors';

/** What authz's MAX_ROLES_PER_TEAM answers in the tests. */
export const MAX_ROLES_PER_TEAM = 10;

/** The permissions custom roles may carry, as the stand-in's catalog lists them. */
export const CATALOG = [
  { namespace: 'team', action: 'add' },
  { namespace: 'team', action: 'view' },
];

export type Tuple = { user: string; relation: string; object: string };
export const key = (t: Tuple) => `${t.user} ${t.relation} ${t.object}`;

/**
 * A stand-in authz service for orgs-teams tests: a real gRPC server that keeps tuples as OpenFGA does
 * (writing an existing or deleting a missing tuple fails the whole call with a conflict, as the engines do,
 * unless the write is idempotent), keeps team roles, knows which organization each custom role is of (`roles`, set by
 * the test), and can fail tuple writes or role assignments on demand.
 */
export async function startAuthzStub() {
  const tuples = new Map<string, Tuple>();
  const teamRoles = new Map<number, number[]>();
  /** Team id → the ends of its time-bound roles, as last assigned. */
  const teamRolesUntil = new Map<number, Record<number, string>>();
  /** Custom role id → its organization. */
  const roles = new Map<number, number>();
  /** Custom role id → its name and teams, for the roles made through CreateRole (the import's). */
  const roleRows = new Map<number, { name: string; teamIds: number[] }>();
  const state = { failWrites: false, refuseRoles: false, calls: [] as string[], writes: 0 };
  const server = await startGrpcServer({
    name: 'authz-stub',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(authzV1.AuthzServiceService, {
        async writeTuples(req: authzV1.WriteTuplesRequest) {
          if (state.failWrites) throw new UnavailableError('authz is down');
          state.writes += 1;
          if (!req.idempotent) {
            for (const t of req.deletes) if (!tuples.has(key(t))) throw new ConflictError(`cannot delete a missing tuple ${key(t)}`);
            for (const t of req.writes) if (tuples.has(key(t))) throw new ConflictError(`cannot write an existing tuple ${key(t)}`);
          }
          for (const t of req.deletes) tuples.delete(key(t));
          for (const t of req.writes) tuples.set(key(t), t);
          return {};
        },
        async permissionCatalog() {
          return { permissions: CATALOG.map((p) => ({ ...p, description: '', associated: [] })) };
        },
      } as never),
      bindService(authzRolesV1.RolesServiceService, {
        async assignTeamRoles(req: authzRolesV1.AssignTeamRolesRequest) {
          state.calls.push(`assign ${req.teamId} [${req.roleIds.join(',')}]`);
          if (state.refuseRoles) throw new InputError('role 99 belongs to another organization');
          if (!tuples.has(`organization:${req.orgId} organization team:${req.teamId}`)) throw new InputError('unknown team');
          const ids = [...new Set(req.roleIds)].sort((a, b) => a - b);
          if (ids.length) teamRoles.set(req.teamId, ids);
          else teamRoles.delete(req.teamId);
          const until = req.until?.until ?? {};
          if (Object.keys(until).length) teamRolesUntil.set(req.teamId, until);
          else teamRolesUntil.delete(req.teamId);
          return { roleIds: ids };
        },
        async listTeamRoles(req: authzRolesV1.ListTeamRolesRequest) {
          const out: Record<number, { roleIds: number[] }> = {};
          const ends: Record<number, { until: Record<number, string> }> = {};
          for (const id of req.teamIds) if (teamRoles.has(id)) out[id] = { roleIds: teamRoles.get(id)! };
          for (const id of req.teamIds) if (teamRolesUntil.has(id)) ends[id] = { until: teamRolesUntil.get(id)! };
          return { teamRoles: out, teamRolesUntil: ends };
        },
        async listRoles(req: authzRolesV1.ListRolesRequest) {
          return {
            roles: [...roles]
              .filter(([, orgId]) => orgId === req.orgId)
              .map(([id]) => authzRolesV1.Role.fromPartial({ id, orgId: req.orgId, ...roleRows.get(id) })),
            maxRolesPerTeam: MAX_ROLES_PER_TEAM,
          };
        },
        async createRole(req: authzRolesV1.CreateRoleRequest) {
          state.calls.push(`create role ${req.name} of ${req.orgId} [${req.teamIds.join(',')}]`);
          for (const t of req.teamIds)
            if (!tuples.has(`organization:${req.orgId} organization team:${t}`))
              throw new InputError(`team ${t} is not a team of the organization`);
          const id = Math.max(0, ...roles.keys()) + 1;
          roles.set(id, req.orgId);
          roleRows.set(id, { name: req.name, teamIds: [...req.teamIds].sort((a, b) => a - b) });
          return authzRolesV1.Role.fromPartial({ id, orgId: req.orgId, name: req.name });
        },
        async updateRole(req: authzRolesV1.UpdateRoleRequest) {
          state.calls.push(`update role ${req.id} of ${req.orgId} [${req.teamIds?.teamIds.join(',')}]`);
          const row = roleRows.get(req.id)!;
          if (req.teamIds) row.teamIds = [...req.teamIds.teamIds].sort((a, b) => a - b);
          return authzRolesV1.Role.fromPartial({ id: req.id, orgId: req.orgId, ...row });
        },
        async deleteOrgRoles(req: authzRolesV1.DeleteOrgRolesRequest) {
          state.calls.push(`delete roles of ${req.orgId}`);
          return {};
        },
      } as never),
    ],
    protoFiles: ['platformadmin/authz/v1/authz.proto', 'platformadmin/authz/v1/roles.proto'],
    log: createLogger('authz-stub', 'silent'),
  });
  return { server, tuples, teamRoles, teamRolesUntil, roles, roleRows, state, address: `127.0.0.1:${server.port}` };
}

export type AuthzStub = Awaited<ReturnType<typeof startAuthzStub>>;
