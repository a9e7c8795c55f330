import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, ok, type Schema } from '../../api/client';
import type { operations } from '../../api/gen/schema';
import { allPages, pageOf } from './paging';
import type { roleBody } from './role-form';
import type { teamBody } from './team-form';

/**
 * The organizations area's server state: the query keys (what a screen shows, under the organization's name so a
 * change invalidates everything of that organization it touches), the fetchers, and the changes.
 */

export type Team = Schema<'Team'>;
export type Role = Schema<'RoleResponse'>;
export type User = Schema<'User'>;

export const orgKeys = {
  /** The caller's organizations, by page (under `user`: an organization may be named anything, `mine` too). */
  mine: (page: number) => ['user', 'orgs', page] as const,
  org: (org: string) => ['orgs', org] as const,
  members: (org: string) => ['orgs', org, 'members'] as const,
  memberPage: (org: string, page: number) => ['orgs', org, 'members', page] as const,
  teams: (org: string) => ['orgs', org, 'teams'] as const,
  team: (org: string, teamid: number) => ['orgs', org, 'teams', teamid] as const,
  teamMembers: (org: string, teamid: number) => ['orgs', org, 'teams', teamid, 'members'] as const,
  teamMemberCount: (org: string, teamid: number) => ['orgs', org, 'teams', teamid, 'members', 'count'] as const,
  roles: (org: string) => ['orgs', org, 'roles'] as const,
  principals: (org: string, id: number) => ['orgs', org, 'roles', id, 'principals'] as const,
  catalog: (org: string) => ['orgs', org, 'permission-catalog'] as const,
  busTokens: (org: string) => ['orgs', org, 'bus-tokens'] as const,
  accessTokens: (org: string) => ['orgs', org, 'access-tokens'] as const,
  avatar: (org: string) => ['orgs', org, 'avatar'] as const,
  /** What the caller may do on one object of the organization (its relations), for the buttons it is offered. */
  allowed: (org: string, objectType: string, id: number | undefined) => ['orgs', org, 'allowed', objectType, id] as const,
  /** Who holds what on the organization or one of its contracts or clusters (any change of the organization refreshes it). */
  access: (org: string, objectType: string, id: string) => ['orgs', org, 'access', objectType, id] as const,
  /** The contracts and clusters of the organization, by name, that who-has-access may be asked about. */
  accessObjects: (org: string) => ['orgs', org, 'access-objects'] as const,
};

/** Users found by what was typed (`GET /users/search`), under `users`: no organization's change touches them. */
export const userKeys = {
  search: (q: string) => ['users', 'search', q] as const,
};

/** The first `limit` users whose login or full name contains `q` (any signed-in user may search). */
export const searchUsers = (q: string, limit: number) =>
  ok(api.GET('/users/search', { params: { query: { q, limit } } })).then((found) => found.data);

const MEMBER_PAGE = 30;
export const MEMBER_PAGE_SIZE = MEMBER_PAGE;

export const fetchMyOrgs = (page: number, limit: number) => pageOf(api.GET('/user/orgs', { params: { query: { page, limit } } }));
export const fetchOrg = (org: string) => ok(api.GET('/orgs/{orgname}', { params: { path: { orgname: org } } }));

/** One page of members, with which of all members are public (the public-member list says who is). */
export async function fetchMemberPage(org: string, page: number) {
  const [list, publicOnes] = await Promise.all([
    pageOf(api.GET('/orgs/{orgname}/members', { params: { path: { orgname: org }, query: { page, limit: MEMBER_PAGE } } })),
    allPages((p, limit) => api.GET('/orgs/{orgname}/public_members', { params: { path: { orgname: org }, query: { page: p, limit } } })),
  ]);
  return { ...list, publicIds: new Set(publicOnes.map((u) => u.id)) };
}

/** Every team of the organization, owner team first, then by name. */
export function fetchTeams(org: string): Promise<Team[]> {
  return allPages((page, limit) => api.GET('/orgs/{orgname}/teams', { params: { path: { orgname: org }, query: { page, limit } } }));
}

export const fetchTeam = (teamid: number) => ok(api.GET('/teams/{teamid}', { params: { path: { teamid } } }));
export const fetchTeamMembers = (teamid: number) =>
  allPages((page, limit) => api.GET('/teams/{teamid}/members', { params: { path: { teamid }, query: { page, limit } } }));
/** A team's member count: one member asked for, the count on all pages read from `X-Total-Count`. */
export const fetchTeamMemberCount = (teamid: number) =>
  pageOf(api.GET('/teams/{teamid}/members', { params: { path: { teamid }, query: { page: 1, limit: 1 } } })).then((p) => p.total);

