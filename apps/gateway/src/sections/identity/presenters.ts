import { z } from 'zod';
import { userAsSeenBy, type orgsTeamsOrgsV1, type orgsTeamsV1, type UserViewer } from '@platform/proto';
import { GITEA_ZERO_TIME, giteaTime } from '../../gitea';
import { rfc3339 } from '../../presenters';

/** A date-time as Gitea's clients read one: always a string, Gitea's zero time for what never happened (docs/gitea-dialect.md). */
export const dateTime = z.string().meta({ format: 'date-time' });

/** The description of a field only the user itself and site admins are answered (userAsSeenBy); `zero`: what others get. */
const ownOrAdmin = (what: string, zero: string) =>
  `${what}. Filled for the user itself and site admins only; anyone else gets ${zero}, Gitea's zero value`;

/** The spec's User. */
export const UserJson = z
  .object({
    id: z.number().int(),
    login: z.string(),
    username: z.string(),
    full_name: z.string(),
    email: z.string().meta({ description: 'The e-mail address. Filled for the user itself and site admins only; anyone else gets `""`' }),
    avatar_url: z.string(),
    language: z.string().meta({ description: ownOrAdmin('The language the user chose', '`""`') }),
    is_admin: z.boolean().meta({ description: ownOrAdmin('Whether the user is a site admin', '`false`') }),
    last_login: dateTime.meta({
      description: ownOrAdmin(`When the user last signed in, Gitea's zero time ${GITEA_ZERO_TIME} when never`, `${GITEA_ZERO_TIME}`),
    }),
    created: dateTime,
    type: z.number().int(),
    active: z.boolean().meta({ description: ownOrAdmin('Whether the account may sign in (not deactivated)', '`false`') }),
    prohibit_login: z.boolean().meta({ description: ownOrAdmin('Whether the account is prohibited from signing in', '`false`') }),
    location: z.string(),
    website: z.string(),
    description: z.string(),
    orgAdmin: z.boolean(),
    clientOrgUser: z.boolean(),
    login_name: z.string().meta({ description: ownOrAdmin('The name the user signs in with at its authentication source', '`""`') }),
    source_id: z.number().int().meta({ description: 'The authentication source: 0, local, for every user here and for every viewer' }),
    visibility: z.enum(['public', 'limited', 'private']),
    restricted: z.boolean(),
    followers_count: z.number().int(),
    following_count: z.number().int(),
    starred_repos_count: z.number().int(),
    email_verified: z.boolean().optional().meta({
      description:
        'Whether the address is verified (its mailed link followed, or set by a site admin); present only where `email` is shown to the caller',
    }),
    sign_in_locked_until: dateTime.optional().meta({
      description: 'Site admins only: until when Basic sign-in is refused after too many wrong passwords; absent when not locked',
    }),
  })
  .meta({ id: 'User' });

/**
 * A user as a viewer sees it, wherever users are presented (search, a user, organization and team members, the admin
 * lists): what of it the viewer may see is the one rule the gRPC answers follow too (userAsSeenBy, libs/proto: the
 * e-mail address and the account's flags only for the user itself and site admins; docs/authentication.md).
 */
export function userJsonFor(u: orgsTeamsV1.User, viewer: UserViewer | undefined): z.input<typeof UserJson> {
  return userJson(userAsSeenBy(u, viewer));
}

export function userJson(u: orgsTeamsV1.User): z.input<typeof UserJson> {
  return {
    id: u.id,
    login: u.login,
    username: u.login,
    full_name: u.fullName,
    email: u.email,
    avatar_url: u.avatarUrl,
    language: u.language,
    is_admin: u.isAdmin,
    last_login: giteaTime(u.lastLoginUnix),
    created: giteaTime(u.createdUnix),
    type: u.type,
    active: u.active,
    prohibit_login: u.prohibitLogin,
    location: u.location,
    website: u.website,
    description: u.description,
    orgAdmin: u.orgAdmin,
    clientOrgUser: u.clientOrgUser,
    login_name: u.loginName,
    source_id: 0,
    visibility: 'public',
    restricted: false,
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
    // Only beside the address itself: it says something about the address (userAsSeenBy clears both together).
    ...(u.email && u.emailVerified !== undefined ? { email_verified: u.emailVerified } : {}),
    ...(u.signInLockedUntilUnix ? { sign_in_locked_until: rfc3339(u.signInLockedUntilUnix) } : {}),
  };
}

/** Gitea's UserSettings: what a user sets of its own account. */
export const UserSettingsJson = z
  .object({
    full_name: z.string(),
    website: z.string(),
    description: z.string(),
    location: z.string(),
    language: z.string(),
    theme: z.string(),
    diff_view_style: z.string(),
    hide_email: z.boolean(),
    hide_activity: z.boolean(),
  })
  .meta({ id: 'UserSettings' });

export function userSettingsJson(u: orgsTeamsV1.User): z.input<typeof UserSettingsJson> {
  return {
    full_name: u.fullName,
    website: u.website,
    description: u.description,
    location: u.location,
    language: u.language,
    theme: u.theme,
    diff_view_style: u.diffViewStyle,
    hide_email: u.hideEmail,
    hide_activity: u.hideActivity,
  };
}

/** A personal access token; `sha1` is the secret, shown only when created (empty in lists). */
export const AccessTokenJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sha1: z.string(),
    token_last_eight: z.string(),
    scope: z.string().optional().meta({ description: 'The one use a token is limited to (`license-proxy`); absent when unrestricted' }),
    scopes: z.array(z.string()).meta({ description: 'Its Gitea scopes (`all`, `read:organization`, `write:user`, ...)' }),
    created_at: dateTime.optional().meta({ description: 'When it was made (lists only)' }),
    last_used_at: dateTime
      .optional()
      .meta({ description: `When it was last used (to the minute); Gitea's zero time ${GITEA_ZERO_TIME} when never (lists only)` }),
  })
  .meta({ id: 'AccessToken' });

// An organization is an account, as in Gitea: presented here with users, so that the organizations' routes and the
// users' (a user's organizations) both take it from identity, and neither folder imports the other.
/** The spec's Organization; `orgType` is 0 public, 1 limited, 2 private. */
export const OrganizationJson = z
  .object({
    id: z.number().int(),
    /** The slug, as Gitea names it; `username` is the same. */
    name: z.string(),
    username: z.string(),
    full_name: z.string(),
    email: z.string(),
    avatar_url: z.string(),
    description: z.string(),
    website: z.string(),
    location: z.string(),
    managerManagementClusterEndPoint: z.string(),
    visibility: z.enum(['', 'public', 'limited', 'private']),
    orgType: z.number().int(),
  })
  .meta({ id: 'Organization' });

export function orgJson(o: orgsTeamsOrgsV1.Organization): z.input<typeof OrganizationJson> {
  return {
    id: o.id,
    name: o.username,
    username: o.username,
    full_name: o.fullName,
    email: o.email,
    avatar_url: o.avatarUrl,
    description: o.description,
    website: o.website,
    location: o.location,
    managerManagementClusterEndPoint: o.managerEndpoint,
    visibility: o.visibility as z.input<typeof OrganizationJson>['visibility'],
    orgType: o.orgType,
  };
}
