import { useParams } from 'react-router';
import { api, ok, type Schema } from '../../api/client';
import { allPages } from './paging';

export type Team = Schema<'Team'>;
export type Role = Schema<'RoleResponse'>;
export type User = Schema<'User'>;

/** The organization the screen is about: `:org` of the route. */
export function useOrgName(): string {
  return useParams().org ?? '';
}

/** The owner team (`Owners`, permission `owner`): its name and permission are fixed, its members are the owners. */
export const isOwnerTeam = (team: Team) => team.permission === 'owner';

/** The custom-role ids of a team (`role_ids` is absent, or null, when it has none). */
export const roleIdsOf = (team: Team): number[] => team.role_ids ?? [];

/** Every team of the organization, owner team first, then by name. */
export function loadTeams(org: string): Promise<Team[]> {
  return allPages((page, limit) => api.GET('/orgs/{orgname}/teams', { params: { path: { orgname: org }, query: { page, limit } } }));
}

/** The custom roles of the organization (the `org` context names it). */
export function loadRoles(org: string): Promise<Role[]> {
  return ok(api.GET('/authz/roles', { params: { query: { org } } }));
}

/** Deletes a custom role with every grant it carried. */
export async function deleteRole(org: string, id: number): Promise<void> {
  await ok(api.DELETE('/authz/roles/{id}', { params: { path: { id }, query: { org } } }));
}

/** Names by id, for showing the ids one answer carries with the names another gives. */
export function namesById(things: { id: number; name: string }[]): Map<number, string> {
  return new Map(things.map((t) => [t.id, t.name]));
}

/** Ids as names, falling back to `#id` for one the caller cannot see. */
export function nameList(ids: number[], names: Map<number, string>): string {
  return ids.length ? ids.map((id) => names.get(id) ?? `#${id}`).join(', ') : '—';
}