/** The custom roles of the organization (the `org` context names it). */
export const fetchRoles = (org: string): Promise<Role[]> => ok(api.GET('/authz/roles', { params: { query: { org } } }));
/** The catalog's entries, as the roles screen offers them. */
export const fetchCatalog = (org: string) =>
  ok(api.GET('/authz/roles/available_permissions', { params: { query: { org } } })).then((c) => c.permissions);
export const fetchPrincipals = (org: string, id: number) =>
  ok(api.GET('/authz/roles/{id}/principals', { params: { path: { id }, query: { org } } }));
export const fetchBusTokens = (org: string) => ok(api.GET('/orgs/{orgname}/tokens/bus-tokens', { params: { path: { orgname: org } } }));
export const fetchAccessTokens = (org: string) =>
  ok(api.GET('/orgs/{orgname}/tokens/access-tokens', { params: { path: { orgname: org } } }));

/** The URL the organization's avatar is shown from (a signed URL of the platform's, or a lookup service's). */
export const fetchAvatar = (org: string) => ok(api.GET('/orgs/{orgname}/avatar/', { params: { path: { orgname: org } } }));

export const useOrg = (org: string) => useQuery({ queryKey: orgKeys.org(org), queryFn: () => fetchOrg(org) });
export const useTeams = (org: string) => useQuery({ queryKey: orgKeys.teams(org), queryFn: () => fetchTeams(org) });
export const useRoles = (org: string) => useQuery({ queryKey: orgKeys.roles(org), queryFn: () => fetchRoles(org) });
export const useCatalog = (org: string) =>
  useQuery({ queryKey: orgKeys.catalog(org), queryFn: () => fetchCatalog(org), staleTime: Infinity });

/**
 * The relations the caller holds on an object of the organization (`GET /authz/objects/{type}/{id}/allowed-permissions`,
 * docs/permissions.md), to offer only the buttons the API would accept. While it is unknown nothing is offered; a
 * caller the question is refused to (not a member) holds nothing. The API checks every request anyway.
 */
export function useAllowed(org: string, objectType: 'organization' | 'team', id: number | undefined) {
  const allowed = useQuery({
    queryKey: orgKeys.allowed(org, objectType, id),
    enabled: id !== undefined,
    queryFn: async () => {
      try {
        const answer = await ok(
          api.GET('/authz/objects/{objectType}/{objID}/allowed-permissions', {
            params: { path: { objectType, objID: id! }, query: { org } },
          }),
        );
        return answer.allowedPermissions;
      } catch (err) {
        if (err instanceof ApiError && (err.status === 403 || err.status === 404)) return [];
        throw err;
      }
    },
  });
  const held = new Set(allowed.data ?? []);
  // `known`: the answer is in, so what is not held is not held (before it, nothing is offered and nothing refused).
  return Object.assign((relation: string) => held.has(relation), { known: allowed.data !== undefined });
}

/** What the caller may do in the organization (its relations on it), `can('admin')`. */
export function useOrgAllowed(org: string) {
  return useAllowed(org, 'organization', useOrg(org).data?.id);
}

// Changes. Each invalidates what it changes, wherever it is shown (another screen showing it refreshes too).

export function useCreateOrg() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { username: string; full_name: string; description: string; visibility: string }) => ok(api.POST('/orgs', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['user', 'orgs'] }),
  });
}

/** What `PATCH /orgs/{org}` takes (EditOrgOption): the fields sent change, the others stay. */
export type OrgEdit = operations['orgEdit']['requestBody']['content']['application/json'];

/** Edits the organization (`PATCH /orgs/{org}`, `edit:org`): its page, the caller's list and the admins' list show it. */
export function useEditOrg(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: OrgEdit) => ok(api.PATCH('/orgs/{orgname}', { params: { path: { orgname: org } }, body })),
    onSuccess: (saved) => {
      client.setQueryData(orgKeys.org(org), saved);
      return Promise.all([client.invalidateQueries({ queryKey: ['user', 'orgs'] }), client.invalidateQueries({ queryKey: ['admin', 'orgs'] })]);
    },
  });
}

/** A new avatar image (`update:avatar`), as the multipart form's `avatar` file; answers the URL it is shown from. */
export function useUploadAvatar(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (image: File) =>
      ok(
        api.POST('/orgs/{orgname}/avatar/', {
          params: { path: { orgname: org } },
          body: {},
          bodySerializer: () => {
            const form = new FormData();
            form.append('avatar', image, image.name);
            return form;
          },
        }),
      ),
    onSuccess: (url) => {
      client.setQueryData(orgKeys.avatar(org), url);
      return client.invalidateQueries({ queryKey: orgKeys.org(org), exact: true });
    },
  });
}

