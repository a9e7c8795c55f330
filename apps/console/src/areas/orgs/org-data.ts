import { useParams } from 'react-router';
import type { Team } from './api';

export type { Role, Team, User } from './api';

/** The organization the screen is about: `:org` of the route. */
export function useOrgName(): string {
  return useParams().org ?? '';
}

/** The owner team (`Owners`, permission `owner`): its name and permission are fixed, its members are the owners. */
export const isOwnerTeam = (team: Team) => team.permission === 'owner';

/** The custom-role ids of a team (`role_ids` is absent, or null, when it has none). */
export const roleIdsOf = (team: Team): number[] => team.role_ids ?? [];
/** When each time-bound role of a team ends (role id to RFC 3339); none for a new team. */
export const roleUntilOf = (team: Team | undefined): Record<string, string> => team?.role_until ?? {};

/** Names by id, for showing the ids one answer carries with the names another gives. */
export function namesById(things: { id: number; name: string }[]): Map<number, string> {
  return new Map(things.map((t) => [t.id, t.name]));
}

/** Ids as names, falling back to `#id` for one the caller cannot see. */
export function nameList(ids: number[], names: Map<number, string>): string {
  return ids.length ? ids.map((id) => names.get(id) ?? `#${id}`).join(', ') : '—';
}
