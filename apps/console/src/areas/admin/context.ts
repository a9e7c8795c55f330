import { ApiError } from '../../api/client';

/**
 * The organization the site-admin routes are called in the context of. The dashboard and settings routes require an
 * `org` query although they are site-wide, and branding may only be changed through the administrative
 * organization (`PLATFORM_ADMIN_ORG`, by default `platform-admin`, created at the first start and owned by the first
 * site admin; docs/site-settings.md). Site admins may name it whether or not they are its members.
 */
export const ADMIN_ORG = 'platform-admin';

/** The `org` query of every call this area makes. */
export const inAdminOrg = { org: ADMIN_ORG } as const;

/**
 * Whether an answer says the route does not exist on this deployment: gated rows (billing dashboard, marketplace)
 * are not registered there and answer 404 like any unknown route of /api/v1.
 */
export function isGatedOff(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/** A number of hours or a percentage, rounded for reading only (the API does not round). */
export const decimal = (value: number, digits = 2) => value.toLocaleString(undefined, { maximumFractionDigits: digits });

/** A `datetime-local` value (the browser's local time) as RFC 3339 in UTC, or undefined when it is not a date. */
export function rfc3339(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
