import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, ok, type Schema } from '../../api/client';
import type { paths } from '../../api/gen/schema';
import { pageOf, type Page } from '../orgs/paging';

// User administration, every organization and the audit trail, for site admins (docs/authentication.md, "Managing
// users"; docs/audit.md): the query keys the screens read under, the fetchers, and the changes with what each one
// makes stale.

export type User = Schema<'User'>;
export type Organization = Schema<'Organization'>;
export type AuditEvent = Schema<'AuditEvent'>;
/** Gitea's EditUserOption: the fields sent change, the others stay. */
export type EditUser = paths['/admin/users/{username}']['patch']['requestBody']['content']['application/json'];
/** Gitea's CreateUserOption. */
export type NewUser = paths['/admin/users']['post']['requestBody']['content']['application/json'];

/** The API's page size ceiling for these lists (Gitea's: at most 50). */
export const MAX_LIMIT = 50;

export interface UserQuery {
  q: string;
  page: number;
  limit: number;
}

export interface AuditFilters {
  actor?: string;
  action?: string;
  target?: string;
  /** RFC 3339. */
  since?: string;
  until?: string;
}

/** The keys: everything under `['admin', ...]`, so a change invalidates exactly the lists it touches. */
export const adminKeys = {
  users: ['admin', 'users'] as const,
  userPage: (query: UserQuery) => ['admin', 'users', query] as const,
  orgs: ['admin', 'orgs'] as const,
  orgPage: (page: number, limit: number) => ['admin', 'orgs', { page, limit }] as const,
  audit: ['admin', 'audit-events'] as const,
  auditPage: (filters: AuditFilters, page: number, limit: number) => ['admin', 'audit-events', { ...filters, page, limit }] as const,
};

/** One page of users; `q` matches login, full name and email. */
export function fetchUsers({ q, page, limit }: UserQuery): Promise<Page<User>> {
  return pageOf(api.GET('/admin/users', { params: { query: { page, limit, ...(q && { q }) } } }));
}

/** One page of every organization, private ones too. */
export function fetchAllOrgs(page: number, limit: number): Promise<Page<Organization>> {
  return pageOf(api.GET('/admin/orgs', { params: { query: { page, limit } } }));
}

/** One page of the audit trail, newest first; only the filters given are sent. */
export function fetchAuditEvents(filters: AuditFilters, page: number, limit: number): Promise<Page<AuditEvent>> {
  const given = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  return pageOf(api.GET('/admin/audit-events', { params: { query: { ...given, page, limit } } }));
}

/** Every change to a user may show in the users list and the audit trail. */
function useInvalidate() {
  const client = useQueryClient();
  return (...keys: readonly (readonly string[])[]) => Promise.all([adminKeys.users, adminKeys.audit, ...keys].map((queryKey) => client.invalidateQueries({ queryKey })));
}

export function useCreateUser() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (body: NewUser) => ok(api.POST('/admin/users', { body })),
    onSuccess: () => invalidate(),
  });
}

export function useEditUser() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: ({ username, body }: { username: string; body: EditUser }) => ok(api.PATCH('/admin/users/{username}', { params: { path: { username } }, body })),
    onSuccess: () => invalidate(),
  });
}

export function useDeleteUser() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ username, purge }: { username: string; purge: boolean }) => {
      await ok(api.DELETE('/admin/users/{username}', { params: { path: { username }, query: purge ? { purge: 'true' } : {} } }));
    },
    // A purge deletes organizations too.
    onSuccess: (_, { purge }) => invalidate(...(purge ? [adminKeys.orgs] : [])),
  });
}

export function useLiftLockout() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async (username: string) => {
      await ok(api.DELETE('/admin/users/{username}/lockout', { params: { path: { username } } }));
    },
    onSuccess: () => invalidate(),
  });
}

/** Mails a user a new link verifying its address (the old link stops working). */
export function useResendVerification() {
  return useMutation({
    mutationFn: async (username: string) => {
      await ok(api.POST('/admin/users/{username}/verification-mail', { params: { path: { username } } }));
    },
  });
}

/** Ends every access token and console session of a user at once (someone who left, a stolen device). */
export function useRevokeCredentials() {
  return useMutation({
    mutationFn: (username: string) => ok(api.DELETE('/admin/users/{username}/credentials', { params: { path: { username } } })),
  });
}

/** Removes a user's second factor (a lost phone); the user may enrol again. */
export function useResetTwoFactor() {
  return useMutation({
    mutationFn: async (username: string) => {
      await ok(api.DELETE('/admin/users/{username}/two-factor', { params: { path: { username } } }));
    },
  });
}

/**
 * The organizations a refused deletion names as the user's alone ("user bob is the last owner of acme, beta: ..."),
 * which `purge` would delete with it; undefined for any other refusal. The administrative organization is never
 * deleted that way, so that answer offers no purge.
 */
export function lastOwnerOf(error: unknown): string[] | undefined {
  if (!(error instanceof ApiError) || error.status !== 422) return undefined;
  const named = /is the last owner of (?!the administrative organization)(.+?): give each another owner/.exec(error.message);
  return named?.[1].split(', ').filter(Boolean);
}

/** A 422's field errors by field name (`body.email` and `email` both as `email`). */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || error.status !== 422 || !Array.isArray(error.errors)) return {};
  const found: Record<string, string> = {};
  for (const e of error.errors as { field?: unknown; description?: unknown }[]) {
    if (typeof e.field !== 'string' || typeof e.description !== 'string') continue;
    const field = e.field.replace(/^body\./, '');
    found[field] ??= e.description;
  }
  return found;
}
