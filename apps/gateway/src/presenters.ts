import type { orgsTeamsV1 } from '@platform/proto';

/** Unix seconds as RFC3339 without fractional seconds, as the spec's date-times are written. */
export const rfc3339 = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.000Z$/, 'Z');

/** The spec's User (section 2.2) from the identity message. */
export function userJson(u: orgsTeamsV1.User) {
  return {
    id: u.id,
    login: u.login,
    username: u.login,
    full_name: u.fullName,
    email: u.email,
    avatar_url: u.avatarUrl,
    language: u.language,
    is_admin: u.isAdmin,
    last_login: rfc3339(u.lastLoginUnix),
    created: rfc3339(u.createdUnix),
    type: u.type,
    active: u.active,
    prohibit_login: u.prohibitLogin,
    location: u.location,
    website: u.website,
    description: u.description,
    orgAdmin: u.orgAdmin,
    clientOrgUser: u.clientOrgUser,
  };
}
