import { z } from 'zod';
import type { orgsTeamsV1 } from '@platform/proto';
import { rfc3339 } from '../../presenters';


const dateTime = z.string().meta({ format: 'date-time' });

/** The spec's User (section 2.2). */
export const UserJson = z
  .object({
    id: z.number().int(),
    login: z.string(),
    username: z.string(),
    full_name: z.string(),
    email: z.string(),
    avatar_url: z.string(),
    language: z.string(),
    is_admin: z.boolean(),
    last_login: dateTime,
    created: dateTime,
    type: z.number().int(),
    active: z.boolean(),
    prohibit_login: z.boolean(),
    location: z.string(),
    website: z.string(),
    description: z.string(),
    orgAdmin: z.boolean(),
    clientOrgUser: z.boolean(),
  })
  .meta({ id: 'User' });

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

/** A personal access token; `sha1` is the secret, shown only when created (empty in lists). */
export const AccessTokenJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sha1: z.string(),
    token_last_eight: z.string(),
    scope: z.string().optional().meta({ description: 'The one use a scoped token is limited to (`license-proxy`); absent when unrestricted' }),
  })
  .meta({ id: 'AccessToken' });