/** Back to the generated image (`delete:avatar`); answers its URL. */
export function useDeleteAvatar(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.POST('/orgs/{orgname}/avatar/delete', { params: { path: { orgname: org } } })),
    onSuccess: (url) => {
      client.setQueryData(orgKeys.avatar(org), url);
      return client.invalidateQueries({ queryKey: orgKeys.org(org), exact: true });
    },
  });
}

/**
 * Deletes the organization (`delete:org`: its last owner, or a site admin) with its teams, roles and service
 * accounts. Nothing of it is asked again: its keys are dropped, and the lists that named it refresh.
 */
export function useDeleteOrg(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.DELETE('/orgs/{orgname}', { params: { path: { orgname: org } } })),
    onSuccess: () => {
      client.removeQueries({ queryKey: orgKeys.org(org) });
      return Promise.all([client.invalidateQueries({ queryKey: ['user', 'orgs'] }), client.invalidateQueries({ queryKey: ['admin', 'orgs'] })]);
    },
  });
}

/** Membership decides what the caller and others may do: every change of it refreshes the organization's screens. */
const membershipChanged = (client: ReturnType<typeof useQueryClient>, org: string) =>
  client.invalidateQueries({ queryKey: orgKeys.org(org) });

export function useSetMemberVisibility(org: string, me: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ user, makePublic }: { user: User; makePublic: boolean }) => {
      // Members change their own visibility through public_members (the spec's route); an administrator changes
      // another member's with the member action (`admin:org`), which public_members refuses (403).
      if (user.id === me) {
        const path = { orgname: org, username: user.login };
        await ok(
          makePublic
            ? api.PUT('/orgs/{orgname}/public_members/{username}', { params: { path } })
            : api.DELETE('/orgs/{orgname}/public_members/{username}', { params: { path } }),
        );
      } else {
        const params = { path: { orgname: org }, query: { uid: user.id } };
        await ok(
          makePublic
            ? api.POST('/orgs/{orgname}/members/action/public', { params })
            : api.POST('/orgs/{orgname}/members/action/private', { params }),
        );
      }
    },
    onSuccess: () => client.invalidateQueries({ queryKey: orgKeys.members(org) }),
  });
}

export function useRemoveMember(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (username: string) =>
      ok(api.DELETE('/orgs/{orgname}/members/{username}', { params: { path: { orgname: org, username } } })),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useAddTeamMember(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ teamid, username, connect }: { teamid: number; username: string; connect?: boolean }) =>
      ok(
        api.PUT('/teams/{teamid}/members/{username}', {
          params: { path: { teamid, username }, query: connect ? { autoConnectClusters: 'true' } : {} },
        }),
      ),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useRemoveTeamMember(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ teamid, username }: { teamid: number; username: string }) =>
      ok(api.DELETE('/teams/{teamid}/members/{username}', { params: { path: { teamid, username } } })),
    onSuccess: () => membershipChanged(client, org),
  });
}

type TeamBody = ReturnType<typeof teamBody>;

/** Teams carry roles: creating, editing or deleting one changes the teams, the roles' teams and who holds what. */
export function useCreateTeam(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: TeamBody) => ok(api.POST('/orgs/{orgname}/teams', { params: { path: { orgname: org } }, body })),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useEditTeam(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ teamid, body }: { teamid: number; body: TeamBody }) =>
      ok(api.PATCH('/teams/{teamid}', { params: { path: { teamid } }, body })),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useDeleteTeam(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (teamid: number) => ok(api.DELETE('/teams/{teamid}', { params: { path: { teamid } } })),
    onSuccess: () => membershipChanged(client, org),
  });
}

type RoleBody = ReturnType<typeof roleBody>;

export function useCreateRole(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: RoleBody) => ok(api.POST('/authz/roles', { params: { query: { org } }, body })),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useEditRole(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: RoleBody }) =>
      ok(api.PUT('/authz/roles/{id}', { params: { path: { id }, query: { org } }, body })),
    onSuccess: () => membershipChanged(client, org),
  });
}

/** Deletes a custom role with every grant it carried. */
export function useDeleteRole(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/authz/roles/{id}', { params: { path: { id }, query: { org } } })),
    onSuccess: () => membershipChanged(client, org),
  });
}

export function useRevokeBusToken(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => ok(api.POST('/orgs/{orgname}/tokens/bus-tokens/{id}/revoke', { params: { path: { orgname: org, id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: orgKeys.busTokens(org) }),
  });
}

export function useDeleteAccessToken(org: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/orgs/{orgname}/tokens/access-tokens/{id}', { params: { path: { orgname: org, id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: orgKeys.accessTokens(org) }),
  });
}
