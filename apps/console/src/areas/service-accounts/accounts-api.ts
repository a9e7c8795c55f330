import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';

/**
 * Service accounts are reached through one of two sides of the API (docs/service-accounts.md): an organization's
 * (`/orgs/{orgname}/service-accounts...`, for its owners and site admins), whose accounts hold its custom roles, and
 * the site's (`/admin/service-accounts...`, for site admins), whose accounts may be site admins instead. The screens
 * are the same on both sides; only the routes differ, so each side is this one interface and the screens take it.
 */

export type ServiceAccount = Schema<'ServiceAccount'>;
export type Token = Schema<'ServiceAccountToken'>;
export type NewToken = Schema<'CreatedServiceAccountToken'>;
export type Role = Schema<'RoleResponse'>;

/** What the forms send. Each side sends what it takes (its bodies are strict): `roles` or `site_admin`. */
export interface AccountFields {
  name?: string;
  description?: string;
  kubernetes_subjects?: string[];
  active?: boolean;
  roles?: number[];
  site_admin?: boolean;
}

export interface AccountRoutes {
  /** Where the screens of this side live, e.g. `/orgs/demo/service-accounts`. */
  base: string;
  /** The organization whose accounts these are; null on the site's side. */
  org: string | null;
  /** The query key every answer of this side is kept under (a change invalidates it all). */
  key: readonly unknown[];
  /** The key of the roles the accounts may hold: the organization's own, shared with its roles screens. */
  rolesKey: readonly unknown[];
  list(): Promise<ServiceAccount[]>;
  get(id: number): Promise<ServiceAccount>;
  create(fields: AccountFields & { name: string }): Promise<ServiceAccount>;
  /** Changes the fields given; lists are replaced whole. */
  edit(id: number, fields: AccountFields): Promise<ServiceAccount>;
  remove(id: number): Promise<void>;
  tokens(id: number): Promise<Token[]>;
  /** A new token: its secret `sha1` is in this answer only. */
  createToken(id: number, name: string): Promise<NewToken>;
  revokeToken(id: number, tokenId: number): Promise<void>;
  /** The custom roles the accounts may hold: the organization's; none on the site's side. */
  roles(): Promise<Role[]>;
}

/** The fields both sides take. */
const common = (f: AccountFields) => ({ description: f.description, kubernetes_subjects: f.kubernetes_subjects, active: f.active });

/** An organization's side: for its owners and site admins. */
export function orgRoutes(org: string): AccountRoutes {
  const inOrg = { path: { orgname: org } };
  const one = (id: number) => ({ path: { orgname: org, id } });
  return {
    base: `/orgs/${encodeURIComponent(org)}/service-accounts`,
    org,
    key: ['orgs', org, 'service-accounts'],
    rolesKey: ['orgs', org, 'roles'],
    list: () => ok(api.GET('/orgs/{orgname}/service-accounts', { params: inOrg })),
    get: (id) => ok(api.GET('/orgs/{orgname}/service-accounts/{id}', { params: one(id) })),
    create: (f) =>
      ok(api.POST('/orgs/{orgname}/service-accounts', { params: inOrg, body: { ...common(f), name: f.name, roles: f.roles } })),
    edit: (id, f) =>
      ok(api.PATCH('/orgs/{orgname}/service-accounts/{id}', { params: one(id), body: { ...common(f), name: f.name, roles: f.roles } })),
    remove: async (id) => {
      await ok(api.DELETE('/orgs/{orgname}/service-accounts/{id}', { params: one(id) }));
    },
    tokens: (id) => ok(api.GET('/orgs/{orgname}/service-accounts/{id}/tokens', { params: one(id) })),
    createToken: (id, name) => ok(api.POST('/orgs/{orgname}/service-accounts/{id}/tokens', { params: one(id), body: { name } })),
    revokeToken: async (id, tokenId) => {
      await ok(api.DELETE('/orgs/{orgname}/service-accounts/{id}/tokens/{tokenId}', { params: { path: { orgname: org, id, tokenId } } }));
    },
    roles: () => ok(api.GET('/authz/roles', { params: { query: { org } } })),
  };
}

/** The site's side: for site admins. */
export const siteRoutes: AccountRoutes = {
  base: '/admin/service-accounts',
  org: null,
  key: ['admin', 'service-accounts'],
  rolesKey: ['admin', 'service-accounts', 'roles'],
  list: () => ok(api.GET('/admin/service-accounts')),
  get: (id) => ok(api.GET('/admin/service-accounts/{id}', { params: { path: { id } } })),
  create: (f) => ok(api.POST('/admin/service-accounts', { body: { ...common(f), name: f.name, site_admin: f.site_admin } })),
  edit: (id, f) =>
    ok(
      api.PATCH('/admin/service-accounts/{id}', {
        params: { path: { id } },
        body: { ...common(f), name: f.name, site_admin: f.site_admin },
      }),
    ),
  remove: async (id) => {
    await ok(api.DELETE('/admin/service-accounts/{id}', { params: { path: { id } } }));
  },
  tokens: (id) => ok(api.GET('/admin/service-accounts/{id}/tokens', { params: { path: { id } } })),
  createToken: (id, name) => ok(api.POST('/admin/service-accounts/{id}/tokens', { params: { path: { id } }, body: { name } })),
  revokeToken: async (id, tokenId) => {
    await ok(api.DELETE('/admin/service-accounts/{id}/tokens/{tokenId}', { params: { path: { id, tokenId } } }));
  },
  roles: () => Promise.resolve([]),
};

// Queries and changes of either side. A change invalidates everything of its side: the list shows what a page edits.

export const useAccounts = (routes: AccountRoutes) => useQuery({ queryKey: [...routes.key, 'list'], queryFn: () => routes.list() });
export const useAccount = (routes: AccountRoutes, id: number) => useQuery({ queryKey: [...routes.key, id], queryFn: () => routes.get(id) });
export const useAccountTokens = (routes: AccountRoutes, id: number) =>
  useQuery({ queryKey: [...routes.key, id, 'tokens'], queryFn: () => routes.tokens(id) });
export const useAccountRoles = (routes: AccountRoutes) => useQuery({ queryKey: routes.rolesKey, queryFn: () => routes.roles() });

function useAccountChange<A, R>(routes: AccountRoutes, change: (args: A) => Promise<R>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSuccess: () => client.invalidateQueries({ queryKey: routes.key }) });
}

export const useCreateAccount = (routes: AccountRoutes) =>
  useAccountChange(routes, (f: AccountFields & { name: string }) => routes.create(f));
export const useEditAccount = (routes: AccountRoutes) =>
  useAccountChange(routes, ({ id, fields }: { id: number; fields: AccountFields }) => routes.edit(id, fields));
export const useDeleteAccount = (routes: AccountRoutes) => useAccountChange(routes, (id: number) => routes.remove(id));
export const useCreateToken = (routes: AccountRoutes) =>
  useAccountChange(routes, ({ id, name }: { id: number; name: string }) => routes.createToken(id, name));
export const useRevokeToken = (routes: AccountRoutes) =>
  useAccountChange(routes, ({ id, tokenId }: { id: number; tokenId: number }) => routes.revokeToken(id, tokenId));
